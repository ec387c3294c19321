"""The ceiling for `catalog collect` on this machine: only the work no implementation can skip.

Over the same logs as ``collect_bench.py`` (DLPerf TensorFlow Keras logs), with both cores:

- walk the tree;
- per file, in two forked processes: read, sha256, UTF-8 decode, find every TimeHistory line
  with one regex pass and count newlines up to each for its line number;
- write one small result file atomically.

No record is typed, grouped or aggregated, no YAML is emitted, nothing is cached. On top of
that comes importing benchcat's stack (pydantic and the record schema among it), measured
here in a fresh interpreter. The sum is the fastest a collect that must import that stack
could be, before it builds one record; comparing it with ``collect_bench.py`` shows how much
of a collect is the essentials and how much is everything else.

    python benchmarks/collect_floor.py [--logs DIR] [--files 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

_LINE = re.compile(r"TimeHistory: (\S+) seconds, (\S+) examples/second between steps (\d+) and (\d+)")


def _walk(directory: str, rel: str, out: list[tuple[str, int]]) -> None:
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        child = f"{rel}/{entry.name}" if rel else entry.name
        if entry.is_dir():
            _walk(entry.path, child, out)
        else:
            out.append((child, entry.stat().st_size))


def _essentials(args: tuple[str, list[tuple[str, int]]]) -> list[tuple[str, str, int]]:
    root, items = args
    found = []
    for rel, size in items:
        fd = os.open(os.path.join(root, rel), os.O_RDONLY)
        try:
            data = os.read(fd, size + 1)
        finally:
            os.close(fd)
        digest = hashlib.sha256(data).hexdigest()
        text = data.decode("utf-8")
        line, last, hits = 1, 0, 0
        for m in _LINE.finditer(text):
            line += text.count("\n", last, m.start())
            last = m.start()
            hits += 1
        found.append((rel, digest, hits))
    return found


def floor_run(root: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    files: list[tuple[str, int]] = []
    _walk(str(root), "", files)
    t_walk = time.perf_counter()
    chunk = max(16, len(files) // 16)
    batches = [(str(root), files[i : i + chunk]) for i in range(0, len(files), chunk)]
    with ProcessPoolExecutor(2, mp_context=get_context("fork")) as pool:
        results = [r for batch in pool.map(_essentials, batches) for r in batch]
    t_parse = time.perf_counter()
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(f"{rel} {digest} {hits}\n" for rel, digest, hits in results))
    os.replace(tmp, out)
    t_end = time.perf_counter()
    return {
        "files": len(files),
        "bytes": sum(size for _, size in files),
        "walk": t_walk - t0,
        "parse": t_parse - t_walk,
        "write": t_end - t_parse,
        "wall": t_end - t0,
        "lines": sum(hits for *_, hits in results),
    }


def import_seconds() -> float:
    """Importing what `catalog collect` needs (benchcat.collect and every collector), fresh process."""
    code = (
        "import time; t = time.perf_counter(); import benchcat.collect, collectors; collectors._load(); "
        "print(time.perf_counter() - t)"
    )
    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    return float(proc.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=Path, help="logs made by collect_bench.py --keep DIR (generated if absent)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchcat-floor-"))
    logs = args.logs or work / "logs"
    if not logs.exists() or not any(logs.iterdir()):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from collect_bench import make_logs

        make_logs(logs, args.files)
    _essentials((str(logs), []))  # warm nothing but the function; the logs are in the page cache
    runs = [floor_run(logs, work / "floor.txt") for _ in range(args.repeat)]
    imports = [import_seconds() for _ in range(args.repeat)]
    mb = runs[0]["bytes"] / 1e6
    for r in runs:
        print(
            f"essentials   : {r['files']} files, {mb:.0f} MB in {r['wall']:.2f} s -> {mb / r['wall']:.0f} MB/s "
            f"(walk {r['walk']:.2f} s, read+hash+decode+scan on 2 processes {r['parse']:.2f} s, "
            f"write {r['write']:.2f} s; {r['lines']} TimeHistory lines)"
        )
    best_run, best_import = min(r["wall"] for r in runs), min(imports)
    print(f"import       : benchcat.collect and all collectors {', '.join(f'{s:.2f}' for s in imports)} s")
    ceiling = best_run + best_import
    print(
        f"ceiling      : {best_import:.2f} s import + {best_run:.2f} s essentials = {ceiling:.2f} s -> "
        f"{mb / ceiling:.0f} MB/s before any record is built or written "
        f"(200 MB/s needs {mb / 200:.2f} s; load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
