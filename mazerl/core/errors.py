"""Errors a user can cause. Entry points print them as one line and exit non-zero."""


class UserError(Exception):
    """Base class for errors caused by user input (configs, layout files, paths)."""


class ConfigError(UserError, ValueError):
    """A config value is invalid; the message names the key."""


class LayoutError(UserError, ValueError):
    """A maze layout is invalid; the message starts with `file:line:col:` (`file:` when the
    problem has no position, line 0)."""

    def __init__(self, source: str, line: int, col: int, problem: str) -> None:
        self.source, self.line, self.col, self.problem = source, line, col, problem
        where = f"{source}:{line}:{col}" if line > 0 else source
        super().__init__(f"{where}: {problem}")


class CheckpointError(UserError, ValueError):
    """A checkpoint path is missing or does not match the policy."""
