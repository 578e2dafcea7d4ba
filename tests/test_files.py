"""The lock that the jobs of a sweep share their caches under, and the cache folder."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from mazerl.core import files
from mazerl.core.cache import cache_root
from mazerl.core.files import LockHeld, locked

ROOT = Path(__file__).resolve().parents[1]

HOLD = """
import sys, time
from pathlib import Path
from mazerl.core.files import locked
with locked(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(1.5)
    Path(sys.argv[2]).write_text("done")
"""

KILLED = """
import os, signal, sys
from pathlib import Path
from mazerl.core.files import locked
with locked(Path(sys.argv[1])):
    os.kill(os.getpid(), signal.SIGKILL)
"""


def python(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", code, *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)


def test_a_second_process_waits_for_the_holder_then_holds_the_lock_itself(tmp_path):
    lock, marker = tmp_path / ".x.lock", tmp_path / "done"
    holder = python(HOLD, str(lock), str(marker))
    assert holder.stdout.readline() == "held\n"
    told = []
    with locked(lock, told.append):
        assert marker.read_text() == "done"  # the holder's block ended before ours began
        host, pid, _ = lock.read_text().split()
        assert (host, int(pid)) == (socket.gethostname(), os.getpid())
    assert told == [f"waiting for another job holding the lock {lock}"]
    assert holder.wait(10) == 0 and not lock.exists()


def test_a_lock_left_by_a_killed_job_of_this_host_is_taken_over_at_once(tmp_path):
    lock = tmp_path / ".x.lock"
    killed = python(KILLED, str(lock))
    assert killed.wait(30) == -signal.SIGKILL
    host, pid, _ = lock.read_text().split()
    assert (host, int(pid)) == (socket.gethostname(), killed.pid)  # left behind
    told, t0 = [], time.monotonic()
    with locked(lock, told.append):
        assert int(lock.read_text().split()[1]) == os.getpid()
    assert time.monotonic() - t0 < 5 and told == []  # no waiting for LOCK_STALE_S (300 s)


def test_without_waiting_a_live_holder_is_named_at_once_and_a_killed_one_taken_over(tmp_path):
    lock, marker = tmp_path / ".x.lock", tmp_path / "done"
    holder = python(HOLD, str(lock), str(marker))
    assert holder.stdout.readline() == "held\n"
    told, t0 = [], time.monotonic()
    try:
        with locked(lock, told.append, wait=False):
            raise AssertionError("a live holder's lock was taken")
    except LockHeld as held:
        assert (held.path, held.host, held.pid) == (lock, socket.gethostname(), holder.pid)
        assert str(held) == f"{lock} is held by pid {holder.pid} on host {held.host}"
    # no waiting: under one poll (LOCK_POLL_S, 0.5 s), let alone LOCK_STALE_S (300 s)
    assert time.monotonic() - t0 < files.LOCK_POLL_S and told == []
    assert not marker.exists() and lock.read_text().split()[1] == str(holder.pid)
    assert holder.wait(10) == 0 and not lock.exists()
    assert list(tmp_path.iterdir()) == [marker]  # no temporary link file left behind
    killed = python(KILLED, str(lock))
    assert killed.wait(30) == -signal.SIGKILL
    assert int(lock.read_text().split()[1]) == killed.pid  # left behind
    t0 = time.monotonic()
    with locked(lock, told.append, wait=False):
        assert int(lock.read_text().split()[1]) == os.getpid()
    assert time.monotonic() - t0 < 5 and told == [] and not lock.exists()


def test_another_hosts_lock_is_kept_while_touched_and_taken_once_it_stops(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "LOCK_STALE_S", 1.0)
    monkeypatch.setattr(files, "LOCK_POLL_S", 0.05)
    lock = tmp_path / ".x.lock"
    lock.write_text("node17 4242 0123abcd\n")  # a holder on another host: no pid to check

    def heartbeat() -> None:  # the holder's heartbeat: a new mtime every 0.2 s for 2 s
        for i in range(1, 11):
            os.utime(lock, ns=(i * 10**9, i * 10**9))
            time.sleep(0.2)

    beat = threading.Thread(target=heartbeat)
    t0 = time.monotonic()
    beat.start()
    with locked(lock):
        waited = time.monotonic() - t0
    beat.join()
    # held while touched (2 s), taken 1 s (LOCK_STALE_S) after the last touch
    assert 2.5 < waited < 6


def test_without_waiting_another_hosts_lock_raises_once_touched_and_is_taken_if_not(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(files, "LOCK_STALE_S", 1.0)
    monkeypatch.setattr(files, "LOCK_POLL_S", 0.05)
    lock = tmp_path / ".x.lock"
    lock.write_text("node17 4242 0123abcd\n")
    touch = threading.Timer(0.3, os.utime, (lock,), {"ns": (10**9, 10**9)})  # a heartbeat
    t0 = time.monotonic()
    touch.start()
    try:
        with locked(lock, wait=False):
            raise AssertionError("a touched lock of another host was taken")
    except LockHeld as held:
        assert (held.host, held.pid) == ("node17", 4242)
    touch.join()
    assert 0.3 < time.monotonic() - t0 < files.LOCK_STALE_S  # raised at the touch
    t0 = time.monotonic()
    with locked(lock, wait=False):  # untouched now: its holder is gone after LOCK_STALE_S
        assert lock.read_text().split()[1] == str(os.getpid())
    assert 1.0 < time.monotonic() - t0 < 3


def test_an_empty_lock_file_of_the_flock_version_is_taken_at_once(tmp_path):
    lock = tmp_path / ".x.lock"
    lock.write_text("")
    told = []
    with locked(lock, told.append):
        assert lock.read_text().split()[1] == str(os.getpid())
    assert told == [] and not lock.exists()


def test_the_cache_folder_is_the_setting_else_mazerl_cache_else_under_the_launch_dir(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("MAZERL_CACHE", str(tmp_path / "env"))
    monkeypatch.chdir(tmp_path)
    assert cache_root(str(tmp_path / "setting")) == tmp_path / "setting"
    assert (tmp_path / "setting").is_dir()
    assert cache_root(None) == tmp_path / "env"
    monkeypatch.delenv("MAZERL_CACHE")
    assert cache_root(None) == tmp_path / "outputs" / "base_models"
