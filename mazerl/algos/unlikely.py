"""The unlikeliness reward (He, Fried, Welleck, "Rewarding the Unlikely: Lifting GRPO Beyond
Distribution Sharpening", arXiv 2506.02355): a correct sample's reward shrinks with its
likelihood rank in its group, then GRPO's normalisation.

    r'_i = r_i * (1 - beta * rank_i / G)
    A_i  = (r'_i - mean(r')) / (std(r') + eps)        (GRPO: unbiased std, eps 1e-6)

rank_i is sample i's rank by its mean token log-probability under the sampling policy within
its group: 0 the least likely, G - 1 the most likely; beta = 0.25
(`conf/algo/unlikely.yaml`). The authors' code (AndreHe02/rewarding-unlikely-release,
`_compute_advantages` in `verl/trainer/ppo/ray_lean_trainer.py`, `lean.rank_penalty=0.25` in
`examples/lean/grpo.sh`) ranks with `argsort(argsort(l))`, which gives samples of equal
log-probability (the same answer sampled twice) distinct ranks in an order the sort leaves
open; here they share their average rank (`scipy.stats.rankdata`'s default), so a group's
members stay exchangeable and the group's sum of r' is that of any order of the ties.

An all-wrong group gets exactly 0; an all-correct group does not (r' differs across it unless
every log-probability is equal), so the method declares `all_equal_zero=False` (DAPO's filter
is refused); the update skips only the rows whose advantage is exactly 0.
"""

import torch

from mazerl.algos.advantages import estimator, grpo, non_negative


def average_ranks(values: torch.Tensor) -> torch.Tensor:
    """0-based ranks within each row, ascending; equal values share their average rank.

    Args:
        values: `[P, G]` values.

    Returns:
        `[P, G]` ranks in [0, G - 1], in `values`' dtype (halves where an even number tie).
    """
    below = (values[..., None, :] < values[..., :, None]).sum(-1)
    equal = (values[..., None, :] == values[..., :, None]).sum(-1)  # itself included
    return (below + (equal - 1) / 2).to(values.dtype)


@estimator("unlikely", all_equal_zero=False)
def unlikely(
    rewards: torch.Tensor, *, logp_mean: torch.Tensor, beta: float, eps: float = 1e-6
) -> torch.Tensor:
    """GRPO's advantage of the unlikeliness reward r' (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        logp_mean: `[P, G]` each sample's mean token log-probability under the sampling
            policy (nats).
        beta: the rank penalty, finite and >= 0 (0: GRPO).
        eps: added to GRPO's std.

    Returns:
        `[P, G]` advantages, in `rewards`' dtype; exactly 0 in an all-wrong group.

    Raises:
        ConfigError: beta is negative, not finite or not a number.
    """
    b = non_negative("beta", beta)
    rank = average_ranks(logp_mean).to(rewards.dtype)
    return grpo(rewards * (1 - rank / rewards.shape[-1] * b), eps)
