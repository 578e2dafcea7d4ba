"""Command-line entry points: a user error is one line on stderr and exit code 2."""

import contextlib
import difflib
import functools
import logging
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from mazerl.core.errors import UserError

F = TypeVar("F", bound=Callable)


def exit_on_user_error(fn: F) -> F:
    """Wrap an entry point: a `UserError` becomes `error: <message>` on stderr and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def check_group_choices(conf_dir: Path, argv: list[str]) -> None:
    """Raise `UserError` for a command-line choice of a config group that has no config file
    (`algo=maxr`, also within a sweep `algo=grpo,maxr`), naming the nearest choices and all
    of them; Hydra itself reports this in many lines. Other arguments are left to Hydra."""
    for arg in argv:
        key, sep, value = arg.lstrip("+").partition("=")
        group = conf_dir / key
        if not sep or "." in key or "/" in key or "(" in value or not group.is_dir():
            continue
        names = sorted(p.stem for p in group.glob("*.yaml"))
        for choice in value.split(","):
            if choice in names or choice == "null":
                continue
            near = difflib.get_close_matches(choice, names, n=3)
            hint = f"; nearest: {', '.join(near)}" if near else ""
            raise UserError(
                f"{key}={choice}: Could not find '{key}/{choice}'{hint}; the choices: "
                f"{', '.join(names)}"
            )


def checks_group_choices(conf_dir: Path) -> Callable[[F], F]:
    """Wrap a Hydra entry point (called without arguments from the command line): an unknown
    config group choice on the command line (`check_group_choices`) is `error: <message>`
    on stderr and exit 2, before Hydra composes the config."""

    def wrap(main: F) -> F:
        @functools.wraps(main)
        def wrapper(*args, **kwargs):
            if not args and not kwargs:
                try:
                    check_group_choices(conf_dir, sys.argv[1:])
                except UserError as e:
                    print(f"error: {e}", file=sys.stderr)
                    sys.exit(2)
            return main(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return wrap


@contextlib.contextmanager
def no_run_dir_on_user_error(run_dir: Path) -> Iterator[None]:
    """On a `UserError` in the block, remove `run_dir` if it holds nothing but what Hydra wrote
    at start-up (`.hydra/`, the job's `.log`), so a bad command leaves no run dir behind; a
    run dir with results (checkpoints, events, a resumed run's files) is kept. Re-raises."""
    try:
        yield
    except UserError:
        found = list(run_dir.iterdir()) if run_dir.is_dir() else []
        if all(p.name == ".hydra" or p.suffix == ".log" for p in found):
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


class BelowLevel(logging.Filter):
    """A logging filter passing records below `level` (info to stdout, warnings to stderr)."""

    def __init__(self, level: str = "WARNING") -> None:
        super().__init__()
        self.level = logging.getLevelName(level)

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < self.level
