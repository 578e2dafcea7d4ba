"""SELF (arXiv 2510.02230) as MaxRL's maze baseline runs it: GRPO's advantage, switched off
for every prompt whose greedy answer is already correct.

    A_i = 0                                       if the prompt's greedy answer is correct
    A_i = (r_i - mean(r)) / (std(r) + eps)        otherwise (GRPO: unbiased std, eps 1e-6)

The greedy answer takes the most likely action at each token (no sampling). The step
generates one per training prompt at every iteration, with the policy that samples and before
its update, and logs the fraction correct (`train/greedy_correct`); it draws nothing from the
run's random streams. MaxRL's verl fork (tajwarfahim/maxrl) computes the same:
`compute_self_paper_outcome_advantage` in `verl/trainer/ppo/core_algos.py` zeroes the GRPO
advantage where the greedy answer's reward (`reward_baselines`, from a `do_sample=False`
generation of the same prompts in `ray_trainer.py`) is 1.

An all-equal group gets exactly 0 (GRPO's), whatever its greedy answer, so the method
declares `all_equal_zero` and DAPO's filter may be used with it.
"""

import torch

from mazerl.algos.advantages import estimator, grpo


@estimator("self")
def self_(rewards: torch.Tensor, *, greedy_correct: torch.Tensor, eps: float = 1e-6):
    """SELF's advantages (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        greedy_correct: `[P]` bool, whether each prompt's greedy answer is correct.
        eps: added to GRPO's std.

    Returns:
        `[P, G]` advantages: 0 in the groups whose greedy answer is correct, GRPO's in the
        others; exactly 0 in an all-equal group.
    """
    return torch.where(greedy_correct[:, None], 0.0, grpo(rewards, eps))
