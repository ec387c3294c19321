"""Helpers for runner tests: framework environments (fail in CI when missing) and one run through the launcher."""

import os
from pathlib import Path

import pytest

from benchcat import envs
from runners import launch
from runners.common import RunConfig

FRAMEWORKS = envs.FRAMEWORKS


def framework_python(framework: str) -> str:
    """The framework env's interpreter. Missing: a failure under CI=true, a skip with the fix elsewhere."""
    python = envs.python(framework)
    if python is None:
        why = (f"{framework} environment is {envs.status(framework)} at {envs.env_path(framework)}; "
               f"create it with `catalog env setup {framework}` (scripts/setup does it for tests)")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    return str(python)


def run_into(tmp: Path, python: str, timeout: float = 300, **knobs) -> tuple[str, Path]:
    """One run through the real launcher; returns (status, log path)."""
    settings = {"steps": 4, "warmup": 1, "seq_len": 32, "batch_size": 4, **knobs}
    cfg = RunConfig(**settings)
    log = tmp / launch.log_name(cfg)
    return launch.run_one(cfg, python, log, timeout), log
