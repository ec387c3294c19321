"""``catalog collect``: logs under a root -> records in the catalog, with every problem reported.

The two I/O edges are :func:`read_file` (bytes -> text, hash, sidecars) and the catalog
save; between them everything is plain data. Files whose size and mtime match the collect
cache are not read again. Work is spread over processes when there is enough of it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from pydantic_core import from_json, to_json

import collectors
from collectors.base import FileContext, Problem

from . import store
from .gcpause import gc_paused
from .merge import build_records, headline_value, merge_into, observation_dict

HEAD_CHARS = 256 * 1024
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
CACHE_NAME = "collect.json"


@dataclass
class Outcome:
    """What one file gave: observations as plain dicts, problems, and what it depended on."""

    path: str
    size: int
    mtime_ns: int
    collector: str | None = None
    observations: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    sidecars: dict[str, list[int] | None] = field(default_factory=dict)
    skipped: bool = False


@dataclass
class Report:
    """The summary ``catalog collect`` prints."""

    root: str
    files: int = 0
    bytes_read: int = 0
    cached: int = 0
    skipped: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0  # records fed by this root that stayed as they were
    removed: list[str] = field(default_factory=list)
    revision: int = 0
    total: int = 0  # records in the catalog afterwards
    written: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns]


def walk(root: Path) -> tuple[list[tuple[str, int, int]], list[Problem]]:
    """Regular files under root (following links, detecting loops), sorted, with problems."""
    found: list[tuple[str, int, int]] = []
    problems: list[Problem] = []
    seen_dirs: set[tuple[int, int]] = set()

    def visit(directory: Path, rel: str) -> None:
        try:
            st = directory.stat()
        except OSError as exc:
            problems.append(Problem(rel or ".", None, f"cannot enter directory: {exc.strerror}"))
            return
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            problems.append(Problem(rel, None, "symlink loop (directory already visited)"))
            return
        seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(rel or ".", None, f"cannot list directory: {exc.strerror}"))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                st = entry.stat()  # follows links
            except OSError as exc:
                why = "broken or looping symlink" if entry.is_symlink() else exc.strerror
                problems.append(Problem(child, None, f"cannot read: {why}"))
                continue
            if stat.S_ISDIR(st.st_mode):
                visit(Path(entry.path), child)
            elif stat.S_ISREG(st.st_mode):
                found.append((child, st.st_size, st.st_mtime_ns))
            else:
                problems.append(Problem(child, None, "not a regular file; skipped", "warning"))

    visit(root, "")
    return found, problems


def decode(data: bytes, path: str) -> tuple[str, list[Problem]]:
    """UTF-8, else latin-1 with a warning; CRLF becomes LF."""
    problems = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(path, line, "not valid UTF-8; read as latin-1", "warning"))
        text = data.decode("latin-1")
    if b"\r" in data:  # the bytes scan is twice as fast as the text one
        text = text.replace("\r\n", "\n")
    return text, problems


def read_file(
    root: str, rel: str, size: int, mtime_ns: int, max_bytes: int, only: str | None, extra: tuple = ()
) -> Outcome:
    """Read, hash, detect and parse one file. Never raises: trouble becomes a problem.

    ``extra`` collectors (from user format specs) are tried before the registered ones.
    """
    out = Outcome(rel, size, mtime_ns)
    full = os.path.join(root, rel)
    if size > max_bytes:
        out.problems.append(
            Problem(
                rel, None, f"file is {size / 2**20:.0f} MiB, over the {max_bytes / 2**20:.0f} MiB limit; not read"
            ).to_dict()
        )
        out.skipped = True
        return out
    try:
        # Ask for what stat said (plus one byte to see growth): read(n) allocates n up front.
        # os.read skips the buffered file object (10 us a file, a quarter of the read).
        fd = os.open(full, os.O_RDONLY)
        try:
            data = os.read(fd, min(size, max_bytes) + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        out.problems.append(Problem(rel, None, f"cannot read: {exc.strerror}").to_dict())
        out.skipped = True
        return out
    if not data:
        out.problems.append(Problem(rel, None, "empty file", "warning").to_dict())
        out.skipped = True
        return out
    if b"\x00" in data[:8192]:
        out.problems.append(Problem(rel, 1, "binary data (NUL bytes), not a text log").to_dict())
        out.skipped = True
        return out
    text, problems = decode(data, rel)
    out.problems.extend(p.to_dict() for p in problems)
    try:
        head = text[:HEAD_CHARS]
        collector = collectors.get_collector(only) if only else collectors.detect(head, rel, extra)
    except Exception as exc:  # noqa: BLE001 - a broken detect() must not stop the collect
        out.problems.append(Problem(rel, None, f"format detection failed: {type(exc).__name__}: {exc}").to_dict())
        out.skipped = True
        return out
    if collector is None:
        out.skipped = True
        return out
    out.collector = collector.name
    sidecars: dict[str, str | None] = {}
    for side in collector.sidecars(rel):
        side_full = os.path.normpath(os.path.join(root, side))
        if not side_full.startswith(os.path.normpath(root) + os.sep):
            sidecars[side] = None
            continue
        try:
            st = os.stat(side_full)
            with open(side_full, "rb") as fh:
                sidecars[side] = decode(fh.read(max_bytes), side)[0]
            out.sidecars[side] = _stamp(st)
        except OSError:
            sidecars[side] = None
            out.sidecars[side] = None
    # root is filled in by the caller: it names the collected root, not this machine's path.
    ctx = FileContext(root="", path=rel, sha256=hashlib.sha256(data).hexdigest(), sidecars=sidecars)
    try:
        result = collector.parse(text, ctx)
    except Exception as exc:  # noqa: BLE001 - a collector bug is reported, the rest goes on
        out.problems.append(
            Problem(rel, None, f"collector {collector.name} failed: {type(exc).__name__}: {exc}").to_dict()
        )
        return out
    out.problems.extend(p.to_dict() for p in result.problems)
    out.observations.extend(observation_dict(obs) for obs in result.observations)
    return out


@gc_paused
def _read_batch(args: tuple) -> list[Outcome]:
    root, items, max_bytes, only, extra = args
    return [read_file(root, rel, size, mtime, max_bytes, only, extra) for rel, size, mtime in items]


def _cache_path(catalog_dir: Path) -> Path:
    return catalog_dir / store.CACHE_DIR / CACHE_NAME


def _load_cache(catalog_dir: Path, key: str) -> dict:
    """This root's entry of the collect cache: its files, and the catalog state it left."""
    try:
        doc = from_json(_cache_path(catalog_dir).read_bytes())
    except (OSError, ValueError):
        return {}
    if doc.get("fingerprint") != collectors.fingerprint():
        return {}
    return doc.get("roots", {}).get(key, {})


def _save_cache(catalog_dir: Path, key: str, entry: dict) -> None:
    path = _cache_path(catalog_dir)
    try:
        doc = from_json(path.read_bytes())
        if doc.get("fingerprint") != collectors.fingerprint():
            raise ValueError
    except (OSError, ValueError):
        doc = {"fingerprint": collectors.fingerprint(), "roots": {}}
    doc["roots"][key] = entry
    store._write_atomic(path, to_json(doc))


def catalog_state(catalog_dir: Path) -> list:
    """Size and mtime of every catalog file: if these match, nobody wrote the catalog since."""
    files = [catalog_dir / store.CATALOG_FILE, catalog_dir / store.HISTORY_FILE]
    files += sorted((catalog_dir / store.RECORDS_DIR).rglob("*.yaml"))
    state = []
    for f in files:
        try:
            state.append([f.relative_to(catalog_dir).as_posix(), *_stamp(f.stat())])
        except OSError:
            continue
    return state


def _fresh(entry: dict, size: int, mtime: int, root: Path) -> bool:
    if entry.get("size") != size or entry.get("mtime_ns") != mtime:
        return False
    for side, stamp in entry.get("sidecars", {}).items():
        try:
            now = _stamp(os.stat(root / side))
        except OSError:
            now = None
        if now != stamp:
            return False
    return True


def root_label(root: Path, catalog_dir: Path) -> str:
    """How runs name the collected root: relative to the site folder (the catalog's parent),
    so the same layout gives the same catalog on any machine."""
    site = catalog_dir.resolve().parent
    return Path(os.path.relpath(root.resolve(), site)).as_posix()


def gather(
    root: Path,
    *,
    cache: dict[str, dict] | None = None,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    only: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    extra: tuple = (),
) -> tuple[list[Outcome], list[Problem], int]:
    """Outcomes for every file under root (cached ones reused), walk problems, cache hits."""
    if root.is_file():
        st = root.stat()
        files, problems, base = [(root.name, st.st_size, st.st_mtime_ns)], [], str(root.parent)
    else:
        files, problems = walk(root)
        base = str(root)
    cache = cache or {}
    outcomes: list[Outcome] = []
    todo = []
    for rel, size, mtime in files:
        entry = cache.get(rel)
        if entry is not None and _fresh(entry, size, mtime, Path(base)):
            outcomes.append(Outcome(**entry))
        else:
            todo.append((rel, size, mtime))
    hits = len(outcomes)
    total = len(files)
    if progress:
        progress(hits, total)
    jobs = jobs or min(os.cpu_count() or 1, 8)
    volume = sum(size for _, size, _ in todo)
    if jobs > 1 and len(todo) > 64 and volume > 8 * 1024 * 1024:
        chunk = max(16, len(todo) // (jobs * 8))
        batches = [(base, todo[i : i + chunk], max_bytes, only, extra) for i in range(0, len(todo), chunk)]
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
            done = hits
            for result in pool.map(_read_batch, batches):
                outcomes.extend(result)
                done += len(result)
                if progress:
                    progress(done, total)
    else:
        for i, item in enumerate(todo):
            outcomes.extend(_read_batch((base, [item], max_bytes, only, extra)))
            if progress and (i % 50 == 0 or i == len(todo) - 1):
                progress(hits + i + 1, total)
    outcomes.sort(key=lambda o: o.path)
    return outcomes, problems, hits


@gc_paused
def collect(
    root: str | os.PathLike,
    catalog_dir: str | os.PathLike = "catalog",
    *,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    only: str | None = None,
    wait: float = 0,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    formats: list | None = None,
) -> Report:
    """Collect every log under ``root`` into the catalog at ``catalog_dir``.

    Runs previously collected from the same root are replaced by what the root holds now,
    so a log that was removed takes its runs with it; runs from other roots stay.
    ``formats`` (spec files) and the catalog's ``settings.formats`` add user-declared formats.
    """
    root_path = Path(root)
    catalog_path = Path(catalog_dir)
    if not root_path.exists():
        raise FileNotFoundError(f"{root}: no such file or directory")
    label = root_label(root_path, catalog_path)
    report = Report(root=label)
    held = store.acquire(catalog_path, wait)
    try:
        store.recover(catalog_path)
        from .formats import from_settings, load_collectors

        settings = store.read_settings(catalog_path)
        extra = tuple(load_collectors(formats or []) + from_settings(settings, catalog_path))
        cache_key = f"{label}|{only or ''}" + "".join(f"|{c.name}={c.digest}" for c in extra)
        cache = _load_cache(catalog_path, cache_key)
        outcomes, walk_problems, report.cached = gather(
            root_path, cache=cache.get("files"), jobs=jobs, max_bytes=max_bytes, only=only, progress=progress,
            extra=extra,
        )
        report.problems.extend(walk_problems)
        used_sidecars = {side for o in outcomes for side in o.sidecars}
        observations = []
        for o in outcomes:
            report.files += 1
            report.bytes_read += o.size
            report.problems.extend(Problem(**p) for p in o.problems)
            if o.skipped and o.path not in used_sidecars and not o.problems:
                report.skipped.append(o.path)
            for obs in o.observations:
                obs["run"]["source"]["root"] = label
                observations.append(obs)
        state = catalog_state(catalog_path)
        fresh = report.cached == len(outcomes) == len(cache.get("files", ())) and cache.get("catalog") == state
        if fresh and "total" in cache:  # (a cache from before the total was kept: collect again)
            # Every file is as the last collect of this root left it, and so is the catalog.
            report.unchanged, report.revision, report.total = cache["records"], cache["revision"], cache["total"]
        else:
            cat = store.load(catalog_path)
            apply(cat, observations, label, report, dry_run)
            if not dry_run:
                entry = {
                    "files": {o.path: o.__dict__ for o in outcomes},
                    "catalog": catalog_state(catalog_path),
                    "records": len(report.added) + len(report.changed) + report.unchanged,
                    "revision": cat.revision,
                    "total": len(cat.records),
                }
                _save_cache(catalog_path, cache_key, entry)
    finally:
        held.release()
    report.problems.sort(key=lambda p: (p.path, p.line or 0, p.message))
    return report


def apply(cat, observations: list[dict], label: str, report, dry_run: bool) -> None:
    """Replace the runs from ``label`` by ``observations``; fill the report's changes; save if any.

    ``report`` is any object with added/changed/removed/unchanged/revision/total/written (collect, import).
    """
    changes = merge_into(cat, build_records(observations), label)
    report.added, report.changed, report.removed = changes.added, changes.changed, changes.removed
    report.unchanged = changes.unchanged
    if (report.added or report.changed or report.removed) and not dry_run:
        cat.revision += 1
        cat.history.append(history_entry(cat, label, report, changes))
        report.written = store.save(cat)
    report.revision = cat.revision
    report.total = len(cat.records)


def history_entry(cat, label: str, report: Report, changes) -> dict:
    date = _now()
    return {
        "revision": cat.revision,
        "date": date,
        "source": label,
        "added": [{"id": rid, "new": headline_value(cat.records[rid])} for rid in report.added],
        "changed": [
            {"id": rid, "old": old, "new": headline_value(cat.records[rid])}
            for rid, old in sorted(changes.old_values.items())
            if rid in cat.records
        ],
        "removed": [{"id": rid, "old": changes.old_values.get(rid)} for rid in report.removed],
    }


def _now() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = int(epoch) if epoch and epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
