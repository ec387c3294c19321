"""The machine a run happens on, captured as data (standard library only; unknown stays None).

Captured by the parent before each run: CPU model and cores, RAM, host, OS, the project's git
commit, allow-listed environment variables, and accelerators from ``nvidia-smi``, ``npu-smi``
(Ascend, with the CANN version when installed) and ``ixsmi`` (Iluvatar) when those tools exist.
The framework's own facts (version, CUDA/cuDNN it was built with) come from the child.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path

ENV_PREFIXES = ("TF_", "MS_", "NCCL_", "XLA_", "CUDA_", "CUDNN_", "OMP_", "MKL_", "KMP_", "MXNET_", "TORCH_",
                "PYTORCH_", "ASCEND_", "HCCL_", "GLOG_", "DNNL_", "ONEDNN_", "TORCHINDUCTOR_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "DEVICE_ID", "RANK_SIZE",
             "RANK_ID", "WORLD_SIZE", "LOCAL_RANK", "RANK")
# Terraform also uses TF_ (TF_VAR_* often carries credentials): never TensorFlow's, never captured.
ENV_EXCLUDED_PREFIXES = ("TF_VAR_", "TF_CLI_", "TF_TOKEN_", "TF_WORKSPACE", "TF_LOG")
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE")
PROJECT = Path(__file__).resolve().parent.parent


def allowed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Environment variables on the allow-list, minus anything whose name looks like a secret."""
    environ = os.environ if environ is None else environ
    out = {}
    for name, value in environ.items():
        upper = name.upper()
        if any(word in upper for word in SECRET_WORDS) or upper.startswith(ENV_EXCLUDED_PREFIXES):
            continue
        if upper in ENV_NAMES or upper.startswith(ENV_PREFIXES):
            out[name] = value
    return dict(sorted(out.items()))


def _run(cmd: list[str], timeout: float = 10) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def ram_gib() -> float | None:
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
    except OSError:
        return None
    return round(int(m.group(1)) / 1024**2, 1) if m else None


def os_name() -> str:
    try:
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', Path("/etc/os-release").read_text(), re.M)
        if m:
            return f"{m.group(1)} ({platform.system()} {platform.release()})"
    except OSError:
        pass
    return platform.platform()


def git_commit(root: Path = PROJECT) -> str | None:
    """HEAD, with ``-dirty`` when the code that measures (not logs or docs) has uncommitted changes."""
    out = _run(["git", "-C", str(root), "rev-parse", "HEAD"])
    if not out:
        return None
    code = ["runners", "benchcat", "collectors"]
    dirty = _run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", *code])
    return out.strip() + ("-dirty" if dirty else "")


def nvidia() -> dict | None:
    out = _run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"])
    if not out or not out.strip():
        return None
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    head = _run(["nvidia-smi"]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", head)
    return {
        "vendor": "NVIDIA",
        "model": rows[0][0],
        "memory_gb": round(float(rows[0][1]) / 1024, 1) if rows[0][1].replace(".", "").isdigit() else None,
        "count": len(rows),
        "driver": rows[0][2] if len(rows[0]) > 2 else None,
        "cuda_driver_api": m.group(1) if m else None,
    }


def ascend() -> dict | None:
    out = _run(["npu-smi", "info"])
    if not out:
        return None
    m = re.search(r"npu-smi\s+([\w.]+)\s+Version:\s*([\w.]+)", out)
    chips = re.findall(r"\|\s*\d+\s+(\w*9\d\w*|\w*310\w*)\s*\|", out)
    cann = None
    for path in ("/usr/local/Ascend/ascend-toolkit/latest/version.cfg", "/usr/local/Ascend/latest/version.cfg"):
        try:
            m2 = re.search(r"version=([\w.]+)", Path(path).read_text())
        except OSError:
            continue
        if m2:
            cann = m2.group(1)
            break
    return {
        "vendor": "Huawei Ascend",
        "model": chips[0] if chips else None,
        "count": len(chips) or None,
        "driver": m.group(2) if m else None,
        "cann": cann,
    }


def iluvatar() -> dict | None:
    out = _run(["ixsmi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"])
    if not out or not out.strip():
        return None
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    return {"vendor": "Iluvatar", "model": rows[0][0], "count": len(rows), "driver": rows[0][-1]}


def capture() -> dict:
    """Everything about this machine that can be known without a framework."""
    accelerators = [a for a in (nvidia(), ascend(), iluvatar()) if a]
    return {
        "host": socket.gethostname() or None,
        "cpu": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "ram_gib": ram_gib(),
        "os": os_name(),
        "git_commit": git_commit(),
        "accelerators": accelerators,
        "env": allowed_env(),
    }
