"""Named phases of a training iteration, measured only when a benchmark asks.

The training code marks its phases (`with phase("backward"): ...`); outside `measured` a mark
costs one check. `mazerl-bench` measures an iteration of the trainer's own code by phase with
`measured()` (seconds) or `measured(clock)` with another clock (a FLOP counter's total).
"""

import contextlib
import time
from collections.abc import Callable, Iterator

_meter: tuple[Callable[[], float], dict[str, float]] | None = None


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Add what the clock advances inside the block to phase `name` (while `measured`).

    Args:
        name: the phase.
    """
    if _meter is None:
        yield
        return
    clock, totals = _meter
    start = clock()
    try:
        yield
    finally:
        totals[name] = totals.get(name, 0.0) + clock() - start


@contextlib.contextmanager
def measured(clock: Callable[[], float] = time.perf_counter) -> Iterator[dict[str, float]]:
    """Measure the phases run inside the block.

    Args:
        clock: what a phase adds up: its advance from the phase's start to its end.

    Returns:
        `{phase: total}`, filled as the phases end (seconds with the default clock).
    """
    global _meter
    outer, totals = _meter, {}
    _meter = (clock, totals)
    try:
        yield totals
    finally:
        _meter = outer
