"""A wheel install must carry what `catalog init` and rendering read (see benchcat/resources.py)."""

import glob
import tomllib

from benchcat.scaffold import SKELETON
from tests.conftest import ROOT


def packaged() -> set[str]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    files = set()
    for patterns in doc["tool"]["setuptools"]["data-files"].values():
        for pattern in patterns:
            files.update(p[len(str(ROOT)) + 1 :] for p in glob.glob(str(ROOT / pattern)))
    return files


def test_site_skeleton_and_templates_are_installed_as_data_files():
    shipped = packaged()
    assert set(SKELETON) <= shipped
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").glob("*.j2")}
    assert templates and templates <= shipped
