"""Errors a user can cause. Entry points print them as one line and exit non-zero."""

import difflib


class UserError(Exception):
    """Base class for errors caused by user input (configs, layout files, paths)."""


class ConfigError(UserError, ValueError):
    """A config value is invalid; the message names the key."""


class LayoutError(UserError, ValueError):
    """A maze layout is invalid; the message starts with `file:line:col:` (`file:` when the
    problem has no position, line 0).

    Args:
        source: the file (or `<string>`).
        line: 1-based line; 0: no position.
        col: 1-based column.
        problem: what is wrong.
    """

    def __init__(self, source: str, line: int, col: int, problem: str) -> None:
        self.source, self.line, self.col, self.problem = source, line, col, problem
        where = f"{source}:{line}:{col}" if line > 0 else source
        super().__init__(f"{where}: {problem}")


class CheckpointError(UserError, ValueError):
    """A checkpoint path is missing or does not match the policy."""


class JobFailed(Exception):
    """A sweep's job that did not finish (its worker killed or out of memory more often than
    the launcher retries it, a SLURM job out of time): one line naming the job and its log,
    and exit 1 (not a user error)."""


def nearest(word: str, choices: list[str], n: int = 3) -> list[str]:
    """The choices closest to a mistyped word, for a "did you mean" hint.

    A dotted key is compared whole and by its last part, so `gamma` finds `focal.gamma`.

    Args:
        word: what was typed.
        choices: the valid names.
        n: the most returned.

    Returns:
        Up to `n` of `choices`, best first: those nearly as close as the best (similarity
        >= 0.6).
    """

    def score(choice: str) -> float:
        whole = difflib.SequenceMatcher(None, word, choice).ratio()
        last = difflib.SequenceMatcher(None, word.rsplit(".")[-1], choice.rsplit(".")[-1])
        return max(whole, last.ratio())

    ranked = sorted(choices, key=score, reverse=True)
    best = score(ranked[0]) if ranked else 0.0
    return [c for c in ranked[:n] if score(c) >= max(0.6, best - 0.1)]
