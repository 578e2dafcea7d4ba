"""Command-line entry points: a user error is one line on stderr and exit code 2."""

import functools
import sys
from collections.abc import Callable
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
