"""mazerl's objectives for language-model trainers: a registered advantage estimator times the
focal weight, on a `[P, G]` reward tensor (P prompts, G completions each).

A thin adapter over mazerl's public entry points (`ADVANTAGES` looked up by name,
`success_rate`, `focal_weight`), so TRL's `FocalGRPOTrainer` and verl's registered estimators
compute exactly what `mazerl-train` computes. The policy loss stays the framework's own.
"""

import torch

from mazerl.algos import ADVANTAGES, focal_weight, success_rate


def focal_advantages(
    rewards: torch.Tensor, algo: str = "grpo", gamma: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """`[P, G]` rewards -> `[P, G]` advantages g * A and the `[P, 1]` focal weights g.

    A: the advantage estimator registered as `algo` (`grpo`, `drgrpo`, `rloo`, ...);
    g = (1 - mu_hat)^gamma with mu_hat the group's fraction of rewards >= 1 (F-GRPO, Eq. 11-13);
    gamma = 0 gives A itself. A `ConfigError` names the known estimators for an unknown `algo`.
    """
    advantages = ADVANTAGES.get(algo)(rewards)
    g = focal_weight(success_rate(rewards), gamma)
    return g * advantages, g
