"""Shared by the collector tests: run a collector on text, collect a fixture tree."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchcat import store, yamlio
from benchcat.collect import HEAD_CHARS, collect, decode
from collectors import detect, get_collector
from collectors.base import FileContext

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "collectors"

# Fixture folder -> the collector that must read every log in it.
EXPECTED = {
    "dllogger": "dllogger",
    "mindspore": "mindspore-timemonitor",
    "mlperf": "mlperf",
    "mxnet_speedometer": "mxnet-speedometer",
    "oneflow": "oneflow",
    "paddle": "paddle",
    "pytorch_progress": "pytorch-progress",
    "tf_bert": "tf-bert",
    "tf_cnn_benchmarks": "tf-cnn-benchmarks",
}


def is_sidecar(path: Path) -> bool:
    return path.name == "metadata" or path.parent.name == "systems"


def read_text(path: Path) -> str:
    return decode(path.read_bytes(), path.name)[0]


def detected(path: Path):
    return detect(read_text(path)[:HEAD_CHARS], path.as_posix())


def parse(name: str, text: str, path: str, sidecars: dict | None = None):
    """Run one collector on text as if collect.py had read it from ``path``."""
    ctx = FileContext(root="r", path=path, sha256="0" * 64, sidecars=sidecars or {})
    return get_collector(name).parse(text, ctx)


def collect_tree(src: Path, tmp_path: Path):
    """Collect a copy of src (so runs name the root by its folder name) into a fresh catalog."""
    site = tmp_path / "site"
    shutil.copytree(src, site / src.name)
    report = collect(site / src.name, site / "catalog", jobs=1)
    return report, store.load(site / "catalog")


def as_yaml(report, cat) -> str:
    return yamlio.dumps(
        {
            "records": [cat.records[rid].model_dump(mode="json") for rid in sorted(cat.records)],
            "problems": [str(p) for p in report.problems],
        }
    )
