"""Detection is by content and exclusive: no collector steals another format's files."""

from pathlib import Path

import pytest
from collector_helpers import EXPECTED, FIXTURES, is_sidecar, read_text

from collectors import all_collectors, detect

CATCH_ALL = 1000  # collectors at or past this priority only take what no format collector claims

ROOT = Path(__file__).resolve().parents[2]


def _files():
    for fmt in sorted(EXPECTED):
        for path in sorted((FIXTURES / fmt).rglob("*")):
            if path.is_file():
                yield pytest.param(
                    path, None if is_sidecar(path) else EXPECTED[fmt], id=str(path.relative_to(FIXTURES))
                )
    for path in sorted((ROOT / "examples" / "logs").rglob("*.log")):  # the project's own runner logs
        yield pytest.param(path, "benchcat-runner", id=str(path.relative_to(ROOT)))


@pytest.mark.parametrize(("path", "want"), list(_files()))
def test_detected_by_exactly_the_intended_collector(path, want):
    head = read_text(path)[: 256 * 1024]
    claims = [c.name for c in all_collectors() if c.priority < CATCH_ALL and c.detect(head, path.as_posix())]
    assert claims == ([want] if want else [])
    if want:
        assert detect(head, path.as_posix()).name == want


def test_real_logs_are_detected_exclusively(shared):
    wanted = {"mlperf": "mlperf", "tf_cnn_benchmarks": "tf-cnn-benchmarks"}
    seen = 0
    for path in sorted((shared / "reallogs").rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        fmt = path.relative_to(shared / "reallogs").parts[0]
        head = read_text(path)[: 256 * 1024]
        claims = [c.name for c in all_collectors() if c.priority < CATCH_ALL and c.detect(head, path.as_posix())]
        assert claims == ([] if is_sidecar(path) else [wanted[fmt]]), path
        seen += 1
    assert seen >= 20


def test_detection_ignores_the_file_name():
    text = read_text(FIXTURES / "oneflow/oneflow/bert-base/bz96/1n8g/bert_base_b96_fp32_1.log")
    for name in ("tf_cnn/throughput/1", "mlperf/results/x/bert/result_0.txt", "paddle/log.txt"):
        assert [c.name for c in all_collectors() if c.detect(text, name)] == ["oneflow"]


def test_every_format_collector_declares_signatures():
    # Without signatures every file pays for a full detect(): only catch-alls may go without.
    for c in all_collectors():
        assert c.signatures or c.priority >= CATCH_ALL, c.name
