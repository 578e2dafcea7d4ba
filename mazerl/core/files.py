"""Files that several jobs share: atomic JSON, pickled caches, inter-process locks, hashes,
a finished run's `metrics.json`."""

import contextlib
import hashlib
import json
import os
import pickle
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FORMAT = 1  # bump to invalidate every cached artifact keyed by `config_hash`


def config_hash(*parts) -> str:
    """16 hex digits identifying JSON-able `parts` (dict key order does not matter)."""
    blob = json.dumps([FORMAT, *parts], sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


LOCK_POLL_S = 0.5  # how often a waiting job looks at the lock again
LOCK_HEARTBEAT_S = 15.0  # how often the holder touches its lock file (its mtime)
LOCK_STALE_S = 300.0  # a lock file unchanged this long while watched has lost its holder


class LockHeld(Exception):
    """`locked(path, wait=False)` found `path` held by a live holder: pid `pid` on `host`."""

    def __init__(self, path: Path, host: str, pid: int) -> None:
        self.path, self.host, self.pid = path, host, pid
        super().__init__(f"{path} is held by pid {pid} on host {host}")


@contextlib.contextmanager
def locked(
    path: Path, waiting: Callable[[str], None] | None = None, *, wait: bool = True
) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the block: the file exists while it is held and
    names its holder (`host pid token`). Another process holding it makes this wait (`waiting`,
    if given, is told so once, with the lock path); with `wait=False` a holder known alive
    raises `LockHeld` instead: one on this host whose pid runs (at once), or one on another
    host whose lock file was touched (its heartbeat) while this process watched. A dead or
    stale holder is taken over as below either way, so `wait=False` may still watch another
    host's untouched lock for up to `LOCK_STALE_S`.

    The lock is taken by hard-linking a file that already holds the owner's line to `path`,
    which succeeds for one process only (checked by the link count, as `open(2)` advises for
    NFS), so it holds across hosts on any shared file system with hard links: NFS (v2 to v4,
    with or without `nolock`), Lustre and GPFS (with or without flock support), BeeGFS and
    local disks; unlike `flock`, which some of these keep per host or refuse. While held, a
    thread touches the file every `LOCK_HEARTBEAT_S`. The lock is stale, and taken over, when
    its holder ran on this host and its pid is gone (a killed job: at once), or when the file
    has not changed for `LOCK_STALE_S` seconds while this process watched (a holder on another
    host that died with its node: after 5 minutes; watched time, so clocks need not agree).
    An empty file is a lock of the earlier `flock` version and is taken at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    owner = f"{socket.gethostname()} {os.getpid()} {uuid.uuid4().hex}\n"
    seen, since = None, time.monotonic()
    while not _link_lock(path, owner):
        state = _lock_state(path)
        if state is None:  # released meanwhile
            continue
        touched = seen is not None and state != seen  # changed while watched: alive
        if state != seen:
            seen, since = state, time.monotonic()
        if _holder_gone(state[0]) or time.monotonic() - since > LOCK_STALE_S:
            with locked(path.with_name(f"{path.name}.break")):  # one breaker at a time
                if _lock_state(path) == state:  # not released or touched meanwhile
                    path.unlink()
            continue
        host, pid = state[0].split()[:2]  # a holder line (else `_holder_gone` above)
        if not wait and (touched or host == socket.gethostname()):
            raise LockHeld(path, host, int(pid))
        if waiting is not None:
            waiting(f"waiting for another job holding the lock {path}")
            waiting = None
        time.sleep(LOCK_POLL_S)
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(LOCK_HEARTBEAT_S):
            with contextlib.suppress(OSError):
                os.utime(path)

    beat = threading.Thread(target=heartbeat, name=f"lock {path.name}", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()
        state = _lock_state(path)
        if state is not None and state[0] == owner:  # still ours (not taken over as stale)
            path.unlink(missing_ok=True)


def _link_lock(path: Path, owner: str) -> bool:
    """Try once to create the lock file `path` holding `owner`; whether this process got it."""
    tmp = path.with_name(f".{path.name}.{owner.split()[2]}")
    tmp.write_text(owner)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # on NFS a link can be made although the reply says it failed
        if os.stat(tmp).st_nlink != 2:
            tmp.unlink()
            raise
    held = os.stat(tmp).st_nlink == 2
    tmp.unlink()
    return held


def _lock_state(path: Path) -> tuple[str, int] | None:
    """The lock file's text and mtime (ns), or None when there is no lock file. Opening the
    file revalidates NFS's cached attributes (close-to-open consistency)."""
    try:
        with open(path) as f:
            return f.read(), os.fstat(f.fileno()).st_mtime_ns
    except FileNotFoundError:
        return None


def _holder_gone(owner: str) -> bool:
    """Whether the holder named by a lock file's text is known dead: no holder line (a lock
    file of the `flock` version), or a holder on this host whose pid no longer runs."""
    fields = owner.split()
    if len(fields) < 3:
        return True
    if fields[0] != socket.gethostname():
        return False
    try:
        os.kill(int(fields[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


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


def read_metrics(path: Path) -> tuple[dict | None, str]:
    """A finished run's `metrics.json`: `(metrics, "")`, or `(None, why it is unusable)` when
    it cannot be read, is not JSON or has no numeric `final` metrics."""
    try:
        metrics = json.loads(Path(path).read_text())
    except OSError as e:
        return None, f"unreadable metrics.json ({e.strerror})"
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        return None, f"unreadable metrics.json ({e.__class__.__name__}: {e})"
    final = metrics.get("final") if isinstance(metrics, dict) else None
    numbers = isinstance(final, dict) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in final.values()
    )
    if not numbers:
        return None, "unreadable metrics.json (no numeric 'final' metrics)"
    return metrics, ""
