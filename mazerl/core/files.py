"""Files that several jobs share: atomic JSON, pickled caches, inter-process locks, hashes."""

import contextlib
import fcntl
import hashlib
import json
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FORMAT = 1  # bump to invalidate every cached artifact keyed by `config_hash`


def config_hash(*parts) -> str:
    """16 hex digits identifying JSON-able `parts` (dict key order does not matter)."""
    blob = json.dumps([FORMAT, *parts], sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


@contextlib.contextmanager
def locked(path: Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the block. Another process
    holding it makes this wait; `waiting`, if given, is told so once, with the lock path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(f"waiting for another job holding the lock {path}")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached_pickle(
    path: Path, build: Callable[[], T], log: Callable[[str], None] | None = None
) -> T:
    """`build()`, stored once at `path` (pickle) and read back by later calls. Parallel jobs
    wait on a file lock beside it (`log` is told once); an unreadable file is built again and
    replaced; a reader never sees half a file."""
    with locked(path.with_suffix(".lock"), log):
        if path.exists():
            try:
                return pickle.loads(path.read_bytes())
            except (OSError, EOFError, pickle.UnpicklingError, AttributeError):
                pass  # unreadable: built again and replaced
        obj = build()
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        tmp.write_bytes(pickle.dumps(obj))
        os.replace(tmp, path)
    return obj


def write_json_atomic(obj, path: Path) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
