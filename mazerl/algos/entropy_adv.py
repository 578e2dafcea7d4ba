"""Entropy-based advantage shaping (Cheng et al., "Reasoning with Exploration: An Entropy
Perspective", arXiv 2506.14758): the PPO clipped surrogate on a per-token advantage

    A_t = A + min(alpha * sg(H_t), |A| / kappa)

with H_t the current policy's entropy at token t, detached (no gradient flows through it).
The bonus is >= 0 and at most |A| / kappa, so with kappa >= 1 it never flips the sign of A:
high-entropy tokens of a correct answer are pushed up more, those of a wrong one pushed down
less. A row with A = 0 keeps A_t = 0, so the update may still skip it. The paper's setting:
alpha = 0.4, kappa = 2.
"""

import math

import torch

from mazerl.algos.advantages import non_negative
from mazerl.algos.losses import clip_surrogate, surrogate
from mazerl.core.errors import ConfigError


@surrogate("entropy_adv")
def entropy_adv_surrogate(
    *,
    ratio,
    advantages,
    mask,
    entropy,
    alpha: float = 0.4,
    kappa: float = 2.0,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
):
    """`clip` on A_t = A + min(alpha sg(H_t), |A| / kappa) (module docstring).

    The defaults are the paper's, as `conf/algo/entropy_adv.yaml`.

    Args:
        ratio: `[B, T]` rho_t = pi_theta / pi_old per token.
        advantages: `[B, 1]` or `[B, T]` advantages.
        mask: `[B, T]` 1 on the response tokens.
        entropy: `[B, T]` the policy's per-token entropy H_t in nats (detached here).
        alpha: the entropy bonus' weight, finite and >= 0.
        kappa: the bonus is at most |A| / kappa; finite and >= 1.
        clip_low: PPO's lower bound is 1 - clip_low.
        clip_high: PPO's upper bound is 1 + clip_high.

    Returns:
        The `[B, T]` per-token loss and `clip`'s metrics, plus `entropy_adv_bonus` (the mean
        bonus over the tokens of rows with a non-zero advantage).

    Raises:
        ConfigError: `alpha` is negative or `kappa` is not a finite number >= 1.
    """
    alpha = non_negative("alpha", alpha)
    if isinstance(kappa, bool) or not isinstance(kappa, int | float) or not 1 <= kappa < math.inf:
        raise ConfigError(f"kappa must be a finite number >= 1, got {kappa!r}")
    shaped = advantages + torch.minimum(alpha * entropy.detach(), advantages.abs() / kappa)
    per_token, metrics = clip_surrogate(
        ratio=ratio, advantages=shaped, mask=mask, clip_low=clip_low, clip_high=clip_high
    )
    # the mean bonus over the response tokens of rows with a non-zero advantage
    live = mask * (advantages != 0)
    metrics["entropy_adv_bonus"] = ((shaped - advantages) * live).sum() / live.sum().clamp(min=1)
    return per_token, {k: v.detach() for k, v in metrics.items()}
