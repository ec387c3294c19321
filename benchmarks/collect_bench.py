"""Collect speed: 10,000 DLPerf-style logs (~30 KB each, ~300 MB) through `catalog collect`.

Prints files/s, MB/s, wall time and peak RSS for: a cold collect (empty catalog, empty
caches, files in the page cache), a re-collect with nothing changed, and loading the
resulting catalog. Targets (issue 2, 2-core machine): cold >= 200 MB/s, re-collect <= 1 s,
load <= 1 s, peak memory < 500 MB.

    python benchmarks/collect_bench.py [--files 10000] [--keep DIR]

Each phase runs in a fresh child process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASE = r"""
import json, resource, sys, time
from pathlib import Path
phase, logs, catalog = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
t, cpu = time.perf_counter(), time.process_time()
if phase == "big":
    # A 10,000-record catalog: the collected records, each again under other framework versions,
    # keeping the first N runs of each (N = argv[5]).
    from benchcat import store
    from benchcat.aggregate import summarize_runs
    from benchcat.schema import record_id
    cat = store.load(catalog)
    keep = int(sys.argv[5])
    base = []
    for r in cat.records.values():
        r = r.model_copy(update={"runs": r.runs[:keep]})
        base.append(r.model_copy(update={"metrics": summarize_runs(r.runs)}))
    out = store.Catalog(path=Path(sys.argv[4]), revision=1)
    i = 0
    while len(out.records) < 10_000:
        r = base[i % len(base)].model_copy(deep=True)
        r.software.framework_version = f"2.{i // len(base)}.0"
        r.id = record_id(r.benchmark, r.config, r.system, r.software)
        out.records[r.id] = r
        i += 1
    store.save(out)
    extra = {"records": len(out.records)}
elif phase == "load":
    from benchcat import store
    cat = store.load(catalog)
    extra = {"records": len(cat.records)}
else:
    from benchcat.collect import collect
    r = collect(logs, catalog)
    extra = {"files": r.files, "bytes": r.bytes_read, "added": len(r.added), "changed": len(r.changed),
             "unchanged": r.unchanged, "problems": len(r.problems), "cached": r.cached}
wall, cpu = time.perf_counter() - t, time.process_time() - cpu
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
workers_cpu = kids.ru_utime + kids.ru_stime  # the collect pool's processes, joined by now
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"wall": wall, "cpu": cpu, "workers_cpu": workers_cpu, "peak_mb": peak / 1024, **extra}))
"""


def make_logs(root: Path, files: int) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchcat.synth import dlperf_tree

    # 20 batch sizes x 10 topologies x 2 precisions = 400 configs per 2,000 files, 5 runs each.
    topologies = ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8), (8, 8), (16, 8), (32, 8), (64, 8))
    batches = tuple(range(8, 8 * (files // 100 + 1), 8))
    written = dlperf_tree(
        root,
        frameworks=("tensorflow",),
        batches=batches,
        topologies=topologies,
        precisions=("fp32", "fp16"),
        runs=("1", "2", "3", "4", "5"),
        target_bytes=30_000,
    )
    return sum(w.path.stat().st_size for w in written)


def phase(name: str, logs: Path, catalog: Path, *extra) -> dict:
    t = time.perf_counter()
    argv = [sys.executable, "-c", PHASE, name, str(logs), str(catalog), *map(str, extra)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(proc.stderr)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--keep", type=Path, help="reuse/keep generated logs here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchcat-bench-"))
    logs = args.keep or work / "logs"
    if not logs.exists() or not any(logs.iterdir()):
        t = time.perf_counter()
        total = make_logs(logs, args.files)
        print(f"generated {args.files} logs, {total / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s")
    # The logs were just written or read, so they sit in the page cache: this measures parsing, not the disk.
    total = sum(p.stat().st_size for p in logs.rglob("*.log"))
    catalog = work / "catalog"
    cold = phase("collect", logs, catalog)
    warm = phase("collect", logs, catalog)
    load = phase("load", logs, catalog)
    big_loads = {}
    for runs in (1, 5):
        big = work / f"big{runs}"
        phase("big", logs, catalog, big, runs)
        phase("load", logs, big)  # the first read of a catalog written elsewhere fills the cache
        big_loads[runs] = phase("load", logs, big)
    mb = total / 1e6
    print(
        f"cold collect : {cold['files']} files, {mb:.0f} MB in {cold['wall']:.2f} s -> "
        f"{cold['files'] / cold['wall']:.0f} files/s, {mb / cold['wall']:.0f} MB/s "
        f"(main process cpu {cold['cpu']:.2f} s), peak RSS {cold['peak_mb']:.0f} MB "
        f"(+{cold['process_wall'] - cold['wall']:.2f} s interpreter start and imports); "
        f"{cold['added']} records, {cold['problems']} problems"
    )
    serial, parallel = cold["cpu"], cold["workers_cpu"]
    print(
        f"cold CPU     : main process {serial:.2f} s + worker processes {parallel:.2f} s; on 2 idle cores "
        f"that is about {serial + parallel / 2:.2f} s -> {mb / (serial + parallel / 2):.0f} MB/s "
        f"(load average while measuring: {os.getloadavg()[0]:.1f})"
    )
    print(
        f"re-collect   : {warm['wall']:.2f} s ({warm['cached']} files unchanged, {warm['changed']} changed), "
        f"peak RSS {warm['peak_mb']:.0f} MB"
    )
    print(f"load catalog : {load['records']} records in {load['wall']:.2f} s, peak RSS {load['peak_mb']:.0f} MB")
    for runs, big_load in big_loads.items():
        print(
            f"load 10k     : {big_load['records']} records x {runs} run(s) in {big_load['wall']:.2f} s "
            f"(cpu {big_load['cpu']:.2f} s), peak RSS {big_load['peak_mb']:.0f} MB"
        )
    size = sum(p.stat().st_size for p in catalog.rglob("*.yaml"))
    print(f"catalog YAML : {size / 1e6:.1f} MB in {len(list(catalog.rglob('*.yaml')))} files")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
