"""The code's identity (`mazerl.core.provenance`) from real git repositories."""

import subprocess

import pytest

import mazerl
from mazerl.core.provenance import PACKAGE_DIR, code_identity, short_code


def git(folder, *args) -> str:
    """`git <args>` in `folder` with a fixed identity and no user or system config."""
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture(autouse=True)
def fresh():
    code_identity.cache_clear()  # each test sees the repository as it is now
    yield
    code_identity.cache_clear()


@pytest.fixture
def repo(tmp_path):
    """A git repository holding `pkg/code.py` (committed) and `notes.txt` outside `pkg/`."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "code.py").write_text("x = 1\n")
    (root / "notes.txt").write_text("notes\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_a_checkout_gives_its_head_then_dirty_after_a_tracked_edit(repo):
    pkg = repo / "pkg"
    head = git(repo, "rev-parse", "HEAD")
    assert len(head) == 40
    assert code_identity(pkg) == {"version": mazerl.__version__, "commit": head, "dirty": False}
    (pkg / "new.py").write_text("untracked\n")  # untracked files do not count
    (repo / "notes.txt").write_text("edited\n")  # nor tracked changes outside the folder
    code_identity.cache_clear()
    assert code_identity(pkg)["dirty"] is False
    (pkg / "code.py").write_text("x = 2\n")
    assert code_identity(pkg)["dirty"] is False  # cached: read once per process
    code_identity.cache_clear()
    assert code_identity(pkg) == {"version": mazerl.__version__, "commit": head, "dirty": True}
    git(repo, "commit", "-q", "-am", "second")
    code_identity.cache_clear()
    second = code_identity(pkg)
    assert second["commit"] == git(repo, "rev-parse", "HEAD") != head
    assert second["dirty"] is False
    assert short_code(second) == second["commit"][:12]
    assert short_code({**second, "dirty": True}) == second["commit"][:12] + "+dirty"


def test_outside_a_checkout_there_is_no_commit(tmp_path, repo):
    alone = tmp_path / "alone"
    alone.mkdir()
    assert code_identity(alone) == {"version": mazerl.__version__, "commit": None, "dirty": None}
    # an untracked folder inside a checkout (a virtual environment's installed package)
    (repo / ".venv" / "pkg").mkdir(parents=True)
    assert code_identity(repo / ".venv" / "pkg")["commit"] is None
    git(tmp_path / "alone", "init", "-q")  # a repository without a commit
    assert code_identity.__wrapped__(alone)["commit"] is None
    assert short_code(code_identity(alone)) == f"mazerl {mazerl.__version__}"
    assert short_code(None) == "unknown"


def test_no_git_binary_gives_none_not_an_error(repo, monkeypatch):
    monkeypatch.setenv("PATH", "")
    assert code_identity(repo / "pkg") == {
        "version": mazerl.__version__,
        "commit": None,
        "dirty": None,
    }


def test_a_hanging_git_gives_none(repo, monkeypatch):
    monkeypatch.setattr("mazerl.core.provenance.GIT_TIMEOUT_S", 1e-6)
    assert code_identity(repo / "pkg")["commit"] is None


def test_the_package_default_is_cached_per_process():
    first = code_identity()
    assert code_identity() is first and first == code_identity(PACKAGE_DIR)
    assert first["version"] == mazerl.__version__
    assert first["commit"] is None or len(first["commit"]) == 40
