"""One virtual environment per framework, created from the project's pinned requirements.

Environments live outside the repository, in ``$BENCHCAT_ENVS`` (default
``~/.cache/benchcat/envs``), so every clone and worktree on a machine shares them and ``git
clean`` never costs a multi-GB reinstall. Each is named by what it was built from,
``<framework>-<flavour>-<hash of the requirements file and Python version>``, so branches with
different pins get different environments instead of rebuilding each other's, and a lock per
environment makes concurrent ``setup`` calls wait for one build. ``$BENCHCAT_FLAVOUR`` (cpu or
gpu, default cpu) picks which flavour ``catalog run`` uses.
Standard library only: ``scripts/setup.d/30-frameworks.sh`` runs this before the project's own
``.venv`` exists (``python3 -m benchcat.envs setup all``). Nothing here imports a framework.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
REQUIREMENTS = PROJECT / "runners" / "requirements"
FRAMEWORKS = ("tensorflow", "mindspore", "mxnet", "pytorch")
STAMP = ".benchcat-stamp"


def envs_dir() -> Path:
    return Path(os.environ.get("BENCHCAT_ENVS") or Path.home() / ".cache" / "benchcat" / "envs")


def requirements_file(framework: str, flavour: str = "cpu") -> Path:
    check(framework)
    return REQUIREMENTS / f"{framework}-{flavour}.txt"


def check(framework: str) -> None:
    if framework not in FRAMEWORKS:
        raise KeyError(f"no environment for {framework!r}; valid frameworks: {', '.join(FRAMEWORKS)}")


def stamp_for(framework: str, flavour: str = "cpu") -> str:
    text = requirements_file(framework, flavour).read_bytes()
    tag = f"{sys.version_info.major}.{sys.version_info.minor}".encode()
    return hashlib.sha256(text + b"\0" + tag).hexdigest()


def flavour_in_use() -> str:
    return os.environ.get("BENCHCAT_FLAVOUR", "cpu")


def env_path(framework: str, flavour: str | None = None) -> Path:
    check(framework)
    flavour = flavour or flavour_in_use()
    return envs_dir() / f"{framework}-{flavour}-{stamp_for(framework, flavour)[:12]}"


def status(framework: str, flavour: str | None = None) -> str:
    """``ready`` or ``missing`` (never built from the current pins, or a build was interrupted)."""
    path = env_path(framework, flavour)
    ready = (path / STAMP).is_file() and (path / "bin" / "python").exists()
    return "ready" if ready else "missing"


def python(framework: str) -> Path | None:
    """The environment's interpreter, or None when it is not ready. ``fake`` runs in this interpreter."""
    if framework == "fake":
        return Path(sys.executable)
    return env_path(framework) / "bin" / "python" if status(framework) == "ready" else None


def setup(framework: str, flavour: str | None = None, force: bool = False, say=print) -> Path:
    """Create the environment unless it is ready; returns its interpreter. Idempotent and concurrency-safe."""
    import fcntl

    flavour = flavour or flavour_in_use()
    path = env_path(framework, flavour)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same env: wait, then reuse it
        if not force and status(framework, flavour) == "ready":
            say(f"{framework}: ready at {path}")
            return path / "bin" / "python"
        start = time.monotonic()
        if path.exists():
            shutil.rmtree(path)  # an interrupted build (no stamp) or --force
        say(f"{framework}: creating {path} from {requirements_file(framework, flavour).relative_to(PROJECT)}")
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        py = str(path / "bin" / "python")
        pip = [py, "-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "-r", str(requirements_file(framework, flavour))], check=True)
        (path / STAMP).write_text(f"{flavour} {stamp_for(framework, flavour)}\n")
        say(f"{framework}: ready in {time.monotonic() - start:.0f} s")
    return Path(py)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchcat.envs", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["setup", "status"])
    parser.add_argument("frameworks", nargs="+", help=f"{', '.join(FRAMEWORKS)} or all")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    names = list(FRAMEWORKS) if "all" in args.frameworks else args.frameworks
    for name in names:
        if args.action == "setup":
            setup(name, force=args.force)
        else:
            print(f"{name:12} {status(name):8} {env_path(name)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
