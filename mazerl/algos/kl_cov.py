"""KL-Cov (Cui et al., "The Entropy Mechanism of Reinforcement Learning for Reasoning
Language Models", arXiv 2505.22617; verl's `compute_policy_loss_kl_cov`).

The policy-gradient surrogate -A rho_t, unclipped, where the top `cov_ratio` of the response
tokens by covariance

    cov_t = (A_t - mean A) (log pi(a_t) - mean log pi)        means over the response tokens

(at least one token) also get the penalty kl_coef * |log pi(a_t) - log pi_old(a_t)|, which
keeps them near the sampling policy. The covariance and its top tokens are statistics of the
rows given, so the update never skips rows. The paper's setting (verl's
`recipe/entropy/7b_kl_cov.sh`): cov_ratio 2e-3, kl_coef 1. On-policy (one update per batch)
the penalty is 0 and so is its gradient at rho = 1: KL-Cov acts only when a batch is reused
(`train.ppo_epochs` or `train.minibatches` > 1).
"""

import torch

from mazerl.algos.advantages import non_negative
from mazerl.algos.clip_cov import check_ratio
from mazerl.algos.losses import masked_mean, surrogate


@surrogate("kl_cov", reads_every_row=True, on_policy="clip")
def kl_cov_surrogate(
    *, ratio, logp, old_logp, advantages, mask, cov_ratio: float = 2e-3, kl_coef: float = 1.0
):
    """-A rho_t, plus kl_coef |log rho_t| on the top `cov_ratio` of the tokens by
    covariance (module docstring).

    Args:
        ratio: `[B, T]` rho_t = pi_theta / pi_old per token.
        logp: `[B, T]` log pi_theta(a_t), with gradient.
        old_logp: `[B, T]` the sampling policy's log-probs.
        advantages: `[B, 1]` or `[B, T]` advantages.
        mask: `[B, T]` 1 on the response tokens.
        cov_ratio: the fraction of the batch's response tokens penalised, in (0, 1].
        kl_coef: the penalty's weight, finite and >= 0.

    Returns:
        The `[B, T]` per-token loss and the metric `klcov_frac` (the fraction penalised).

    Raises:
        ConfigError: `cov_ratio` is not in (0, 1] or `kl_coef` is negative.
    """
    check_ratio("cov_ratio", cov_ratio)
    kl_coef = non_negative("kl_coef", kl_coef)
    adv = advantages.expand_as(logp)
    on = mask.bool()
    with torch.no_grad():
        cov = (adv - masked_mean(adv, mask)) * (logp - masked_mean(logp, mask))
        tokens = torch.nonzero(on)
        n_top = max(1, int(len(tokens) * cov_ratio))
        top = tokens[torch.topk(cov[on], n_top).indices]
        penalised = torch.zeros_like(logp)
        penalised[top[:, 0], top[:, 1]] = 1
    per_token = -adv * ratio + kl_coef * penalised * (logp - old_logp).abs()
    return per_token, {"klcov_frac": masked_mean(penalised, mask)}
