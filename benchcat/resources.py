"""Where benchcat's non-code files are: the checkout, or ``<prefix>/share/benchcat`` of an install.

A wheel only carries Python packages, so pyproject.toml installs the Jinja2 templates and the
site skeleton as data files under ``share/benchcat``; a checkout or editable install reads them
in place.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    """The folder holding ``templates/`` and ``site_src/``."""
    candidates = [_CHECKOUT]
    for base in (sysconfig.get_path("data"), sys.prefix, sys.base_prefix):
        candidates.append(Path(base) / "share" / "benchcat")
    for root in candidates:
        if (root / "templates" / "comparison.md.j2").is_file():
            return root
    return _CHECKOUT
