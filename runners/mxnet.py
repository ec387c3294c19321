"""MXNet runner: the shared BERT as one Gluon HybridBlock over the npz Parameters, Adam, imperative or hybridize.

Data-parallel: KVStore ``dist_sync`` (ps-lite scheduler + server + one worker per rank, roles from the
``DMLC_*`` environment that runners.launch sets); Adam runs on the server over the summed gradients.
"""

from __future__ import annotations

import math
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

from . import bert
from .common import Runner, Unsupported, limit_address_space, main

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
GELU_C = math.sqrt(2.0 / math.pi)


def attr(name: str) -> str:
    return name.replace(".", "_")


class Bert(gluon.HybridBlock):
    """Logits; matmuls in ``dt`` (mixed precision by hand), LayerNorm/softmax/loss in fp32.

    Written with ``F`` ops and reshape codes (0 copy, -3 merge, -4 split) so the same code runs
    imperatively and as a hybridized symbol graph; ``seq`` is fixed per run.
    """

    def __init__(self, s: bert.BertSize, seq: int, dt: str, **kwargs):
        super().__init__(**kwargs)
        self.s, self.seq, self.dt = s, seq, dt
        self.names = [attr(n) for n in bert.param_shapes(s)]
        for name, shape in bert.param_shapes(s).items():
            setattr(self, attr(name), self.params.get(attr(name), shape=shape, init=mx.init.Zero()))

    def hybrid_forward(self, F, ids, **p):
        s, dt = self.s, self.dt
        hd = s.hidden // s.heads

        def dense(x, name):
            y = F.cast(F.dot(F.cast(x, dt), F.cast(p[name + "_w"], dt)), "float32")
            return F.broadcast_add(y, p[name + "_b"])

        def norm(x, name):
            mean = F.mean(x, axis=-1, keepdims=True)
            centred = F.broadcast_sub(x, mean)
            var = F.mean(F.square(centred), axis=-1, keepdims=True)
            y = F.broadcast_div(centred, F.sqrt(var + bert.LN_EPS))
            return F.broadcast_add(F.broadcast_mul(y, p[name + "_g"]), p[name + "_b"])

        pos = F.slice_axis(p["emb_pos"], axis=0, begin=0, end=self.seq)
        typ = F.slice_axis(p["emb_type"], axis=0, begin=0, end=1)
        x = F.broadcast_add(F.broadcast_add(F.take(p["emb_word"], ids), pos), typ)
        x = norm(x, "emb_ln")
        for i in range(s.layers):
            pre = f"l{i}_"

            def heads(t):  # (B, T, H) -> (B*heads, T, hd)
                t = F.transpose(F.reshape(t, shape=(0, 0, s.heads, hd)), axes=(0, 2, 1, 3))
                return F.cast(F.reshape(t, shape=(-3, 0, 0)), dt)

            q, k, v = (heads(dense(x, pre + n)) for n in "qkv")
            scores = F.cast(F.batch_dot(q, k, transpose_b=True), "float32") / math.sqrt(hd)
            ctx = F.cast(F.batch_dot(F.cast(F.softmax(scores, axis=-1), dt), v), "float32")
            ctx = F.transpose(F.reshape(ctx, shape=(-4, -1, s.heads, 0, 0)), axes=(0, 2, 1, 3))
            ctx = F.reshape(ctx, shape=(0, 0, -3))
            x = norm(x + dense(ctx, pre + "o"), pre + "ln1")
            h = dense(x, pre + "ff1")
            h = 0.5 * h * (1.0 + F.tanh(GELU_C * (h + 0.044715 * h * h * h)))
            x = norm(x + dense(h, pre + "ff2"), pre + "ln2")
        first = F.reshape(F.slice_axis(x, axis=1, begin=0, end=1), shape=(0, -1))
        pooled = F.tanh(dense(first, "pool"))
        return dense(pooled, "cls")


class LossNet(gluon.HybridBlock):
    def __init__(self, model: Bert, **kwargs):
        super().__init__(**kwargs)
        self.model = model

    def hybrid_forward(self, F, ids, labels):
        logp = F.log_softmax(self.model(ids), axis=-1)
        return -F.mean(F.pick(logp, labels, axis=-1))


class MXNetRunner(Runner):
    name = "mxnet"
    kv = None

    def setup_distributed(self, cfg) -> None:
        if cfg.world_size == 1:
            return
        if os.environ.get("DMLC_ROLE") != "worker":
            raise Unsupported("a data-parallel MXNet run needs DMLC_ROLE=worker and a scheduler (runners.launch)")
        self.kv = mx.kv.create("dist_sync")
        self.rank, self.world = self.kv.rank, self.kv.num_workers

    def info(self) -> dict:
        features = mx.runtime.Features()
        return {
            "framework_version": mx.__version__,
            "cuda": None,  # MXNet exposes only whether CUDA is enabled, not its version
            "cudnn": None,
            "device_name": None,
            "cuda_enabled": features.is_enabled("CUDA"),
            "cudnn_enabled": features.is_enabled("CUDNN"),
            "mkldnn_enabled": features.is_enabled("MKLDNN"),
        }

    def build(self, cfg, weights, data) -> None:
        if cfg.fused:
            raise Unsupported("MXNet 1.9's Adam has no fused variant")
        if cfg.device == "npu":
            raise Unsupported("MXNet has no NPU support")
        self.ctx = mx.gpu(0) if cfg.device == "gpu" else mx.cpu()
        mx.random.seed(cfg.seed)
        self.cfg, self.size = cfg, bert.size(cfg.size)
        self.model = Bert(self.size, cfg.seq_len, DTYPES[cfg.precision])
        self.model.initialize(ctx=self.ctx)
        for name, value in weights.items():
            self.model.params.get(attr(name)).set_data(mx.nd.array(value, ctx=self.ctx))
        self.loss = LossNet(self.model)
        if cfg.compile_mode == "hybridize":
            self.loss.hybridize(static_alloc=True, static_shape=True)
        if cfg.grad_accum > 1:
            for param in self.model.collect_params().values():
                param.grad_req = "add"
        kvstore = self.kv if self.kv is not None else "device"  # "device": Trainer's own default
        self.trainer = gluon.Trainer(self.model.collect_params(), "adam", {"learning_rate": cfg.lr}, kvstore=kvstore)
        self.data = [
            (mx.nd.array(ids, ctx=self.ctx, dtype="int32"), mx.nd.array(y, ctx=self.ctx, dtype="int32"))
            for ids, y in data
        ]
        self.i = 0

    def step(self):
        total = 0
        for _ in range(self.cfg.grad_accum):
            ids, labels = self.data[self.i % len(self.data)]
            self.i += 1
            with autograd.record():
                loss = self.loss(ids, labels)
            loss.backward()
            total = total + loss
        # grads summed over micro-batches (and over workers by the kvstore), averaged here
        self.trainer.step(self.cfg.grad_accum * self.world)
        if self.cfg.grad_accum > 1:
            self.model.collect_params().zero_grad()
        return total / self.cfg.grad_accum

    def value(self, handle) -> float:
        return float(handle.asscalar())

    def logits(self, ids: np.ndarray) -> np.ndarray:
        return self.model(mx.nd.array(ids, ctx=self.ctx, dtype="int32")).asnumpy()

    def allocate_too_much(self) -> None:
        # MXNet refuses arrays over 2**31 elements before allocating, so an absurd shape is a shape
        # error, not an OOM: cap the address space instead (as a memory-limited container does).
        if self.ctx.device_type == "cpu":
            limit_address_space(256)
        mx.nd.zeros((1 << 29,), ctx=self.ctx).wait_to_read()


if __name__ == "__main__":
    raise SystemExit(main(MXNetRunner))
