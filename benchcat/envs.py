"""One virtual environment per framework, created from the project's pinned requirements.

Environments live outside the repository, in ``$BENCHCAT_ENVS`` (default
``~/.cache/benchcat/envs/<framework>``), so every clone and worktree on a machine shares them
and ``git clean`` never costs a multi-GB reinstall. An environment is ready when its stamp (a
hash of the requirements file and the Python version) matches; otherwise it is rebuilt.
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


def env_path(framework: str) -> Path:
    check(framework)
    return envs_dir() / framework


def status(framework: str, flavour: str | None = None) -> str:
    """``ready``, ``stale`` (requirements or flavour changed) or ``missing``.

    The stamp file holds ``<flavour> <hash>``; ``flavour=None`` accepts whichever was installed.
    """
    path = env_path(framework)
    try:
        words = (path / STAMP).read_text().split()
    except OSError:
        return "missing"
    installed, digest = words if len(words) == 2 else ("cpu", words[0] if words else "")
    if flavour is not None and installed != flavour:
        return "stale"
    fresh = digest == stamp_for(framework, installed) and (path / "bin" / "python").exists()
    return "ready" if fresh else "stale"


def python(framework: str) -> Path | None:
    """The environment's interpreter, or None when it is not ready. ``fake`` runs in this interpreter."""
    if framework == "fake":
        return Path(sys.executable)
    return env_path(framework) / "bin" / "python" if status(framework) == "ready" else None


def setup(framework: str, flavour: str = "cpu", force: bool = False, say=print) -> Path:
    """Create (or rebuild when stale) the environment; returns its interpreter. Idempotent."""
    path = env_path(framework)
    if not force and status(framework, flavour) == "ready":
        say(f"{framework}: ready at {path}")
        return path / "bin" / "python"
    start = time.monotonic()
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
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
