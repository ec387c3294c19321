"""The catalog on disk: versioned, sharded YAML, written atomically, read through a cache.

Layout of a catalog folder::

    catalog.yaml                       schema_version, revision, settings
    history.yaml                       one entry per revision: added / changed / removed
    records/<model>/<framework>.yaml   schema_version and the records of that shard, by id
    .cache/                            derived JSON, keyed by the sha256 of each YAML file
    .lock                              held while a writer works

A save writes every new file to a temporary name first, then a journal listing the renames,
then renames; a crash before the journal leaves the old catalog, a crash after it is rolled
forward by the next writer or reader. Files are only written when their bytes change.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import TypeAdapter

from . import yamlio
from .gcpause import gc_paused
from .schema import SCHEMA_VERSION, Record, slug

_RECORDS = TypeAdapter(list[Record])

CATALOG_FILE = "catalog.yaml"
HISTORY_FILE = "history.yaml"
RECORDS_DIR = "records"
CACHE_DIR = ".cache"
LOCK_FILE = ".lock"
JOURNAL = ".journal.json"

# update_to_N: a function turning a version N-1 document into version N, one step each.
MIGRATIONS: dict[int, Callable[[dict, str], dict]] = {}


class CatalogError(Exception):
    """A catalog that cannot be read or written, with the file that is at fault."""


@dataclass
class Catalog:
    path: Path
    revision: int = 0
    records: dict[str, Record] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    migrated: list[str] = field(default_factory=list)


def shard_path(record: Record) -> str:
    return f"{RECORDS_DIR}/{slug(record.benchmark.model)}/{slug(record.config.framework)}.yaml"


def _upgrade(doc: dict, name: str, migrated: list[str]) -> dict:
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise CatalogError(f"{name}: not a benchcat catalog file (no schema_version)")
    version = doc["schema_version"]
    if not isinstance(version, int) or version < 1:
        raise CatalogError(f"{name}: schema_version {version!r} is not a positive integer")
    if version > SCHEMA_VERSION:
        raise CatalogError(
            f"{name}: schema_version {version} is newer than this benchcat understands "
            f"({SCHEMA_VERSION}); upgrade benchcat to read it"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version + 1)
        if step is None:
            raise CatalogError(f"{name}: no migration from schema_version {version} to {version + 1}")
        doc = step(doc, name)
        version += 1
        doc["schema_version"] = version
        if name not in migrated:
            migrated.append(name)
    return doc


def _parse_yaml(data: bytes, rel: str, migrated: list[str]) -> dict:
    try:
        doc = yamlio.loads(data)
    except Exception as exc:  # yaml errors carry the line
        raise CatalogError(f"{rel}: invalid YAML: {exc}") from exc
    return _upgrade(doc, rel, migrated)


def _cache_dir(root: Path) -> Path:
    return root / CACHE_DIR / f"records-v{SCHEMA_VERSION}"


def _doc_json(doc: dict) -> bytes | None:
    """A head document (catalog.yaml, history.yaml) as cache JSON; None when JSON cannot hold it
    (a hand-edited file with a YAML timestamp, say): such a file is simply read as YAML."""
    try:
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError):
        return None


def _read_cached(root: Path, rel: str) -> tuple[bytes, Path]:
    """A catalog file's bytes, and the cache file named by their sha256."""
    try:
        data = (root / rel).read_bytes()
    except OSError as exc:
        raise CatalogError(f"{rel}: cannot read: {exc.strerror}") from exc
    return data, _cache_dir(root) / f"{hashlib.sha256(data).hexdigest()}.json"


def _read_doc(root: Path, rel: str, migrated: list[str], use_cache: bool = True) -> dict:
    """catalog.yaml or history.yaml: from the JSON cache of its exact bytes, else from the YAML.

    The history of a 10,000-record catalog is 10,000 entries: 0.4 s through libyaml, 0.02 s as JSON.
    """
    data, cached = _read_cached(root, rel)
    if use_cache:
        try:
            doc = json.loads(cached.read_bytes())
            if isinstance(doc, dict):
                return doc
        except (OSError, ValueError):
            pass
    before = len(migrated)
    doc = _parse_yaml(data, rel, migrated)
    blob = _doc_json(doc) if use_cache and len(migrated) == before else None
    if blob is not None:
        _write_atomic(cached, blob)
    return doc


def _shard_records(root: Path, rel: str, migrated: list[str], use_cache: bool) -> list[Record]:
    """The records of one shard: from the JSON cache of its exact bytes, else from the YAML."""
    data, cached = _read_cached(root, rel)
    if use_cache:
        try:
            return _RECORDS.validate_json(cached.read_bytes())
        except (OSError, ValueError):
            pass  # no cache yet, or a damaged one: read the YAML
    doc = _parse_yaml(data, rel, migrated)
    records = []
    for i, item in enumerate(doc.get("records") or []):
        try:
            records.append(Record.model_validate(item))
        except Exception as exc:
            raise CatalogError(f"{rel}: record {i + 1}: {exc}") from exc
    if use_cache and not migrated:
        _write_atomic(cached, _RECORDS.dump_json(records, exclude_defaults=True))
    return records


@gc_paused
def load(path: str | os.PathLike, *, use_cache: bool = True) -> Catalog:
    """Read a catalog folder. A missing folder is an empty catalog."""
    root = Path(path)
    if (root / JOURNAL).exists():
        with lock(root):
            recover(root)
    cat = Catalog(path=root)
    if not (root / CATALOG_FILE).exists():
        if (root / RECORDS_DIR).exists():
            raise CatalogError(f"{root}: has records/ but no {CATALOG_FILE}")
        return cat
    head = _read_doc(root, CATALOG_FILE, cat.migrated, use_cache)
    cat.revision = int(head.get("revision", 0))
    cat.settings = head.get("settings") or {}
    if (root / HISTORY_FILE).exists():
        hist = _read_doc(root, HISTORY_FILE, cat.migrated, use_cache)
        cat.history = hist.get("revisions") or []
    for shard in sorted((root / RECORDS_DIR).rglob("*.yaml")):
        rel = shard.relative_to(root).as_posix()
        for record in _shard_records(root, rel, cat.migrated, use_cache):
            if record.id in cat.records:
                raise CatalogError(f"{rel}: duplicate record id {record.id}")
            if shard_path(record) != rel:
                raise CatalogError(f"{rel}: record {record.id} belongs in {shard_path(record)}")
            cat.records[record.id] = record
    return cat


def read_settings(path: str | os.PathLike) -> dict:
    """Only the settings of catalog.yaml (user formats, ...), without loading any record."""
    root = Path(path)
    if not (root / CATALOG_FILE).exists():
        return {}
    return _read_doc(root, CATALOG_FILE, []).get("settings") or {}


def _write_atomic(target: Path, data: bytes) -> None:
    """Best effort for caches: they only speed things up."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError:
        pass


def lock(root: Path, wait: float = 0) -> FileLock:
    """The writer lock; ``wait`` seconds before giving up (0: fail at once)."""
    root.mkdir(parents=True, exist_ok=True)
    return FileLock(str(root / LOCK_FILE), timeout=wait)


def acquire(root: Path, wait: float = 0) -> FileLock:
    held = lock(root, wait)
    try:
        held.acquire()
    except Timeout as exc:
        raise CatalogError(
            f"{root}: another benchcat process is writing this catalog (lock {root / LOCK_FILE}); "
            "retry when it is done, or pass --wait SECONDS"
        ) from exc
    return held


def documents(cat: Catalog, shards: dict[str, list[Record]]) -> dict[str, dict]:
    """Every file of the catalog as the document to write, by relative path."""
    docs = {
        rel: {"schema_version": SCHEMA_VERSION, "records": [r.model_dump(mode="json", exclude_none=True) for r in recs]}
        for rel, recs in shards.items()
    }
    docs[CATALOG_FILE] = {"schema_version": SCHEMA_VERSION, "revision": cat.revision, "settings": cat.settings}
    docs[HISTORY_FILE] = {"schema_version": SCHEMA_VERSION, "revisions": cat.history}
    return docs


@gc_paused
def save(cat: Catalog, *, crash_after: int | None = None) -> list[str]:
    """Write the catalog atomically; returns the files that changed. Caller holds the lock.

    ``crash_after`` is for tests: raise after that many renames, as a crash would stop.
    """
    root = cat.path
    root.mkdir(parents=True, exist_ok=True)
    shards = shards_of(cat)
    docs = documents(cat, shards)
    blobs = {rel: yamlio.dumps(doc).encode() for rel, doc in docs.items()}
    existing = {p.relative_to(root).as_posix() for p in (root / RECORDS_DIR).rglob("*.yaml")}
    renames: list[tuple[str, str]] = []
    for rel, data in sorted(blobs.items()):
        target = root / rel
        try:
            if target.read_bytes() == data:
                continue
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        renames.append((tmp.relative_to(root).as_posix(), rel))
    deletes = sorted(existing - set(blobs))
    _refresh_cache(root, shards, blobs, {rel: docs[rel] for rel in (CATALOG_FILE, HISTORY_FILE)})
    if not renames and not deletes:
        return []
    journal = root / JOURNAL
    tmp_journal = root / f"{JOURNAL}.tmp-{os.getpid()}"
    tmp_journal.write_text(json.dumps({"renames": renames, "deletes": deletes}))
    os.replace(tmp_journal, journal)
    _apply(root, renames, deletes, crash_after)
    journal.unlink()
    return sorted([dst for _, dst in renames] + deletes)


def shards_of(cat: Catalog) -> dict[str, list[Record]]:
    shards: dict[str, list[Record]] = {}
    for rid in sorted(cat.records):
        shards.setdefault(shard_path(cat.records[rid]), []).append(cat.records[rid])
    return shards


def _refresh_cache(
    root: Path, shards: dict[str, list[Record]], blobs: dict[str, bytes], heads: dict[str, dict]
) -> None:
    """Cache every file about to be on disk under its hash; drop caches of bytes now gone."""
    folder = _cache_dir(root)
    keep = set()
    for rel, records in shards.items():
        name = f"{hashlib.sha256(blobs[rel]).hexdigest()}.json"
        keep.add(name)
        if not (folder / name).exists():
            _write_atomic(folder / name, _RECORDS.dump_json(records, exclude_defaults=True))
    for rel, doc in heads.items():
        name = f"{hashlib.sha256(blobs[rel]).hexdigest()}.json"
        blob = _doc_json(doc)
        if blob is not None:
            keep.add(name)
            if not (folder / name).exists():
                _write_atomic(folder / name, blob)
    if folder.exists():
        for stale in folder.iterdir():
            if stale.name not in keep:
                stale.unlink(missing_ok=True)


def _apply(root: Path, renames, deletes, crash_after: int | None = None) -> None:
    done = 0
    for src, dst in renames:
        if crash_after is not None and done >= crash_after:
            raise RuntimeError("simulated crash during save")
        if (root / src).exists():
            os.replace(root / src, root / dst)
        done += 1
    for rel in deletes:
        try:
            (root / rel).unlink()
        except FileNotFoundError:
            pass
    for rel in deletes:
        parent = (root / rel).parent
        if parent != root and parent.exists() and not any(parent.iterdir()):
            parent.rmdir()


def recover(root: Path) -> bool:
    """Finish a save that a crash interrupted (caller holds the lock); drop stray temp files."""
    journal = root / JOURNAL
    recovered = False
    if journal.exists():
        try:
            plan = json.loads(journal.read_text())
        except ValueError:
            plan = None
        if plan is not None:
            _apply(root, plan["renames"], plan["deletes"])
            recovered = True
        journal.unlink()
    for stray in root.rglob("*.tmp-*"):
        if CACHE_DIR not in stray.parts:
            stray.unlink()
    return recovered
