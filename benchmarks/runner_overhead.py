"""Harness overhead: the runner's measured, logged loop vs a bare training loop, same framework and steps.

Usage (from the project root; re-runs itself inside the framework's environment):

    .venv/bin/python benchmarks/runner_overhead.py --framework pytorch --steps 200 --rounds 5

Both loops drive the same built model: the bare loop is ``for each step: loss = step(); float(loss)``
(a sync per step, as any loop that reads its loss does); the harness is ``runners.common.measure``
with per-step timing and a JSON line written and flushed per step. Rounds alternate bare/harness
(ABBA order) so drift hits both. On a shared machine other processes only ever add time, so the
fastest round of each is the estimate (as ``timeit`` does); medians are printed beside it.
``--threads`` (default 1) sets OMP_NUM_THREADS for the framework: with 2 cores shared by other
jobs, 2 spinning OpenMP threads make single rounds 10x slower and the comparison meaningless.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def inner(framework: str, steps: int, rounds: int, batch: int, seq: int) -> None:
    from runners import bert
    from runners.common import LogWriter, RunConfig, Runner, measure

    module = importlib.import_module(f"runners.{framework}")
    runner_class = next(
        v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Runner) and v is not Runner
    )
    s = bert.size("tiny")
    cfg = RunConfig(
        framework=framework,
        steps=steps,
        warmup=1,
        batch_size=batch,
        seq_len=seq,
        weights=str(bert.weights_file(s, 1234)),
    )
    runner = runner_class()
    runner.build(cfg, bert.load_weights(cfg.weights), bert.batches(s, batch, seq, cfg.seed))
    for _ in range(10):  # compile / warm caches before anything is timed
        runner.value(runner.step())
    bare, harness = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            order = ("bare", "harness") if r % 2 == 0 else ("harness", "bare")
            for kind in order:
                if kind == "bare":
                    t0 = time.perf_counter()
                    for _ in range(steps):
                        runner.value(runner.step())
                    bare.append(time.perf_counter() - t0)
                else:
                    log = LogWriter(os.path.join(tmp, f"round{r}.log"))
                    t0 = time.perf_counter()
                    measure(cfg, runner, log)
                    harness.append(time.perf_counter() - t0)
                    log.close()
    b, h = min(bare), min(harness)
    mb, mh = statistics.median(bare), statistics.median(harness)
    print(f"framework      {framework} (tiny BERT, batch {batch}, seq {seq}, {steps} steps, {rounds} rounds)")
    for label, value, each in (("bare loop", b, bare), ("harness loop", h, harness)):
        listed = ", ".join(f"{x:.3f}" for x in each)
        print(f"{label:14} {value:.3f} s  ({1000 * value / steps:.2f} ms/step, fastest round)  rounds: {listed}")
    print(f"overhead       {100 * (h - b) / b:+.2f} %  fastest rounds (target <= 2 %); "
          f"{100 * (mh - mb) / mb:+.2f} % medians")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", default="pytorch")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the framework")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.framework, args.steps, args.rounds, args.batch_size, args.seq_len)
        return 0
    from benchcat import envs

    python = envs.python(args.framework)
    if python is None:
        print(f"no {args.framework} environment; run: catalog env setup {args.framework}", file=sys.stderr)
        return 2
    cmd = [str(python), __file__, "--inner", *sys.argv[1:]]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "OMP_NUM_THREADS": str(args.threads)}
    return subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
