"""The focal coefficient of F-GRPO (arXiv 2602.06717, Eq. 11-13).

    mu_hat = X / N                 the group's empirical success rate (Eq. 11)
    g      = (1 - mu_hat)^gamma    one scalar per group (Eq. 12)
    A_i   <- g * A_i               for every member of the group (Eq. 13)

gamma = 0 gives g = 1 exactly, so the base method is reproduced bit for bit. g is computed
from rewards only and is detached, so no gradient flows through it.

Placement: the paper scales the advantage (Eq. 13); in the categorical simulation
(Appendix J) it scales the objective. For g >= 0 the two are identical for every loss here
(min(r gA, clip(r) gA) = g min(r A, clip(r) A), and CISPO and the KL-free aggregations are
linear in A), which `tests/test_algos.py` checks, so there is no placement option.
"""

import torch


def success_rate(rewards: torch.Tensor, correct_reward: float | None = 1.0) -> torch.Tensor:
    """The group's empirical success rate mu_hat (= X/N for binary 0/1 or -1/+1 rewards).

    Args:
        rewards: `[P, G]` rewards.
        correct_reward: a reward >= this is a success; None (non-binary rewards): the
            group's maximum is (this only matters for mixed groups, since an all-equal group
            has zero advantage whatever its weight).

    Returns:
        `[P, 1]` the fraction of successes, in `rewards`' dtype.
    """
    threshold = rewards.amax(-1, keepdim=True) if correct_reward is None else correct_reward
    return (rewards >= threshold).to(rewards.dtype).mean(-1, keepdim=True)


def focal_weight(mu: torch.Tensor, gamma: float) -> torch.Tensor:
    """F-GRPO's focal weight g = (1 - mu)^gamma, in [0, 1], non-increasing in mu.

    Args:
        mu: `[P, 1]` success rates (`success_rate`).
        gamma: the focal exponent, >= 0; 0 gives exactly 1.

    Returns:
        `[P, 1]` detached weights.

    Raises:
        ValueError: gamma < 0.
    """
    if gamma < 0:
        raise ValueError(f"focal gamma must be >= 0, got {gamma}")
    if gamma == 0:
        return torch.ones_like(mu)
    return torch.pow((1.0 - mu).clamp(min=0.0), gamma).detach()
