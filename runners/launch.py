"""One repeat in a child process: header, child run, and a status for anything that goes wrong.

The parent writes the log's header (config + machine), starts ``python -m runners.<fw>`` in the
framework's environment, and waits. A timeout, a death by signal or an exception becomes a
``failure`` line with the status, the reason and an excerpt of the child's stderr; the caller goes
on with the next run. Standard library only (plus :mod:`runners.envinfo`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import envinfo
from .common import LOG_FORMAT, LOG_VERSION, RunConfig

PROJECT = Path(__file__).resolve().parent.parent
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}
OOM_MARKERS = (
    "out of memory",
    "outofmemory",
    "memoryerror",
    "resource_exhausted",
    "resourceexhausted",
    "oom when allocating",
    "can't allocate memory",
    "cannot allocate memory",
    "not enough memory",
    "failed to allocate",
    "allocate memory failed",  # MindSpore
    "std::bad_alloc",
    "alloc failed",
)


def log_name(cfg: RunConfig) -> str:
    """DLPerf-compatible relative path; knobs beyond batch and precision are encoded in the file stem."""
    tokens = [cfg.model, f"b{cfg.batch_size}", cfg.precision, f"s{cfg.seq_len}", f"ga{cfg.grad_accum}"]
    tokens.append(cfg.compile_mode.replace(".", "-"))
    if cfg.fused:
        tokens.append("fused")
    if not cfg.sync_every_step:
        tokens.append("nosync")
    if cfg.device != "cpu":
        tokens.append(cfg.device)
    if cfg.fault:
        tokens.append(f"fault-{cfg.fault}")
    stem = "_".join(tokens + [cfg.run_id])
    topology = f"{cfg.nodes}n{cfg.devices_per_node}g"
    return f"{cfg.framework}/{cfg.model}/bz{cfg.batch_size}/{topology}/{stem}.log"


def is_complete(path: Path) -> bool:
    """A log is complete when its last line is a summary or a failure (a result either way)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 65536))
            tail = fh.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return False
    if not tail:
        return False
    try:
        return json.loads(tail[-1]).get("kind") in ("summary", "failure")
    except ValueError:
        return False


def classify(returncode: int | None, timed_out: bool, stderr: str, error: dict | None) -> tuple[str, str]:
    """(status, reason) of a failed child from how it ended and what it said."""
    if timed_out:
        return "timeout", "did not finish within the time limit; killed"
    lower = stderr.lower() + " " + json.dumps(error or {}).lower()
    oom = any(marker in lower for marker in OOM_MARKERS)
    if returncode is not None and returncode < 0:
        sig = signal.Signals(-returncode)
        if sig in CRASH_SIGNALS:
            return "segfault", f"killed by signal {sig.name}"
        if sig == signal.SIGKILL:
            why = "killed by SIGKILL"
            return ("oom", why + " after an out-of-memory message") if oom else ("error", why + " (the OOM killer?)")
        return "error", f"killed by signal {sig.name}"
    if error is not None:
        message = f"{error.get('type')}: {error.get('message', '')}".strip()
        return ("oom" if oom else "error"), message[:500]
    if oom:
        return "oom", f"exit code {returncode} after an out-of-memory message"
    return "error", f"exit code {returncode} without a summary"


def last_error(path: Path) -> dict | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines[-50:]):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("kind") == "error":
            return obj
    return None


def child_command(python: str, cfg: RunConfig, log: Path) -> list[str]:
    return [python, "-m", f"runners.{cfg.framework}", "--config", json.dumps(cfg.to_dict()), "--log", str(log)]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PROJECT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def header(cfg: RunConfig, timeout: float, machine: dict | None = None, extra: dict | None = None) -> dict:
    """The log's first line: config and machine (captured here when None); ``extra`` is merged in."""
    return {
        "benchcat_runner": LOG_VERSION,
        "format": LOG_FORMAT,
        "kind": "header",
        "config": cfg.to_dict(),
        "compile_mode": cfg.compile_mode,
        "machine": machine if machine is not None else envinfo.capture(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "timeout_s": timeout,
        **(extra or {}),
    }


def finish(log: Path, returncode: int | None, timed_out: bool, stderr: str, elapsed: float) -> str:
    """The run's status once its child has ended; anything but ``ok`` appends a ``failure`` line."""
    if returncode == 0 and not timed_out and is_complete(log):
        return "ok"
    status, reason = classify(returncode, timed_out, stderr, last_error(log))
    append_failure(log, status, reason, returncode, elapsed, stderr)
    return status


def append_failure(log: Path, status: str, reason: str, returncode: int | None, elapsed: float, stderr: str) -> None:
    with open(log, "a", encoding="utf-8") as fh:
        failure = {
            "kind": "failure",
            "status": status,
            "reason": reason,
            "returncode": returncode,
            "elapsed_s": round(elapsed, 3),
            "stderr_tail": stderr[-1500:],
        }
        fh.write(json.dumps(failure, sort_keys=True) + "\n")


def run_one(
    cfg: RunConfig, python: str, log: Path, timeout: float, machine: dict | None = None, extra: dict | None = None
) -> str:
    """Run one repeat into ``log`` (replaced); returns its status. ``extra`` goes into the header."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps(header(cfg, timeout, machine, extra), sort_keys=True) + "\n", encoding="utf-8")
    start = time.monotonic()
    timed_out = False
    with subprocess.Popen(
        child_command(python, cfg, log),
        cwd=PROJECT,
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    return finish(log, proc.returncode, timed_out, err.decode("utf-8", "replace"), time.monotonic() - start)


def default_python() -> str:
    return sys.executable
