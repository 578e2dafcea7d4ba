"""MaxRL (Tajwar et al., arXiv 2602.02710): the group advantage normalised by the group's
success rate instead of its standard deviation.

    A_i = (r_i - mean(r)) / (mean(r) + eps)

For binary rewards with c of N correct this is N/c - 1 for a correct sample and -1 for a wrong
one: a rarely solved prompt pushes its few correct answers up hard (the gradient of the log
of the success rate, which MaxRL shows maximises the likelihood of a correct answer). An
all-fail group has no correct sample to push and gets A = 0, as every all-equal group.
"""

import torch

from mazerl.algos.advantages import all_equal, estimator


@estimator("maxrl")
def maxrl(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """A = (r - mean r) / (mean r + eps) within each group (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        eps: added to the group's success rate; 1e-6 as the authors'
            `compute_maxrl_outcome_advantage`.

    Returns:
        `[P, G]` advantages, exactly 0 for an all-equal group.
    """
    mean = rewards.mean(-1, keepdim=True)
    return torch.where(all_equal(rewards), 0.0, (rewards - mean) / (mean + eps))
