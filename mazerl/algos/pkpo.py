"""PKPO (Walder & Karkhanis, arXiv 2505.15201): the unbiased pass@k reward transform.

For a group of N samples with c correct (reward > 0), the pass@k estimate averages
max(f) over the C(N, k) k-subsets; its score-function gradient gives sample i the reward

    s_i = k / N                                  for a correct sample
    s_i = (k / N) (1 - C(N - c - 1, k - 1) / C(N - 1, k - 1))      for a wrong one

(the fraction of the k-subsets holding sample i that also hold a correct sample, times k/N),
so sum_i s_i grad log pi(x_i) is an unbiased estimate of grad pass@k. k = 1 gives s = r / N.
The method (`conf/algo/pkpo.yaml`) feeds the transformed rewards to the leave-one-out
baseline (`rloo`); all-equal groups stay exactly zero. That baseline is not unbiased here:
the other samples' s_j depend on sample i's reward through c, and the expected gradient is
(N - k) / (N - 1) times grad pass@k (4/7 at N = 8, k = 4; 0 at k = N), for any success
probability (tests/test_methods.py enumerates it). Under Adam a constant factor mostly
rescales the step; the paper's own baseline, which keeps the estimate unbiased, is not the
one used here. MaxRL's PKPO baseline (tajwarfahim/maxrl, `compute_pkpo_outcome_advantage`)
uses another weighting, C(N - c, k - 1) / C(N - 1, k - 1) for a correct sample and 0 for a
wrong one, before the same baseline; this module's transform follows the paper.
"""

import torch

from mazerl.algos.advantages import REWARD_TRANSFORMS, subset_size
from mazerl.algos.passk import all_wrong_fraction


@REWARD_TRANSFORMS.register("pkpo")
def pkpo(rewards: torch.Tensor, *, k: int) -> torch.Tensor:
    """PKPO's pass@k rewards s (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each; > 0 is correct.
        k: the k of pass@k, an integer in [1, G].

    Returns:
        `[P, G]` transformed rewards, in `rewards`' dtype.

    Raises:
        ConfigError: k is not an integer in [1, G].
    """
    n = rewards.shape[-1]
    subset_size("k", k, n)
    c = (rewards > 0).sum(-1, keepdim=True).to(torch.float64)
    wrong = (k / n) * (1 - all_wrong_fraction(n - 1, c, k - 1))
    return torch.where(rewards > 0, k / n, wrong).to(rewards.dtype)
