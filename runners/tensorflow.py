"""TensorFlow runner: the shared BERT over tf.Variables, Keras Adam, eager / tf.function / XLA jit_compile.

Data-parallel: one process per worker, each with its TF_CONFIG, under MultiWorkerMirroredStrategy
(Keras Adam all-reduces the gradients inside ``strategy.run``).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import tensorflow as tf
from tensorflow import keras

from . import bert
from .common import Runner, Unsupported, main

DTYPES = {"fp32": tf.float32, "fp16": tf.float16, "bf16": tf.bfloat16}


def forward(p: dict, s: bert.BertSize, ids, dt):
    """Logits; matmuls in ``dt`` (mixed precision by hand), LayerNorm/softmax/loss in fp32."""

    def dense(x, name):
        return tf.cast(tf.matmul(tf.cast(x, dt), tf.cast(p[name + ".w"], dt)), tf.float32) + p[name + ".b"]

    def norm(x, name):
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + bert.LN_EPS) * p[name + ".g"] + p[name + ".b"]

    bsz, seq = ids.shape
    hd = s.hidden // s.heads
    x = tf.gather(p["emb.word"], ids) + p["emb.pos"][:seq] + p["emb.type"][0]
    x = norm(x, "emb.ln")
    for i in range(s.layers):
        pre = f"l{i}."

        def heads(t):
            return tf.cast(tf.transpose(tf.reshape(t, [bsz, seq, s.heads, hd]), [0, 2, 1, 3]), dt)

        q, k, v = (heads(dense(x, pre + n)) for n in "qkv")
        scores = tf.cast(tf.matmul(q, k, transpose_b=True), tf.float32) / math.sqrt(hd)
        ctx = tf.cast(tf.matmul(tf.cast(tf.nn.softmax(scores, -1), dt), v), tf.float32)
        ctx = tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [bsz, seq, s.hidden])
        x = norm(x + dense(ctx, pre + "o"), pre + "ln1")
        h = dense(x, pre + "ff1")
        h = 0.5 * h * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
        x = norm(x + dense(h, pre + "ff2"), pre + "ln2")
    pooled = tf.tanh(dense(x[:, 0], "pool"))
    return dense(pooled, "cls")


class TensorFlowRunner(Runner):
    name = "tensorflow"
    strategy = None

    def setup_distributed(self, cfg) -> None:
        if cfg.world_size == 1:
            return
        if "TF_CONFIG" not in os.environ:
            raise Unsupported("a data-parallel TensorFlow run needs TF_CONFIG per worker (runners.launch sets it)")
        # created first, before any other TensorFlow op; a lost peer ends a collective within the timeout
        timeout = float(os.environ.get("BENCHCAT_COLLECTIVE_TIMEOUT", "300"))
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout)
        self.strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
        self.rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
        self.world = self.strategy.num_replicas_in_sync

    def info(self) -> dict:
        build = dict(tf.sysconfig.get_build_info())
        gpus = tf.config.list_physical_devices("GPU")
        details = tf.config.experimental.get_device_details(gpus[0]) if gpus else {}
        return {
            "framework_version": tf.__version__,
            "keras": keras.__version__,
            "cuda": build.get("cuda_version"),
            "cudnn": build.get("cudnn_version"),
            "device_name": details.get("device_name"),
            "is_cuda_build": bool(build.get("is_cuda_build")),
        }

    def build(self, cfg, weights, data) -> None:
        if cfg.device == "npu":
            raise Unsupported("the TensorFlow runner has no NPU support")
        if cfg.fused:
            raise Unsupported("Keras Adam has no fused variant (XLA fuses under compile=xla)")
        if cfg.device == "gpu" and not tf.config.list_physical_devices("GPU"):
            raise Unsupported("device gpu requested but TensorFlow sees no GPU")
        self.cfg, self.size, self.dt = cfg, bert.size(cfg.size), DTYPES[cfg.precision]
        self.device = "/GPU:0" if cfg.device == "gpu" else "/CPU:0"
        tf.random.set_seed(cfg.seed)
        strategy = self.strategy or tf.distribute.get_strategy()
        with tf.device(self.device), strategy.scope():
            self.params = {k: tf.Variable(v, name=k.replace(".", "_")) for k, v in weights.items()}
            n = len(data)
            self.data = [
                (
                    tf.constant(np.stack([data[(j * cfg.grad_accum + a) % n][0] for a in range(cfg.grad_accum)])),
                    tf.constant(np.stack([data[(j * cfg.grad_accum + a) % n][1] for a in range(cfg.grad_accum)])),
                )
                for j in range(n)
            ]
        with strategy.scope():
            self.opt = keras.optimizers.Adam(cfg.lr)
        variables = list(self.params.values())
        accum = cfg.grad_accum
        replicas = strategy.num_replicas_in_sync  # the optimizer sums gradients over replicas

        def train_step(ids, labels):
            total, grads = 0.0, None
            for a in range(accum):
                with tf.GradientTape() as tape:
                    logits = forward(self.params, self.size, ids[a], self.dt)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[a], logits=logits)
                    )
                    scaled = loss / (accum * replicas)  # inside the tape, or it has no path to the variables
                g = tape.gradient(scaled, variables)
                if accum > 1:  # embedding gradients are IndexedSlices, which do not add
                    g = [tf.convert_to_tensor(x) for x in g]
                grads = g if grads is None else [x + y for x, y in zip(grads, g, strict=True)]
                total += loss
            self.opt.apply_gradients(zip(grads, variables, strict=True))
            return total / accum

        mode = cfg.compile_mode
        if self.strategy is not None:
            one_step = train_step

            def train_step(ids, labels):
                return self.strategy.run(one_step, args=(ids, labels))

        self.train_step = train_step if mode == "eager" else tf.function(train_step, jit_compile=mode == "xla")
        self.i = 0

    def step(self):
        ids, labels = self.data[self.i % len(self.data)]
        self.i += 1
        with tf.device(self.device):
            return self.train_step(ids, labels)

    def value(self, handle) -> float:
        if self.strategy is not None:  # this worker's own loss: no extra collective
            handle = self.strategy.experimental_local_results(handle)[0]
        return float(handle.numpy())

    def logits(self, ids: np.ndarray) -> np.ndarray:
        with tf.device(self.device):
            return forward(self.params, self.size, tf.constant(ids), tf.float32).numpy()

    def peak_memory_mib(self) -> float | None:
        if self.device.startswith("/GPU"):
            return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
        return None

    def allocate_too_much(self) -> None:
        with tf.device(self.device):
            tf.zeros([1 << 25, 1 << 25], tf.float32).numpy()


if __name__ == "__main__":
    raise SystemExit(main(TensorFlowRunner))
