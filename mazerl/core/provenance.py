"""Which code is running: the package's version and, in a git checkout, its commit, so every
result (a run's `metrics.json`, a summary's figures) can name the code that produced it."""

import functools
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGE = __name__.split(".")[0]
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the `mazerl` package folder
GIT_TIMEOUT_S = 5.0


def git(folder: Path, *args: str) -> str | None:
    """`git <args>`'s output in `folder`, or None when it fails (no git, not a repository,
    an error, a timeout)."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, timeout=GIT_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _version() -> str | None:
    """The running package's `__version__`, else the installed distribution's version."""
    module = sys.modules.get(PACKAGE)  # imported already: this module lives inside it
    if isinstance(getattr(module, "__version__", None), str):
        return module.__version__
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return None


@functools.cache
def code_identity(folder: Path = PACKAGE_DIR) -> dict:
    """`{"version", "commit", "dirty"}` of the code in `folder` (default: the mazerl package):
    `commit` the full SHA of the git checkout's HEAD, None unless `folder` holds files that
    git tracks (a wheel installed into a virtual environment inside some checkout is not
    that checkout's code); `dirty` whether tracked files under `folder` differ from HEAD
    (untracked files and changes elsewhere in the repository, such as a running study's
    results, do not count), None without a commit. Never raises; cached per process and
    folder, so the dict is shared: copy it before changing it."""
    folder = Path(folder)
    commit = None
    if git(folder, "ls-files", "--error-unmatch", "--", ".") is not None:
        commit = (git(folder, "rev-parse", "--verify", "HEAD") or "").strip() or None
    dirty = None
    if commit is not None:
        status = git(folder, "status", "--porcelain", "--untracked-files=no", "--", ".")
        dirty = None if status is None else bool(status.strip())
    return {"version": _version(), "commit": commit, "dirty": dirty}


def short_code(code: dict | None) -> str:
    """A code identity in a few characters: `1a2b3c4d5e6f`, `1a2b3c4d5e6f+dirty`, or without a
    commit `mazerl 0.1.0` (`unknown` without a version either)."""
    code = code or {}
    if code.get("commit"):
        return code["commit"][:12] + ("+dirty" if code.get("dirty") else "")
    return f"{PACKAGE} {code['version']}" if code.get("version") else "unknown"
