"""The fake runner: numpy only, no framework. It makes the whole chain (sweep, child process,
failure statuses, log, collector, catalog) testable anywhere.

Each "step" is the numpy reference forward and loss of one micro-batch per accumulation step;
there is no backward pass and the weights never change, so its numbers measure nothing real.
"""

from __future__ import annotations

import os

import numpy as np

from . import bert
from .common import Runner, Unsupported, main


class FakeRunner(Runner):
    name = "fake"

    def setup_distributed(self, cfg) -> None:
        """Ranks as the launcher numbers them; nothing is exchanged (tests the log and collector chain)."""
        self.rank = int(os.environ.get("BENCHCAT_RANK", "0"))
        self.world = int(os.environ.get("BENCHCAT_WORLD_SIZE", "1"))

    def info(self) -> dict:
        return {"framework_version": np.__version__, "cuda": None, "cudnn": None, "device_name": None}

    def build(self, cfg, weights, data) -> None:
        if cfg.device != "cpu":
            raise Unsupported("the fake runner runs on the CPU only")
        self.cfg, self.weights, self.data = cfg, weights, data
        self.size = bert.size(cfg.size)
        self.i = 0

    def step(self):
        losses = []
        for _ in range(self.cfg.grad_accum):
            ids, labels = self.data[self.i % len(self.data)]
            self.i += 1
            losses.append(bert.cross_entropy(bert.forward(self.weights, self.size, ids), labels))
        return float(np.mean(losses))

    def logits(self, ids):
        return bert.forward(self.weights, self.size, ids)

    def allocate_too_much(self) -> None:
        np.empty(1 << 50, np.float32)  # 4 PiB: numpy raises MemoryError ("Unable to allocate")


if __name__ == "__main__":
    raise SystemExit(main(FakeRunner))
