"""MindSpore runner: the shared BERT as Cells holding the npz Parameters, nn.Adam, PyNative or graph (ms.jit).

Data-parallel under msrun: ``communication.init()``, DATA_PARALLEL context and a DistributedGradReducer
(AllReduce mean) on the gradients before Adam.
"""

from __future__ import annotations

import math
import os

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from . import bert
from .common import Runner, Unsupported, main

DTYPES = {"fp32": ms.float32, "fp16": ms.float16, "bf16": ms.bfloat16}
GELU_C = math.sqrt(2.0 / math.pi)


def dense(x, w, b, dt):
    """x @ w + b with the matmul in ``dt`` (mixed precision by hand) and the result in fp32."""
    return ops.matmul(x.astype(dt), w.astype(dt)).astype(ms.float32) + b


def norm(x, g, b):
    mean = x.mean(-1, keep_dims=True)
    var = ((x - mean) ** 2).mean(-1, keep_dims=True)
    return (x - mean) / ops.sqrt(var + bert.LN_EPS) * g + b


class Holder(nn.Cell):
    """Parameters named ``<prefix>.<name>`` in the npz become attributes ``<name>`` with dots as underscores."""

    def __init__(self, weights: dict, prefix: str):
        super().__init__()
        for name, value in weights.items():
            if name.startswith(prefix):
                attr = name[len(prefix) :].replace(".", "_")
                setattr(self, attr, Parameter(Tensor(value), name=name))


class Layer(Holder):
    def __init__(self, weights, prefix, s: bert.BertSize, dt):
        super().__init__(weights, prefix)
        self.heads, self.hd, self.hidden, self.dt = s.heads, s.hidden // s.heads, s.hidden, dt
        self.scale = 1.0 / math.sqrt(self.hd)

    def construct(self, x):
        bsz, seq = x.shape[0], x.shape[1]
        dt = self.dt
        q = dense(x, self.q_w, self.q_b, dt).reshape(bsz, seq, self.heads, self.hd).transpose(0, 2, 1, 3)
        k = dense(x, self.k_w, self.k_b, dt).reshape(bsz, seq, self.heads, self.hd).transpose(0, 2, 1, 3)
        v = dense(x, self.v_w, self.v_b, dt).reshape(bsz, seq, self.heads, self.hd).transpose(0, 2, 1, 3)
        scores = ops.matmul(q.astype(dt), k.astype(dt).transpose(0, 1, 3, 2)).astype(ms.float32) * self.scale
        probs = ops.softmax(scores, -1)
        ctx = ops.matmul(probs.astype(dt), v.astype(dt)).astype(ms.float32)
        ctx = ctx.transpose(0, 2, 1, 3).reshape(bsz, seq, self.hidden)
        x = norm(x + dense(ctx, self.o_w, self.o_b, dt), self.ln1_g, self.ln1_b)
        h = dense(x, self.ff1_w, self.ff1_b, dt)
        h = 0.5 * h * (1.0 + ops.tanh(GELU_C * (h + 0.044715 * h * h * h)))
        return norm(x + dense(h, self.ff2_w, self.ff2_b, dt), self.ln2_g, self.ln2_b)


class Bert(Holder):
    def __init__(self, weights, s: bert.BertSize, dt):
        super().__init__({k: v for k, v in weights.items() if not k.startswith("l")}, "")
        self.layers = nn.CellList([Layer(weights, f"l{i}.", s, dt) for i in range(s.layers)])
        self.dt = dt

    def construct(self, ids):
        seq = ids.shape[1]
        x = ops.gather(self.emb_word, ids, 0) + self.emb_pos[:seq] + self.emb_type[0]
        x = norm(x, self.emb_ln_g, self.emb_ln_b)
        for layer in self.layers:
            x = layer(x)
        pooled = ops.tanh(dense(x[:, 0], self.pool_w, self.pool_b, self.dt))
        return dense(pooled, self.cls_w, self.cls_b, self.dt)


TARGETS = {"cpu": "CPU", "gpu": "GPU", "npu": "Ascend"}


def set_target(device: str) -> None:
    target = TARGETS[device]
    if hasattr(ms, "set_device"):
        ms.set_device(target)
    else:
        ms.set_context(device_target=target)


class MindSporeRunner(Runner):
    name = "mindspore"
    reducer = None

    def setup_distributed(self, cfg) -> None:
        if cfg.world_size == 1:
            return
        if "MS_ROLE" not in os.environ:
            raise Unsupported("a data-parallel MindSpore run needs msrun (its MS_ROLE / MS_SCHED_* environment)")
        from mindspore.communication import get_group_size, get_rank, init

        set_target(cfg.device)
        init()
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        self.rank, self.world = get_rank(), get_group_size()

    def info(self) -> dict:
        return {
            "framework_version": ms.__version__,
            "cuda": None,  # MindSpore reports no build CUDA version through its API
            "cudnn": None,
            "device_name": None,
            "device_target": ms.get_context("device_target"),
        }

    def build(self, cfg, weights, data) -> None:
        if cfg.fused:
            raise Unsupported("this runner has no fused Adam for MindSpore")
        if self.world == 1:
            set_target(cfg.device)
        ms.set_seed(cfg.seed)
        self.cfg, self.size = cfg, bert.size(cfg.size)
        self.net = Bert(weights, self.size, DTYPES[cfg.precision])
        self.opt = nn.Adam(self.net.trainable_params(), learning_rate=cfg.lr)
        n, accum = len(data), cfg.grad_accum
        self.data = [
            (
                Tensor(np.stack([data[(j * accum + a) % n][0] for a in range(accum)])),
                Tensor(np.stack([data[(j * accum + a) % n][1] for a in range(accum)])),
            )
            for j in range(n)
        ]
        net, opt = self.net, self.opt

        def loss_fn(ids, labels):
            return ops.cross_entropy(net(ids), labels) / accum

        grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)
        reducer = nn.DistributedGradReducer(opt.parameters, mean=True, degree=self.world) if self.world > 1 else None

        def train_step(ids, labels):
            loss, grads = grad_fn(ids[0], labels[0])
            for a in range(1, accum):
                more_loss, more = grad_fn(ids[a], labels[a])
                loss = loss + more_loss
                grads = tuple(g + m for g, m in zip(grads, more))  # noqa: B905 - graph mode has no strict=
            if reducer is not None:
                grads = reducer(grads)
            opt(grads)
            return loss

        self.train_step = ms.jit(train_step) if cfg.compile_mode == "graph" else train_step
        self.i = 0

    def step(self):
        ids, labels = self.data[self.i % len(self.data)]
        self.i += 1
        return self.train_step(ids, labels)

    def value(self, handle) -> float:
        return float(handle.asnumpy())

    def logits(self, ids: np.ndarray) -> np.ndarray:
        return self.net(Tensor(ids)).asnumpy()

    def close(self) -> None:
        if self.world > 1:  # tell the scheduler this worker is done, or it waits for a heartbeat timeout
            from mindspore.communication import release

            release()

    def peak_memory_mib(self) -> float | None:
        if self.cfg.device == "cpu":
            return None
        try:
            return ms.runtime.max_memory_allocated() / 2**20
        except (AttributeError, RuntimeError):
            return None

    def allocate_too_much(self) -> None:
        ops.zeros((1 << 25, 1 << 25), ms.float32).asnumpy()


def scheduler() -> int:
    """msrun starts the script once more as the cluster's scheduler: it only joins, then waits for the end."""
    from mindspore.communication import init

    init()
    return 0


if __name__ == "__main__":
    raise SystemExit(scheduler() if os.environ.get("MS_ROLE") == "MS_SCHED" else main(MindSporeRunner))
