"""Pass@k Training (Chen et al., arXiv 2508.10751): the analytic advantage of training with the
pass@k of a group as the reward.

For a group of N samples with c correct (reward > 0), drawing k of them without replacement:

    R = 1 - C(N - c, k) / C(N, k)                 the group's unbiased pass@k (its mean reward)
    sigma = sqrt(R (1 - R))
    A_pos = (1 - R) / (sigma + 1e-6)                                   for a correct sample
    A_neg = (1 - R - C(N - c - 1, k - 1) / C(N - 1, k - 1)) / (sigma + 1e-6)   for a wrong one

k = 1 is GRPO with the population std. When N - c < k every k-subset holds a correct sample,
R = 1, and the whole group gets A = 0 (so does every all-equal group). The 1e-6 is the
authors' (`code/passk_adv.py`).
"""

import torch

from mazerl.algos.advantages import all_equal, estimator, subset_size


def all_wrong_fraction(n: int, c: torch.Tensor, k: int) -> torch.Tensor:
    """C(n - c, k) / C(n, k): the fraction of the k-subsets of n samples, c of them correct,
    that hold no correct sample; computed as the product over i < k of (n - c - i) / (n - i),
    each factor floored at 0.

    Args:
        n: samples.
        c: `[...]` float64, correct samples.
        k: the subset size, >= 0.

    Returns:
        `[...]` float64 fractions: 1 for k = 0, 0 when n - c < k.
    """
    i = torch.arange(k, dtype=torch.float64, device=c.device)
    return ((n - c[..., None] - i).clamp(min=0) / (n - i)).prod(-1)


@estimator("passk")
def passk(rewards: torch.Tensor, *, k: int) -> torch.Tensor:
    """Pass@k Training advantages (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each; > 0 is correct.
        k: the k of pass@k, an integer in [1, G].

    Returns:
        `[P, G]` advantages, in `rewards`' dtype, exactly 0 for an all-equal group.

    Raises:
        ConfigError: k is not an integer in [1, G].
    """
    n = rewards.shape[-1]
    subset_size("k", k, n)
    c = (rewards > 0).sum(-1, keepdim=True).to(torch.float64)
    pass_k = 1 - all_wrong_fraction(n, c, k)
    sigma = torch.sqrt(pass_k * (1 - pass_k))
    a_pos = (1 - pass_k) / (sigma + 1e-6)
    a_neg = (1 - pass_k - all_wrong_fraction(n - 1, c, k - 1)) / (sigma + 1e-6)
    advantages = torch.where(rewards > 0, a_pos, a_neg).to(rewards.dtype)
    return torch.where(all_equal(rewards), 0.0, advantages)
