"""Site speed and size on a generated catalog of 10,000 records (40 systems, 4 frameworks).

Usage: .venv/bin/python benchmarks/site_bench.py [--records N] [--keep DIR]
Prints: records, pages, render seconds, mkdocs build seconds, built site MB (targets: 5 s, 60 s, 50 MB).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchcat import store
from benchcat.render import render_site
from benchcat.scaffold import scaffold
from benchcat.synth_records import generated

REPORTS = {
    "bert-base-fp16.yaml": "title: BERT-base fp16 by system and framework\nwhere: {model: bert-base, precision: fp16}\n"
    "rows: [batch_size, devices]\ncolumns: [framework]\nbaseline: {column: tensorflow}\n",
    "resnet-batch.yaml": "title: ResNet-50 batch sweep\nwhere: {model: resnet50, devices: 1}\n"
    "rows: [system, precision, batch_size]\ncolumns: [framework]\nbaseline: {row: {batch_size: 32}}\n",
    "a100-vs-v100.yaml": "title: V100 against A100\nkind: vendor\na: {label: A100, match: {accelerator: A100}}\n"
    "b: {label: V100, match: {accelerator: V100}}\nmatch_on: [model, framework, precision, batch_size, topology]\n",
    "mi250-vs-h100.yaml": "title: MI250 against H100\nkind: vendor\na: {label: H100, match: {accelerator: H100}}\n"
    "b: {label: MI250, match: {accelerator: MI250}}\nmatch_on: [model, framework, precision, batch_size, topology]\n",
}


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build the site here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="site-bench-")) / "site"
    scaffold(root)
    records = generated(args.records)
    cat = store.Catalog(path=root / "catalog", revision=1)
    cat.records = {r.id: r for r in records}
    cat.history = [{"revision": 1, "date": "2026-01-01T00:00:00Z", "source": "generated",
                    "added": [{"id": r.id, "new": None} for r in records], "changed": [], "removed": []}]  # fmt: skip
    store.save(cat)
    (root / "reports" / "all.yaml").unlink()  # one table of every configuration: not a report anyone reads
    for name, text in REPORTS.items():
        (root / "reports" / name).write_text(text)

    start, cpu = time.perf_counter(), time.process_time()
    store.load(root / "catalog")
    load_s, load_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    settings, _ = render_site(root)
    render_s, render_cpu = time.perf_counter() - start, time.process_time() - cpu
    pages = sum(1 for _ in settings.output.rglob("*.md"))

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).with_name("mkdocs")
    start = time.perf_counter()
    subprocess.run([str(mkdocs), "build", "--strict", "-q"], cwd=root, env=env, check=True)
    build_s = time.perf_counter() - start  # the hook finds the inputs unchanged and skips rendering
    (settings.output / ".render-stamp").unlink()
    start = time.perf_counter()
    subprocess.run([str(mkdocs), "build", "--strict", "-q"], cwd=root, env=env, check=True)
    cold_s = time.perf_counter() - start  # the hook renders again (no file changes)

    size = size_mb(root / "site")
    print(f"records            {len(records)}")
    print(f"systems            {len({r.system.name for r in records})}")
    print(f"frameworks         {len({r.config.framework for r in records})}")
    print(f"generated pages    {pages}")
    print(f"catalog load       {load_s:.2f} s wall, {load_cpu:.2f} s cpu (part of render)")
    print(f"render             {render_s:.2f} s wall, {render_cpu:.2f} s cpu  (target <= 5 s)")
    print(f"mkdocs build       {build_s:.2f} s   (target <= 60 s; after catalog render)")
    print(f"mkdocs build+hook  {cold_s:.2f} s   (the hook renders too)")
    print(f"load average       {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"built site         {size:.1f} MB   (target <= 50 MB)")
    print(f"site folder        {root}")


if __name__ == "__main__":
    main()
