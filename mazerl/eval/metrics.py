"""Metrics of an evaluation set computed from its sampled successes, registered by name.

A metric is a function `fn(correct, n)` of `correct [M]` (how many of the n samples of each of
the set's first `eval.sampled_mazes` mazes succeeded) and `n`, returning one real number (a
Python or NumPy int or float): `evaluate_set` logs it as `eval/<set>/<name>` (TensorBoard,
`metrics.json`, `eval/step_*.json`, a column of `mazerl-summarize`'s tables). A new metric is
one module of `mazerl.eval` that uses `@METRICS.register("NAME")` (the registry finds it,
`mazerl.core.registry`). No torch here.
"""

import numpy as np

from mazerl.core.registry import Registry

# a module of `mazerl.eval` that uses `@METRICS.register("NAME")` holds a metric
METRICS = Registry("evaluation metric", "mazerl.eval", ("METRICS.register",))


@METRICS.register("success_rate")
def success_rate(correct: np.ndarray, n: int) -> float:
    """The share of the samples that succeeded, over every maze.

    Args:
        correct: `[M]` successes of each maze's n samples.
        n: samples per maze.

    Returns:
        The mean of `correct / n`, in [0, 1].
    """
    return float((correct / n).mean())


@METRICS.register("coverage")
def coverage(correct: np.ndarray, n: int) -> float:
    """The share of mazes solved at least once in n samples.

    Args:
        correct: `[M]` successes of each maze's n samples.
        n: samples per maze.

    Returns:
        The share of mazes with `correct > 0`, in [0, 1].
    """
    return float((correct > 0).mean())
