"""mazerl's objectives for language-model trainers: a registered advantage estimator times the
focal weight, on a `[P, G]` reward tensor (P prompts, G completions each).

A thin adapter over mazerl's public entry points (`ADVANTAGES` called by name with its
hyperparameters, `success_rate`, `focal_weight`), so TRL's `FocalGRPOTrainer` and verl's
registered estimators compute exactly what `mazerl-train` computes. The policy loss stays the
framework's own.
"""

import inspect
import math

import torch

from mazerl.algos import ADVANTAGES, focal_weight, success_rate
from mazerl.core.errors import ConfigError


def focal_advantages(
    rewards: torch.Tensor, algo: str = "grpo", gamma: float = 0.5, **advantage_kwargs
) -> tuple[torch.Tensor, torch.Tensor]:
    """`[P, G]` rewards -> `[P, G]` advantages g * A and the `[P, 1]` focal weights g.

    A: the advantage estimator registered as `algo` (`grpo`, `drgrpo`, `rloo`, ...) called
    with `advantage_kwargs` (`passk` needs `k`, `w_reinforce` its two weights, as mazerl's
    `algo.advantage_kwargs`); g = (1 - mu_hat)^gamma with mu_hat the group's fraction of
    rewards >= 1 (F-GRPO, Eq. 11-13); gamma = 0 gives A itself. A `ConfigError` names the
    known estimators for an unknown `algo`, and a missing or unknown argument.
    """
    advantages = ADVANTAGES.call(algo, rewards, **advantage_kwargs)
    g = focal_weight(success_rate(rewards), gamma)
    return g * advantages, g


def check_objective(algo: str, gamma: float, advantage_kwargs: dict) -> None:
    """A `ConfigError` for an unknown estimator, an argument it does not take or lacks, or a
    gamma that is not a finite number >= 0 (before any rewards exist)."""
    ADVANTAGES.check_arguments(algo, advantage_kwargs)
    params = list(inspect.signature(ADVANTAGES.get(algo)).parameters.values())[1:]
    missing = [p.name for p in params if p.default is p.empty and p.name not in advantage_kwargs]
    if missing:
        raise ConfigError(f"advantage estimator {algo!r} needs the argument {', '.join(missing)}")
    if not (isinstance(gamma, int | float) and math.isfinite(gamma) and gamma >= 0):
        raise ConfigError(f"focal gamma must be a finite number >= 0, got {gamma!r}")
