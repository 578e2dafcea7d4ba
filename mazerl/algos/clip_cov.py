"""Clip-Cov (Cui et al., "The Entropy Mechanism of Reinforcement Learning for Reasoning
Language Models", arXiv 2505.22617; verl's `compute_policy_loss_clip_cov`).

Entropy falls fastest through tokens whose log-prob and advantage covary most. Per response
token of the rows given (a batch statistic, so the update never skips rows):

    cov_t = (A_t - mean A) (log pi(a_t) - mean log pi)        means over the response tokens

Among the tokens that PPO's clip leaves alone and with cov_low < cov_t < cov_high,
max(1, int(cov_ratio * #tokens)) drawn at random lose their gradient (their loss is 0); the
rest is the PPO clipped surrogate. The paper's setting (verl's `recipe/entropy/7b_clip_cov.sh`):
cov_ratio 2e-4, cov bounds 1 and 5, and the PPO clip opened to [0, 2] (clip_low = clip_high
= 1). The draw uses torch's global generator, as verl does (seeded from the run's seed; a
resumed run draws differently).
"""

import math

import torch

from mazerl.algos.losses import masked_mean, surrogate
from mazerl.core.errors import ConfigError


def check_ratio(name: str, value) -> float:
    """A checked fraction of the batch's tokens.

    Args:
        name: the parameter's name, for the error.
        value: the value given.

    Returns:
        `value` as a float.

    Raises:
        ConfigError: `value` is not a number in (0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigError(f"{name} must be a fraction in (0, 1], got {value!r}")
    return float(value)


@surrogate("clip_cov", reads_every_row=True, on_policy="clip")
def clip_cov_surrogate(
    *,
    ratio,
    logp,
    advantages,
    mask,
    clip_low: float = 1.0,
    clip_high: float = 1.0,
    cov_ratio: float = 2e-4,
    cov_low: float = 1.0,
    cov_high: float = 5.0,
):
    """PPO clip, with a random `cov_ratio` of the eligible high-covariance tokens detached
    (module docstring).

    Args:
        ratio: `[B, T]` rho_t = pi_theta / pi_old per token.
        logp: `[B, T]` log pi_theta(a_t), with gradient.
        advantages: `[B, 1]` or `[B, T]` advantages.
        mask: `[B, T]` 1 on the response tokens.
        clip_low: PPO's lower bound is 1 - clip_low.
        clip_high: PPO's upper bound is 1 + clip_high.
        cov_ratio: the fraction of the batch's response tokens detached, in (0, 1].
        cov_low: an eligible token's covariance is above cov_low (and PPO did not clip it).
        cov_high: an eligible token's covariance is below cov_high (finite, > cov_low).

    Returns:
        The `[B, T]` per-token loss and the metric `clipcov_frac` (the fraction detached).

    Raises:
        ConfigError: `cov_ratio` is not in (0, 1], or the covariance bounds are not finite
            and increasing.
    """
    check_ratio("cov_ratio", cov_ratio)
    if not (math.isfinite(cov_low) and math.isfinite(cov_high) and cov_low < cov_high):
        raise ConfigError(f"cov_low < cov_high must be finite, got {cov_low!r}, {cov_high!r}")
    adv = advantages.expand_as(logp)
    unclipped, clipped = -adv * ratio, -adv * ratio.clamp(1 - clip_low, 1 + clip_high)
    on = mask.bool()
    with torch.no_grad():
        by_ppo = clipped > unclipped
        cov = (adv - masked_mean(adv, mask)) * (logp - masked_mean(logp, mask))
        eligible = torch.nonzero(on & ~by_ppo & (cov > cov_low) & (cov < cov_high))
        n_pick = max(int(cov_ratio * mask.sum().item()), 1)
        picked = eligible[torch.randperm(len(eligible))[:n_pick]]
        keep = torch.ones_like(logp)
        keep[picked[:, 0], picked[:, 1]] = 0
    metrics = {"clipcov_frac": masked_mean((keep == 0).float(), mask)}
    return torch.maximum(unclipped, clipped) * keep, metrics
