"""Framework-free runner core: the run configuration, the measured loop and the JSON-lines log.

The runner contract (one subclass of :class:`Runner` per framework, in ``runners/<fw>.py``,
run as ``python -m runners.<fw> --config JSON --log PATH`` inside that framework's environment):

- ``name``: the framework, as the catalog spells it; ``info()``: version and build facts
  (CUDA/cuDNN it was built with; null when the framework does not say).
- ``build(cfg, weights, data)``: the model from the shared ``.npz`` weights, the optimizer and the
  compile mode; raise :class:`Unsupported` for a knob the framework lacks (the run becomes an error).
- ``step()`` one optimizer step (``grad_accum`` micro-batches), returning a loss handle that
  ``value(handle)`` turns into a float (the host/device sync point).
- ``logits(ids)``: fp32 forward of the initial model (the parity check), ``peak_memory_mib()``
  (None where the framework reports nothing) and ``allocate_too_much()`` (the forced-OOM probe).

Framework imports live only in those modules; this one needs numpy and the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass, fields

import numpy as np

from . import bert

LOG_FORMAT = "benchcat-runner"
LOG_VERSION = 1
PRECISIONS = ("fp32", "fp16", "bf16")
FAULTS = ("oom", "segfault", "timeout", "error", "kill")

# Compile mode per framework: the generic off/on plus each framework's own names.
COMPILE_MODES: dict[str, dict[str, str]] = {
    "tensorflow": {"off": "graph", "on": "xla", "eager": "eager", "graph": "graph", "xla": "xla"},
    "mindspore": {"off": "pynative", "on": "graph", "pynative": "pynative", "graph": "graph"},
    "mxnet": {"off": "imperative", "on": "hybridize", "imperative": "imperative", "hybridize": "hybridize"},
    "pytorch": {"off": "eager", "on": "torch.compile", "eager": "eager", "torch.compile": "torch.compile"},
    "fake": {"off": "eager", "eager": "eager"},
}


class Unsupported(Exception):
    """A knob this framework (or this build of it) does not have."""


@dataclass
class RunConfig:
    """Every knob of one run; all of it is written into the log header."""

    framework: str
    size: str = "tiny"
    batch_size: int = 8
    seq_len: int = 64
    grad_accum: int = 1
    precision: str = "fp32"
    compile: str = "off"
    fused: bool = False
    steps: int = 20
    warmup: int = 5
    sync_every_step: bool = True
    device: str = "cpu"
    nodes: int = 1  # data-parallel: nodes x devices_per_node ranks, each framework's own launcher
    devices_per_node: int = 1
    seed: int = 1234
    lr: float = 1e-4
    run_id: str = "1"
    weights: str = ""
    fault: str | None = None  # tests only: oom, segfault, timeout, error or kill (last rank) after step 1

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision {self.precision!r}; valid: {', '.join(PRECISIONS)}")
        modes = COMPILE_MODES.get(self.framework)
        if modes is None:
            raise ValueError(f"unknown framework {self.framework!r}; valid: {', '.join(COMPILE_MODES)}")
        if self.compile not in modes:
            raise ValueError(f"compile {self.compile!r} for {self.framework}; valid: {', '.join(modes)}")
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"fault {self.fault!r}; valid: {', '.join(FAULTS)}")
        if self.nodes < 1 or self.devices_per_node < 1:
            raise ValueError("nodes and devices_per_node must be at least 1")
        if not 0 < self.warmup < self.steps:
            raise ValueError(f"need 0 < warmup ({self.warmup}) < steps ({self.steps})")
        bert.size(self.size)

    @property
    def compile_mode(self) -> str:
        return COMPILE_MODES[self.framework][self.compile]

    @property
    def world_size(self) -> int:
        return self.nodes * self.devices_per_node

    @property
    def global_batch_size(self) -> int:
        """Samples per optimizer step over all ranks: per-device batch x grad_accum x devices."""
        return self.batch_size * self.grad_accum * self.world_size

    @property
    def model(self) -> str:
        return f"bert-{self.size}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown run settings: {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
        return cls(**data)


class LogWriter:
    """One JSON object per line, flushed at once so a crash keeps every line written before it."""

    def __init__(self, path: str):
        self._fh = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives for the run
        self.tags: dict = {}  # added to every line (``rank`` in a data-parallel run)

    def write(self, kind: str, **data) -> None:
        # Ranks share the log: one write per line in append mode keeps their lines whole.
        line = json.dumps({"kind": kind, **self.tags, **data}, sort_keys=True, allow_nan=False) + "\n"
        self._fh.write(line)

    def close(self) -> None:
        self._fh.close()


def host_rss_mib() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Runner:
    """Base class; see the module docstring for the contract."""

    name = ""
    rank = 0
    world = 1

    def setup_distributed(self, cfg: RunConfig) -> None:
        """Join the data-parallel job started by the framework's launcher; set ``rank`` and ``world``."""
        if cfg.world_size > 1:
            raise Unsupported(f"the {self.name} runner has no data-parallel mode")

    def info(self) -> dict:
        raise NotImplementedError

    def build(self, cfg: RunConfig, weights: dict[str, np.ndarray], data: list) -> None:
        raise NotImplementedError

    def step(self):
        raise NotImplementedError

    def value(self, handle) -> float:
        return float(handle)

    def logits(self, ids: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def peak_memory_mib(self) -> float | None:
        return None

    def allocate_too_much(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """After the summary: leave the data-parallel job cleanly (where the framework needs it)."""


def measure(cfg: RunConfig, runner: Runner, log: LogWriter | None) -> dict:
    """Run ``cfg.steps`` optimizer steps; time each, log each, and return the summary.

    Step 0 (tracing / compiling) is reported as ``compile_time``, steps 1..warmup-1 as
    ``warmup_time``; throughput and step times cover the steps after warm-up only. Without
    sync-every-step the host syncs only at the warm-up boundary and at the end, so only the
    window's total time is known (no per-step spread).
    """
    samples = cfg.batch_size * cfg.grad_accum * runner.world  # global: every rank steps together
    times: list[float] = []
    first_loss = last_loss = None
    clock = time.perf_counter
    window_start = None
    for i in range(cfg.steps):
        if i == cfg.warmup:
            window_start = clock()
        t0 = clock()
        handle = runner.step()
        synced = cfg.sync_every_step or i < cfg.warmup or i == cfg.steps - 1
        loss = runner.value(handle) if synced else None
        dt = clock() - t0
        if loss is not None:
            last_loss = loss
            if first_loss is None:
                first_loss = loss
        if cfg.sync_every_step or i < cfg.warmup:
            times.append(dt)
        if log is not None:
            log.write("step", step=i, loss=loss, time_s=dt if synced or cfg.sync_every_step else None)
        if cfg.fault is not None and i == 1 and (cfg.fault != "kill" or runner.rank == runner.world - 1):
            inject(cfg.fault, runner)
    window = clock() - window_start
    measured = times[cfg.warmup :] if cfg.sync_every_step else []
    steps_measured = cfg.steps - cfg.warmup
    summary = {
        "steps_measured": steps_measured,
        "samples_per_step": samples,
        "window_s": window,
        "throughput": samples * steps_measured / window,
        "step_time_ms": 1000 * statistics.median(measured) if measured else 1000 * window / steps_measured,
        "step_time_cv": statistics.pstdev(measured) / statistics.fmean(measured) if len(measured) > 1 else None,
        "compile_time_s": times[0],
        "warmup_time_s": sum(times[1 : cfg.warmup]) if cfg.warmup > 1 else None,
        "loss_step0": first_loss,
        "loss_last": last_loss,
        "peak_memory_mib": runner.peak_memory_mib(),
        "host_rss_mib": host_rss_mib(),
    }
    return summary


def limit_address_space(headroom_mib: int) -> None:
    """Cap this process's virtual memory at its current size plus ``headroom_mib`` (forced-OOM probes)."""
    with open("/proc/self/status") as fh:
        size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + (headroom_mib << 20), resource.RLIM_INFINITY))


def inject(fault: str, runner: Runner) -> None:
    """Forced failures for the tests: each takes the path a real one would."""
    if fault == "oom":
        runner.allocate_too_much()
    elif fault == "segfault":
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    elif fault == "timeout":
        time.sleep(3600)
    elif fault == "error":
        raise RuntimeError("forced error (fault injection)")
    elif fault == "kill":  # one rank dies as if killed from outside; the others must not hang
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def main(runner_class: type[Runner], argv: list[str] | None = None) -> int:
    """Entry point of ``python -m runners.<fw>``: one run into ``--log``, or logits into ``--parity``."""
    parser = argparse.ArgumentParser(prog=f"python -m runners.{runner_class.name}")
    parser.add_argument("--config", required=True, help="RunConfig as JSON")
    # --runner-log: the spelling under launchers whose own options --log would abbreviate (torchrun's --log-dir)
    parser.add_argument("--log", "--runner-log", dest="log", help="append the run's JSON lines here")
    parser.add_argument("--parity", help="write the initial model's fp32 logits for the parity batch (.npy)")
    args = parser.parse_args(argv)
    cfg = RunConfig.from_dict(json.loads(args.config))
    s = bert.size(cfg.size)
    weights = bert.load_weights(cfg.weights)
    runner = runner_class()
    if args.parity:
        ids, _ = bert.batches(s, cfg.batch_size, cfg.seq_len, cfg.seed, count=1)[0]
        runner.build(cfg, weights, [])
        np.save(args.parity, runner.logits(ids).astype(np.float64))
        return 0
    log = LogWriter(args.log)
    try:
        runner.setup_distributed(cfg)
        if runner.world > 1:
            log.tags["rank"] = runner.rank
            log.write("rank", pid=os.getpid(), world_size=runner.world)  # the launcher maps a dead pid to its rank
        if runner.rank == 0:
            log.write("framework", **runner.info(), **versions())
        # each rank its own shard of the synthetic data (rank 0's is the single-process data)
        runner.build(cfg, weights, bert.batches(s, cfg.batch_size, cfg.seq_len, cfg.seed + runner.rank))
        summary = measure(cfg, runner, log)
        log.write("summary", status="ok", **summary)
        runner.close()
    except BaseException as exc:
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        log.write("error", type=type(exc).__name__, message=str(exc)[:2000], traceback=tb[-4000:])
        return 1
    finally:
        log.close()
    return 0


def versions() -> dict:
    return {"python": sys.version.split()[0], "numpy": np.__version__, "executable": sys.executable}
