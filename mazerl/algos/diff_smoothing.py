"""Differential Smoothing (arXiv 2511.19942) as MaxRL's maze baseline runs it: GRPO's
advantage with the population std, plus a term in each sample's mean token log-probability
l_i under the sampling policy that lowers the advantage of likely correct samples and raises
that of likely wrong ones (l_i <= 0):

    A_i = (r_i - mean(r)) / (std_0(r) + eps) - c_correct * 1[r_i > 0] * l_i
                                              + c_wrong * 1[r_i <= 0] * l_i

std_0 is the population std (ddof 0), eps = 1e-6, c_correct = c_wrong = 0.05
(`conf/algo/diff_smoothing.yaml`). MaxRL's verl fork (tajwarfahim/maxrl,
`compute_dsgrpo_outcome_advantage` in `verl/trainer/ppo/core_algos.py`) computes the same from
verl's `old_log_probs` averaged over each response's tokens; it counts a reward == 0 as
wrong and leaves a negative reward out of both terms, which for the mazes' 0/1 rewards is the
same.

An all-equal group is not zero: its GRPO part is exactly 0, the log-probability term stays
(an all-correct group gets -c_correct * l_i >= 0, an all-wrong one c_wrong * l_i <= 0). So the
method declares `all_equal_zero=False` (DAPO's filter is refused); the update skips only the
rows whose advantage is exactly 0.
"""

import torch

from mazerl.algos.advantages import estimator, non_negative, normalised


@estimator("diff_smoothing", all_equal_zero=False)
def diff_smoothing(
    rewards: torch.Tensor,
    *,
    logp_mean: torch.Tensor,
    c_correct: float,
    c_wrong: float,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Differential Smoothing's advantages (module docstring).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each; > 0 is correct.
        logp_mean: `[P, G]` each sample's mean token log-probability under the sampling
            policy (nats).
        c_correct: the coefficient of l on correct samples, finite and >= 0.
        c_wrong: the coefficient of l on wrong samples, finite and >= 0.
        eps: added to the population std.

    Returns:
        `[P, G]` advantages, in `rewards`' dtype.

    Raises:
        ConfigError: a coefficient is negative, not finite or not a number.
    """
    cc = non_negative("c_correct", c_correct)
    cw = non_negative("c_wrong", c_wrong)
    logp = logp_mean.to(rewards.dtype)
    smoothing = torch.where(rewards > 0, -cc * logp, cw * logp)
    return normalised(rewards, eps, correction=0) + smoothing
