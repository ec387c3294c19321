"""The benchmark model, framework-free: BERT sizes, initial weights, synthetic data, reference forward.

Every runner builds the same network from the same ``.npz`` of initial weights:

    embeddings (word + position + token type 0) -> LayerNorm
    L x [ self-attention (q, k, v, o) -> residual -> LayerNorm -> dense-GELU-dense -> residual -> LayerNorm ]
    pooler: tanh(dense(h[:, 0])) -> classifier dense -> logits -> softmax cross-entropy

Dense weights are stored ``(in, out)`` so ``y = x @ w + b`` in every framework. GELU is the
tanh approximation written out by hand in each runner (frameworks differ in their built-in
default), dropout is off and there is no padding mask (synthetic full-length sequences), so the
four frameworks compute the same function and :func:`forward` here is the reference for parity.
Only numpy and the standard library are imported: this module runs in every environment.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

LN_EPS = 1e-12


@dataclass(frozen=True)
class BertSize:
    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    num_labels: int = 2

    def as_dict(self) -> dict:
        return asdict(self)


SIZES = {
    "tiny": BertSize("tiny", layers=2, hidden=128, heads=2, ffn=512, vocab=1024, max_positions=512),
    "base": BertSize("base", layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_positions=512),
    "large": BertSize("large", layers=24, hidden=1024, heads=16, ffn=4096, vocab=30522, max_positions=512),
}


def size(name: str) -> BertSize:
    if name not in SIZES:
        raise KeyError(f"unknown BERT size {name!r}; valid sizes: {', '.join(SIZES)}")
    return SIZES[name]


def param_shapes(s: BertSize) -> dict[str, tuple[int, ...]]:
    """Every parameter name and shape, in a fixed order (the order runners register them in)."""
    h, f = s.hidden, s.ffn
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (s.vocab, h),
        "emb.pos": (s.max_positions, h),
        "emb.type": (2, h),
        "emb.ln.g": (h,),
        "emb.ln.b": (h,),
    }
    for i in range(s.layers):
        for name in ("q", "k", "v", "o"):
            shapes[f"l{i}.{name}.w"] = (h, h)
            shapes[f"l{i}.{name}.b"] = (h,)
        shapes[f"l{i}.ln1.g"] = (h,)
        shapes[f"l{i}.ln1.b"] = (h,)
        shapes[f"l{i}.ff1.w"] = (h, f)
        shapes[f"l{i}.ff1.b"] = (f,)
        shapes[f"l{i}.ff2.w"] = (f, h)
        shapes[f"l{i}.ff2.b"] = (h,)
        shapes[f"l{i}.ln2.g"] = (h,)
        shapes[f"l{i}.ln2.b"] = (h,)
    shapes["pool.w"] = (h, h)
    shapes["pool.b"] = (h,)
    shapes["cls.w"] = (h, s.num_labels)
    shapes["cls.b"] = (s.num_labels,)
    return shapes


def make_weights(s: BertSize, seed: int) -> dict[str, np.ndarray]:
    """BERT-style init: N(0, 0.02) clipped at 2 sigma for matrices, ones/zeros for LayerNorm, zero biases."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in param_shapes(s).items():
        if name.endswith(".g"):
            out[name] = np.ones(shape, np.float32)
        elif name.endswith(".b"):
            out[name] = np.zeros(shape, np.float32)
        else:
            out[name] = np.clip(rng.standard_normal(shape, dtype=np.float32) * 0.02, -0.04, 0.04)
    return out


def cache_dir() -> Path:
    return Path(os.environ.get("BENCHCAT_CACHE") or Path.home() / ".cache" / "benchcat")


def weights_file(s: BertSize, seed: int, directory: Path | None = None) -> Path:
    """The ``.npz`` of initial weights for (size, seed), generated once and reused."""
    directory = directory or cache_dir() / "weights"
    path = directory / f"bert-{s.name}-seed{seed}.npz"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.tmp-{os.getpid()}.npz")
        np.savez(tmp, **make_weights(s, seed))
        os.replace(tmp, path)
    return path


def load_weights(path: str | os.PathLike) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def batches(s: BertSize, batch_size: int, seq_len: int, seed: int, count: int = 4) -> list[tuple]:
    """``count`` distinct (token ids int32 (B, T), labels int32 (B,)) micro-batches; runners cycle through them."""
    if seq_len > s.max_positions:
        raise ValueError(f"seq_len {seq_len} exceeds the model's {s.max_positions} positions")
    rng = np.random.default_rng(seed + 1)
    return [
        (
            rng.integers(0, s.vocab, (batch_size, seq_len), dtype=np.int32),
            rng.integers(0, s.num_labels, (batch_size,), dtype=np.int32),
        )
        for _ in range(count)
    ]


# ---- the numpy reference forward (fp32): the yardstick of the parity test ----------------


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LN_EPS) * g + b


def forward(w: dict[str, np.ndarray], s: BertSize, ids: np.ndarray) -> np.ndarray:
    """Logits (B, num_labels) in float64 arithmetic for a tight reference."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    bsz, seq = ids.shape
    x = w["emb.word"][ids] + w["emb.pos"][:seq][None] + w["emb.type"][0]
    x = layer_norm(x, w["emb.ln.g"], w["emb.ln.b"])
    hd = s.hidden // s.heads
    for i in range(s.layers):
        p = f"l{i}."

        def heads(t):
            return t.reshape(bsz, seq, s.heads, hd).transpose(0, 2, 1, 3)

        q = heads(x @ w[p + "q.w"] + w[p + "q.b"])
        k = heads(x @ w[p + "k.w"] + w[p + "k.b"])
        v = heads(x @ w[p + "v.w"] + w[p + "v.b"])
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, s.hidden)
        x = layer_norm(x + ctx @ w[p + "o.w"] + w[p + "o.b"], w[p + "ln1.g"], w[p + "ln1.b"])
        ff = gelu(x @ w[p + "ff1.w"] + w[p + "ff1.b"]) @ w[p + "ff2.w"] + w[p + "ff2.b"]
        x = layer_norm(x + ff, w[p + "ln2.g"], w[p + "ln2.b"])
    pooled = np.tanh(x[:, 0] @ w["pool.w"] + w["pool.b"])
    return pooled @ w["cls.w"] + w["cls.b"]


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-logp[np.arange(len(labels)), labels].mean())
