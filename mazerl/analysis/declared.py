"""When a claims file was declared, against the runs it judges, computed from git: the claims
file's first commit (hash and time) against the code commit each finished run recorded
(`metrics.json` `code.commit`, the code it ran). A run cannot start before the code it ran was
committed, and a run whose code commit descends from the claims file's first commit started
after the file existed. No run records a wall-clock start time, so the commits are the
evidence; claims.md prints the line (docs/concepts/verdicts.md)."""

from collections.abc import Iterable
from pathlib import Path

from mazerl.core.provenance import git


def first_commit(path: Path) -> tuple[str, str] | None:
    """`(hash, committer time ISO)` of the commit that first added the file at `path`
    (following renames), or None where git or the file's history is not available."""
    path = Path(path).resolve()
    out = git(path.parent, "log", "--follow", "--diff-filter=A", "--format=%H %cI", "--",
              path.name)  # fmt: skip
    lines = (out or "").split()
    return (lines[-2], lines[-1]) if len(lines) >= 2 else None


def commit_time(folder: Path, commit: str) -> str | None:
    """The committer time (ISO) of `commit`, None where this history lacks it."""
    out = git(folder, "show", "-s", "--format=%cI", commit)
    return out.strip() if out else None


def results_commit(folders: Iterable[Path]) -> tuple[str, str] | None:
    """`(hash, time ISO)` of the first commit that added a run's `metrics.json` under any of
    `folders` (when the first results were committed), or None without such history."""
    found = []
    for folder in folders:
        out = git(Path(folder), "log", "--diff-filter=A", "--format=%H %cI", "--reverse", "--",
                  "*/metrics.json")  # fmt: skip
        lines = (out or "").split()
        if len(lines) >= 2:
            found.append((lines[1], lines[0]))
    return min(found)[::-1] if found else None


def declared_line(path: Path, commits: Iterable[str], folders: Iterable[Path]) -> str:
    """One line for claims.md's header: whether the claims file at `path` was first committed
    before, during or after the runs under `folders` whose recorded code `commits` are given
    (one per finished run; repeats allowed), with the hashes and times. Runs that record no
    code commit are dated by the commit that first added their results (the claims came
    after the runs where that commit is an ancestor of the claims file's first). Where it
    cannot say (no git, no history for the file, a shallow clone), the line says why."""
    path = Path(path).resolve()
    folder = path.parent
    if git(folder, "rev-parse", "--git-dir") is None:
        return "Declared: not computed here (no git history beside the claims file)."
    if (git(folder, "rev-parse", "--is-shallow-repository") or "").strip() == "true":
        return "Declared: not computed here (a shallow clone: `git fetch --unshallow` first)."
    first = first_commit(path)
    if first is None:
        return "Declared: not computed (the claims file is not committed)."
    declared = f"the claims file was first committed in {first[0][:7]} ({first[1]})"
    results = results_commit(folders)
    committed = (
        f"; the first results were committed in {results[0][:7]} ({results[1]})" if results else ""
    )
    commits = list(commits)
    if not commits:
        if results and git(folder, "merge-base", "--is-ancestor", results[0], first[0]) is not None:
            return f"Declared **after the runs**: {declared}{committed}."
        return f"Declared: not determined ({declared}; no run records the code it ran{committed})."
    known = {c: commit_time(folder, c) for c in set(commits)}
    missing = sorted(c[:7] for c, t in known.items() if t is None)
    if missing:
        return (f"Declared: not determined ({declared}; the runs' code commit "
                f"{', '.join(missing)} is not in this history).")  # fmt: skip
    after = {c for c in known if git(folder, "merge-base", "--is-ancestor", first[0], c) is None}
    earliest = min(known, key=lambda c: known[c])
    n_after = sum(c in after for c in commits)
    when = (
        "before the runs" if n_after == 0
        else "after the runs" if n_after == len(commits) else "during the runs"
    )  # fmt: skip
    return (
        f"Declared **{when}**: {declared}; {len(commits) - n_after} of the {len(commits)} "
        f"finished runs ran code that contains it (the earliest run's code: {earliest[:7]}, "
        f"{known[earliest]}){committed}."
    )
