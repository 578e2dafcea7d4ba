"""Command-line entry points: a user error is one line on stderr and exit code 2."""

import argparse
import contextlib
import functools
import logging
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from mazerl.core.errors import UserError, nearest

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


def hydra_task(fn: F) -> F:
    """Wrap a Hydra task function `fn(cfg)` (`mazerl-train`'s `run`, ...) for its user errors.

    In a single run, a `UserError` is `error: <message>` on stderr and exit 2, and the run dir
    is removed again if it holds nothing but what Hydra wrote at start-up
    (`no_run_dir_on_user_error`). In a sweep's job the line goes to the job's console and log
    and the job's folder stays as the record of why it stopped; the error is raised again (as
    a plain `UserError`, which pickles across processes), so Hydra records the job as failed
    rather than its worker crashing: no launcher retries it, the other jobs run on, and the
    driver ends with the same line and exit 2 (`mazerl.apps.launch`).
    """

    @functools.wraps(fn)
    def wrapper(cfg):
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hydra = HydraConfig.get()
        sweep = hydra.mode == RunMode.MULTIRUN
        try:
            if sweep:
                return fn(cfg)
            with no_run_dir_on_user_error(Path(hydra.runtime.output_dir)):
                return fn(cfg)
        except UserError as e:
            if not sweep:
                print(f"error: {e}", file=sys.stderr)
                sys.exit(2)
            logging.getLogger(fn.__module__).error(f"error: {e}")
            raise UserError(str(e)) from None

    return wrapper  # type: ignore[return-value]


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


class ArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose user errors are one line, `error: <prog>: <message>`,
    and exit 2, as every other user error; an unknown option names the nearest ones."""

    def error(self, message: str) -> None:
        if message.startswith("unrecognized arguments: "):
            close = nearest(message.split(": ", 1)[1].split()[0], sorted(set(self._options())))
            message += f"; did you mean {' or '.join(close)}?" if close else ""
        print(f"error: {self.prog}: {message}", file=sys.stderr)
        sys.exit(2)

    def _options(self) -> list[str]:
        """Every option string of this parser and its subcommands'."""
        found = []
        for action in self._actions:
            found += action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found += sub._options()
        return found
