"""Group advantage estimators: `[P, G]` rewards (P prompts, G rollouts each) -> `[P, G]`.

Every estimator returns exactly 0 for a group whose rewards are all equal (no learning
signal), in any dtype and never NaN. Register a new one with `@ADVANTAGES.register("name")`.
"""

from collections.abc import Callable

import torch

from mazerl.core.registry import Registry

AdvantageFn = Callable[..., torch.Tensor]
ADVANTAGES: Registry[AdvantageFn] = Registry("advantage estimator")


def all_equal(rewards: torch.Tensor) -> torch.Tensor:
    """`[P, 1]` bool: the group's rewards are all equal."""
    return (rewards == rewards[..., :1]).all(-1, keepdim=True)


@ADVANTAGES.register("grpo")
def grpo(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """A_i = (r_i - mean(r)) / (std(r) + eps) within each group (GRPO, arXiv 2402.03300).

    std is the unbiased (N - 1) estimate and eps = 1e-6, as in verl's
    `compute_grpo_outcome_advantage`, which the paper's Maze runs use.
    """
    centred = rewards - rewards.mean(-1, keepdim=True)
    std = rewards.std(-1, keepdim=True) if rewards.shape[-1] > 1 else torch.ones_like(centred)
    return torch.where(all_equal(rewards), 0.0, centred / (std + eps))


@ADVANTAGES.register("drgrpo")
def drgrpo(rewards: torch.Tensor) -> torch.Tensor:
    """A_i = r_i - mean(r): mean baseline, no std (Dr. GRPO, arXiv 2503.20783)."""
    centred = rewards - rewards.mean(-1, keepdim=True)
    return torch.where(all_equal(rewards), 0.0, centred)


@ADVANTAGES.register("rloo")
def rloo(rewards: torch.Tensor) -> torch.Tensor:
    """A_i = r_i - mean_{j != i} r_j = G/(G-1) (r_i - mean(r)): leave-one-out baseline
    (RLOO, Ahmadian et al. 2024, arXiv 2402.14740)."""
    g = rewards.shape[-1]
    centred = rewards - rewards.mean(-1, keepdim=True)
    return torch.where(all_equal(rewards), 0.0, centred * (g / max(g - 1, 1)))
