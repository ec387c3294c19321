"""One repeat in a child process: header, child run, and a status for anything that goes wrong.

The parent writes the log's header (config + machine), starts ``python -m runners.<fw>`` in the
framework's environment, and waits. A timeout, a death by signal or an exception becomes a
``failure`` line with the status, the reason and an excerpt of the child's stderr; the caller goes
on with the next run. Standard library only (plus :mod:`runners.envinfo`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
            # MindSpore on CPU sometimes dereferences the allocation it just failed to make: the
            # crash is the out-of-memory's doing, and a smaller batch is what fixes it.
            if oom:
                return "oom", f"killed by signal {sig.name} after an out-of-memory message"
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


@dataclass
class Proc:
    """One process of a run: a rank (or the framework's launcher of all ranks) or a helper (parameter server)."""

    name: str
    cmd: list[str]
    env: dict[str, str] = field(default_factory=dict)
    worker: bool = True  # helpers are stopped once every worker is done
    scratch: Path | None = None  # the launcher's own log folder: its tail joins stderr, then it is removed


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together so they differ)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def threads_per_rank(cfg: RunConfig) -> int:
    return max(1, (os.cpu_count() or 1) // cfg.devices_per_node)


def plan(python: str, cfg: RunConfig, log: Path) -> tuple[list[Proc], dict]:
    """The processes of one run and what the header says about the launch.

    One rank: the runner itself. Several (``nodes x devices_per_node`` ranks, all on this host,
    talking over 127.0.0.1 only): each framework's own mechanism; see README "Running at scale".
    """
    run = child_command(python, cfg, log)
    world = cfg.world_size
    info = {"world_size": world, "global_batch_size": cfg.global_batch_size, "per_device_batch_size": cfg.batch_size}
    if world == 1:
        return [Proc("runner", run)], info
    args = run[1:]  # -m runners.<fw> --config ... --log ...
    info["threads_per_rank"] = threads_per_rank(cfg)
    fw = cfg.framework
    if fw == "pytorch":
        (port,) = free_ports(1)
        args = [("--runner-log" if a == "--log" else a) for a in args]
        cmd = [python, "-m", "torch.distributed.run", f"--nnodes={cfg.nodes}",
               f"--nproc-per-node={cfg.devices_per_node}", "--rdzv-backend=c10d",
               f"--rdzv-endpoint=127.0.0.1:{port}", "--max-restarts=0", *args]
        if cfg.nodes > 1:  # all "nodes" on this host: one torchrun per node, same rendezvous
            return [Proc(f"torchrun node {n}", cmd) for n in range(cfg.nodes)], {**info, "launcher": "torchrun"}
        return [Proc("torchrun", cmd)], {**info, "launcher": "torchrun"}
    if fw == "tensorflow":
        ports = free_ports(world)
        cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
        tf_config = [json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}) for i in range(world)]
        procs = [Proc(f"rank {i}", run, {"TF_CONFIG": tf_config[i]}) for i in range(world)]
        return procs, {**info, "launcher": "TF_CONFIG (MultiWorkerMirroredStrategy)"}
    if fw == "mxnet":
        (port,) = free_ports(1)
        base = {"DMLC_PS_ROOT_URI": "127.0.0.1", "DMLC_PS_ROOT_PORT": str(port), "DMLC_NODE_HOST": "127.0.0.1",
                "DMLC_NUM_WORKER": str(world), "DMLC_NUM_SERVER": "1", "PS_VERBOSE": "0"}
        serve = [python, "-c", "import mxnet"]  # importing mxnet with DMLC_ROLE=server|scheduler runs that role
        procs = [Proc("scheduler", serve, {**base, "DMLC_ROLE": "scheduler"}, worker=False),
                 Proc("server", serve, {**base, "DMLC_ROLE": "server"}, worker=False)]
        procs += [Proc(f"rank {i}", run, {**base, "DMLC_ROLE": "worker"}) for i in range(world)]
        return procs, {**info, "launcher": "KVStore dist_sync (DMLC_ROLE scheduler + server + workers)"}
    if fw == "mindspore":
        (port,) = free_ports(1)
        logdir = Path(tempfile.mkdtemp(prefix="benchcat-msrun-"))  # msrun's per-worker logs; removed after the run
        # msrun starts "python <args>" per rank: PATH puts this environment's python first
        env = {"PATH": str(Path(python).parent) + os.pathsep + os.environ.get("PATH", "")}
        cmd = [python, "-m", "mindspore.parallel.cluster.run", f"--worker_num={world}",
               f"--local_worker_num={cfg.devices_per_node}", "--master_addr=127.0.0.1", f"--master_port={port}",
               f"--log_dir={logdir}", "--join=True", "--cluster_time_out=120", "python",
               *[("--runner-log" if a == "--log" else a) for a in args]]
        return [Proc("msrun", cmd, env, scratch=logdir)], {**info, "launcher": "msrun"}
    # fake (and any runner reading these): the ranks are told who they are, nothing is exchanged
    procs = [Proc(f"rank {i}", run, {"BENCHCAT_RANK": str(i), "BENCHCAT_WORLD_SIZE": str(world)}) for i in range(world)]
    return procs, {**info, "launcher": "benchcat (independent ranks, no communication)"}


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


MSRUN_DEAD = re.compile(r"Worker process (\d+) exit with exception\. Error code: (-?\d+)")
LINGER_S = 10.0  # after the last rank's summary, how long the launcher gets to shut the job down
RANK_EXIT = re.compile(r"rank\s*:\s*(\d+).*?\n.*?exitcode\s*:\s*(-?\d+)", re.S)


def rank_of(log: Path, pid: int) -> int | None:
    """The rank a process said it was (its ``rank`` line); frameworks such as ps-lite number ranks themselves."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if '"kind": "rank"' in line:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj.get("pid") == pid:
                return obj.get("rank")
    return None


def count_summaries(log: Path) -> int:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    return text.count('"kind": "summary"')


def run_one(
    cfg: RunConfig, python: str, log: Path, timeout: float, machine: dict | None = None, extra: dict | None = None
) -> str:
    """Run one repeat into ``log`` (replaced); returns its status. ``extra`` goes into the header.

    A data-parallel run starts every process of :func:`plan` and waits for all of them; the first
    worker to fail (or the time limit) stops the others, so one dead rank never leaves the run hanging.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    procs, info = plan(python, cfg, log)
    head = header(cfg, timeout, machine, {**(extra or {}), **info} if cfg.world_size > 1 else extra)
    log.write_text(json.dumps(head, sort_keys=True) + "\n", encoding="utf-8")
    start = time.monotonic()
    if len(procs) == 1 and cfg.world_size == 1:
        return _run_single(procs[0], cfg, log, timeout, start)
    return _run_group(procs, cfg, log, timeout, start)


def _run_single(proc_spec: Proc, cfg: RunConfig, log: Path, timeout: float, start: float) -> str:
    timed_out = False
    with subprocess.Popen(
        proc_spec.cmd,
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


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run_group(specs: list[Proc], cfg: RunConfig, log: Path, timeout: float, start: float) -> str:
    """Every process of a data-parallel run; the first failed worker or the deadline ends them all."""
    threads = str(threads_per_rank(cfg))
    with tempfile.TemporaryDirectory(prefix="benchcat-ranks-") as tmp:
        running: list[tuple[Proc, subprocess.Popen, Path]] = []
        try:
            for i, spec in enumerate(specs):
                env = {**child_env(), **spec.env}
                env.setdefault("OMP_NUM_THREADS", threads)  # the cores shared out between the ranks
                err_path = Path(tmp) / f"{i}.err"
                with open(err_path, "wb") as err:
                    proc = subprocess.Popen(spec.cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                            start_new_session=True)
                running.append((spec, proc, err_path))
            deadline = start + timeout
            failed: tuple[Proc, subprocess.Popen] | None = None
            timed_out = False
            all_done_at = None  # when every rank had written its summary
            lingered = False
            while True:
                workers = [(s, p) for s, p, _ in running if s.worker]
                bad = [(s, p) for s, p in workers if p.poll() is not None and p.returncode != 0]
                bad += [(s, p) for s, p, _ in running if not s.worker and p.poll() is not None and p.returncode != 0]
                if bad:
                    failed = bad[0]
                    break
                if all(p.poll() is not None for _, p in workers):
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                if all_done_at is None and count_summaries(log) >= cfg.world_size:
                    all_done_at = time.monotonic()
                if all_done_at is not None and time.monotonic() - all_done_at > LINGER_S:
                    lingered = True  # the job's work is done and logged; its shutdown handshake is not
                    break
                time.sleep(0.1)
        finally:
            for _, proc, _ in running:
                if proc.poll() is None:
                    _kill(proc)
                proc.wait()
        errs = {spec.name: path.read_text(encoding="utf-8", errors="replace") for spec, _, path in running}
        for spec, _, _ in running:
            if spec.scratch is not None:
                for worker_log in sorted(spec.scratch.glob("*.log")):
                    text = worker_log.read_text(encoding="utf-8", errors="replace")
                    errs[spec.name] += f"\n[{worker_log.name}] {text[-1500:]}"
                shutil.rmtree(spec.scratch, ignore_errors=True)
    elapsed = time.monotonic() - start
    if lingered:
        with open(log, "a", encoding="utf-8") as fh:
            note = (f"every rank wrote its summary but the launcher had not exited {LINGER_S:.0f} s later; "
                    "stopped (its shutdown did not finish)")
            fh.write(json.dumps({"kind": "launcher", "note": note}) + "\n")
        log_tail = log.read_text(encoding="utf-8").splitlines()
        # the summaries stay the log's result: move the note before the last summary
        last = max(i for i, line in enumerate(log_tail) if '"kind": "summary"' in line)
        log_tail.insert(last, log_tail.pop())
        log.write_text("\n".join(log_tail) + "\n", encoding="utf-8")
        return "ok"
    if failed is None and not timed_out:
        summaries = count_summaries(log)
        if summaries >= cfg.world_size and is_complete(log):
            return "ok"
        stderr = "\n".join(f"[{name}] {text[-1500:]}" for name, text in errs.items() if text.strip())
        append_failure(log, "error", f"{summaries} of {cfg.world_size} ranks wrote a summary", 0, elapsed, stderr)
        return "error"
    if timed_out:
        stderr = "\n".join(f"[{name}] {text[-1000:]}" for name, text in errs.items() if text.strip())
        status, reason = classify(None, True, stderr, None)
        append_failure(log, status, reason, None, elapsed, stderr)
        return status
    spec, proc = failed
    returncode = proc.returncode
    stderr = errs[spec.name]
    rank = rank_of(log, proc.pid)
    who = spec.name if rank is None else f"rank {rank}"
    dead = MSRUN_DEAD.search(stderr)  # msrun names the dead worker's pid and exit code
    if dead and returncode > 0:
        rank = rank_of(log, int(dead.group(1)))
        who, returncode = (spec.name if rank is None else f"rank {rank}"), int(dead.group(2)) or returncode
    root = stderr.rfind("Root Cause")  # torchrun names the first failed rank there; later ones were stopped
    found = RANK_EXIT.search(stderr, max(root, 0))
    if found and returncode > 0:
        who, returncode = f"rank {found.group(1)}", int(found.group(2)) or returncode
    status, reason = classify(returncode, False, stderr, last_error(log))
    append_failure(log, status, f"{who}: {reason}", returncode, elapsed, stderr)
    return status


def default_python() -> str:
    return sys.executable
