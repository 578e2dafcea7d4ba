"""W-REINFORCE and its halves PSR / NSR (Zhu et al., "The Surprising Effectiveness of Negative
Reinforcement in LLM Reasoning", arXiv 2506.01347).

    A_i = +positive_weight  for a correct sample (reward > 0)
    A_i = -negative_weight  for a wrong one

No baseline: W-REINFORCE is positive_weight = lambda = 0.1, negative_weight = 1; PSR (positive
sample reinforcement) is 1 / 0, NSR (negative sample reinforcement) 0 / 1. Unlike the GRPO
family it gives all-equal groups a signal (an all-wrong group is pushed down, an all-correct
one up), so it declares `all_equal_zero=False`: its rows are skipped only where the weight of
their side is 0 (PSR's wrong rows, NSR's correct rows), and DAPO's filter is refused.

The authors' code (TianHongZXY/RLVR-Decomposed) runs PSR and NSR by dropping the other half's
rows from the batch, so its token-mean divides by the kept rows' tokens; here those rows stay,
with A = 0, and the loss keeps the whole batch's normaliser (the same direction, a step that
differs by the kept fraction of tokens).
"""

import torch

from mazerl.algos.advantages import estimator, non_negative


@estimator("w_reinforce", all_equal_zero=False)
def w_reinforce(
    rewards: torch.Tensor, *, positive_weight: float, negative_weight: float
) -> torch.Tensor:
    """W-REINFORCE's advantages: no baseline, a weight per side (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each; > 0 is correct.
        positive_weight: the advantage of a correct sample (lambda), finite and >= 0.
        negative_weight: minus the advantage of a wrong sample, finite and >= 0.

    Returns:
        `[P, G]` advantages: `positive_weight` where the reward is > 0, `-negative_weight`
        elsewhere.

    Raises:
        ConfigError: a weight is negative, not finite or not a number.
    """
    pos = non_negative("positive_weight", positive_weight)
    neg = non_negative("negative_weight", negative_weight)
    return torch.where(rewards > 0, rewards.new_tensor(pos), rewards.new_tensor(-neg))
