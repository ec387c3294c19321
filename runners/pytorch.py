"""PyTorch runner: the shared BERT as functional ops over a dict of parameters, Adam, torch.compile.

Data-parallel under torchrun: DistributedDataParallel over gloo (CPU) or nccl (GPU).
"""

from __future__ import annotations

import datetime
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from . import bert
from .common import Runner, Unsupported, main

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def forward(p: dict, s: bert.BertSize, ids, dt):
    """Logits; matmuls in ``dt`` (mixed precision by hand), LayerNorm/softmax/loss in fp32."""

    def dense(x, name):
        return (x.to(dt) @ p[name + ".w"].to(dt)).float() + p[name + ".b"]

    def norm(x, name):
        return F.layer_norm(x, (s.hidden,), p[name + ".g"], p[name + ".b"], bert.LN_EPS)

    bsz, seq = ids.shape
    hd = s.hidden // s.heads
    x = p["emb.word"][ids] + p["emb.pos"][:seq] + p["emb.type"][0]
    x = norm(x, "emb.ln")
    for i in range(s.layers):
        pre = f"l{i}."

        def heads(t):
            return t.reshape(bsz, seq, s.heads, hd).transpose(1, 2).to(dt)

        q, k, v = (heads(dense(x, pre + n)) for n in "qkv")
        scores = (q @ k.transpose(-1, -2)).float() / math.sqrt(hd)
        ctx = (torch.softmax(scores, -1).to(dt) @ v).float().transpose(1, 2).reshape(bsz, seq, s.hidden)
        x = norm(x + dense(ctx, pre + "o"), pre + "ln1")
        h = dense(x, pre + "ff1")
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
        x = norm(x + dense(h, pre + "ff2"), pre + "ln2")
    pooled = torch.tanh(dense(x[:, 0], "pool"))
    return dense(pooled, "cls")


class Net(torch.nn.Module):
    """The parameter dict as a Module, so DistributedDataParallel can all-reduce its gradients."""

    def __init__(self, params: dict, size: bert.BertSize, dt):
        super().__init__()
        self.p = torch.nn.ParameterDict({k.replace(".", "_"): v for k, v in params.items()})
        self.params, self.size, self.dt = params, size, dt

    def forward(self, ids):
        return forward(self.params, self.size, ids, self.dt)


class TorchRunner(Runner):
    name = "pytorch"

    def setup_distributed(self, cfg) -> None:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if cfg.world_size > 1 and world != cfg.world_size:
            raise Unsupported(f"{cfg.world_size} ranks asked for but WORLD_SIZE is {world}: run under torchrun")
        if world > 1:
            backend = "nccl" if cfg.device == "gpu" else "gloo"
            # a dead peer ends a collective within this time (the launcher's own limit still applies)
            timeout = datetime.timedelta(seconds=int(os.environ.get("BENCHCAT_COLLECTIVE_TIMEOUT", "300")))
            torch.distributed.init_process_group(backend, timeout=timeout)
            self.rank, self.world = torch.distributed.get_rank(), torch.distributed.get_world_size()

    def info(self) -> dict:
        cuda = torch.cuda.is_available()
        return {
            "framework_version": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": str(torch.backends.cudnn.version()) if cuda and torch.backends.cudnn.is_available() else None,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
            "device_name": torch.cuda.get_device_name(0) if cuda else None,
            "threads": torch.get_num_threads(),
        }

    def build(self, cfg, weights, data) -> None:
        if cfg.device == "npu":
            raise Unsupported("the PyTorch runner has no NPU support (torch_npu is not in its requirements)")
        local = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device(f"cuda:{local}" if cfg.device == "gpu" else "cpu")
        self.cfg, self.size, self.dt = cfg, bert.size(cfg.size), DTYPES[cfg.precision]
        torch.manual_seed(cfg.seed)
        self.params = {k: torch.nn.Parameter(torch.from_numpy(v).to(self.device)) for k, v in weights.items()}
        self.data = [
            (torch.from_numpy(ids).long().to(self.device), torch.from_numpy(y).long().to(self.device))
            for ids, y in data
        ]
        self.opt = torch.optim.Adam(self.params.values(), lr=cfg.lr, fused=True if cfg.fused else None)
        scale = 1.0 / cfg.grad_accum
        net = Net(self.params, self.size, self.dt)
        if self.world > 1:  # gradients averaged over ranks in backward
            net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[local] if cfg.device == "gpu" else None)
        self.net = net

        def loss_and_grad(ids, labels):
            loss = F.cross_entropy(net(ids), labels)
            (loss * scale).backward()
            return loss.detach()

        self.loss_and_grad = torch.compile(loss_and_grad) if cfg.compile_mode == "torch.compile" else loss_and_grad
        self.i = 0

    def step(self):
        total = 0.0
        for a in range(self.cfg.grad_accum):
            ids, labels = self.data[self.i % len(self.data)]
            self.i += 1
            last = a == self.cfg.grad_accum - 1
            if self.world > 1 and not last:
                with self.net.no_sync():  # all-reduce once per optimizer step, on the last micro-batch
                    total = total + self.loss_and_grad(ids, labels)
            else:
                total = total + self.loss_and_grad(ids, labels)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return total / self.cfg.grad_accum

    def value(self, handle) -> float:
        return float(handle.item())

    def logits(self, ids: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            out = forward(self.params, self.size, torch.from_numpy(ids).long().to(self.device), torch.float32)
        return out.cpu().numpy()

    def peak_memory_mib(self) -> float | None:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated() / 2**20
        return None

    def allocate_too_much(self) -> None:
        torch.empty(1 << 50, dtype=torch.float32, device=self.device)


if __name__ == "__main__":
    raise SystemExit(main(TorchRunner))
