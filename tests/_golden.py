"""Golden files: compared byte for byte, re-written only with ``pytest --update-golden``."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"


def check(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; run pytest --update-golden"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs; run pytest --update-golden if intended"
