"""Policy losses over per-token log-probs, and loss aggregation.

Shapes: `logp`, `old_logp`, `mask` (1 = response token), optional `ref_logp` and `entropy`
are `[B, T]`; `advantages` is `[B]` (one per sequence) or `[B, T]`. A loss returns
`(scalar loss to minimise, metrics)`; metrics are detached scalars averaged over the response
tokens of the rows given. `norm_mask` (optional, `[B', T]`) is the mask of the whole batch when
only some of its rows are given (the update skips rows whose advantage is zero): aggregations
take their normaliser from it, so the loss is the whole batch's. Register a new loss with
`@POLICY_LOSSES.register("name")`; it receives the `algo` config's hyperparameters that it
declares (`clip_low`, `clip_high`, `kl_beta`, `agg`) and `algo.loss_kwargs` as keyword
arguments; an argument it does not declare is an error.
"""

from collections.abc import Callable

import torch

from mazerl.core.registry import Registry

LossFn = Callable[..., tuple[torch.Tensor, dict[str, torch.Tensor]]]
POLICY_LOSSES: Registry[LossFn] = Registry("policy loss")
AggFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]
AGGREGATIONS: Registry[AggFn] = Registry("loss aggregation")


def masked(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x where mask, exactly 0 elsewhere (so inf or NaN in padding cannot leak)."""
    return torch.where(mask.bool(), x, torch.zeros((), dtype=x.dtype, device=x.device))


@AGGREGATIONS.register("token-mean")
def token_mean(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Mean over all response tokens of the batch (DAPO; the F-GRPO paper's setting)."""
    norm = mask if norm_mask is None else norm_mask
    return masked(loss, mask).sum() / norm.sum().clamp(min=1)


@AGGREGATIONS.register("seq-mean-token-mean")
def seq_mean_token_mean(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Mean over tokens within each sequence, then over sequences (the original GRPO)."""
    norm = mask if norm_mask is None else norm_mask
    per_seq = masked(loss, mask).sum(-1) / mask.sum(-1).clamp(min=1)
    has_tokens = mask.sum(-1) > 0
    return (per_seq * has_tokens).sum() / (norm.sum(-1) > 0).sum().clamp(min=1)


@AGGREGATIONS.register("seq-mean-token-sum-norm")
def seq_mean_token_sum_norm(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Sum over tokens divided by the constant T (the padded max response length), averaged
    over sequences: Dr. GRPO's length-unbiased normaliser (arXiv 2503.20783)."""
    norm = mask if norm_mask is None else norm_mask
    return masked(loss, mask).sum() / (norm.shape[0] * norm.shape[1])


@AGGREGATIONS.register("token-sum")
def token_sum(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Sum over all response tokens, unnormalised: the update grows with the number of
    samples (the categorical simulation's `paper_categorical` preset, see README)."""
    return masked(loss, mask).sum()


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (masked(x, mask).sum() / mask.sum().clamp(min=1)).detach()


LOG_RATIO_BOUND = 20.0  # |log rho| cap, as verl: exp(20) ~ 5e8 cannot overflow a float32 loss


def log_ratio(logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """log rho_t = log pi_theta - log pi_old per token, clamped to +-LOG_RATIO_BOUND (the clamp
    is inactive, and the gradient exact, whenever the policy is within e^20 of pi_old)."""
    return (logp - old_logp).clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi_theta || pi_ref): exp(ref - logp) - (ref - logp) - 1 >= 0
    (Schulman 2020, as in GRPO)."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1.0


def _common_metrics(ratio, logp, old_logp, mask, entropy) -> dict[str, torch.Tensor]:
    lr = log_ratio(logp, old_logp)
    metrics = {
        "ratio_mean": _masked_mean(ratio, mask),
        # k3 estimate of KL(pi_old || pi_theta) on the sampled tokens
        "approx_kl": _masked_mean(ratio - 1.0 - lr, mask),
    }
    if entropy is not None:
        metrics["entropy"] = _masked_mean(entropy, mask)
    return metrics


def _add_kl(per_token, logp, ref_logp, kl_beta, mask, metrics) -> torch.Tensor:
    if ref_logp is None or kl_beta == 0:
        return per_token
    kl = kl_k3(logp, ref_logp)
    metrics["kl_ref"] = _masked_mean(kl, mask)
    return per_token + kl_beta * kl


@POLICY_LOSSES.register("clip")
def clip_loss(
    *,
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    kl_beta: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    agg: str = "token-mean",
    norm_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """PPO clipped surrogate with separate bounds (arXiv 1707.06347):

        L_t = -min(rho_t A, clip(rho_t, 1 - clip_low, 1 + clip_high) A) [+ beta KL_k3(t)]

    GRPO (arXiv 2402.03300): clip_low = clip_high = 0.2, optional k3 KL to a reference with
    coefficient beta (default 0, as in the paper). DAPO's clip-higher (arXiv 2503.14476):
    clip_low 0.2, clip_high 0.28. Clipped tokens get no gradient.
    """
    adv = advantages if advantages.dim() == 2 else advantages[:, None]
    ratio = torch.exp(log_ratio(logp, old_logp))
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_low, 1 + clip_high) * adv)
    metrics = _common_metrics(ratio, logp, old_logp, mask, entropy)
    metrics["clipfrac_low"] = _masked_mean(((ratio < 1 - clip_low) & (adv < 0)).float(), mask)
    metrics["clipfrac_high"] = _masked_mean(((ratio > 1 + clip_high) & (adv > 0)).float(), mask)
    per_token = _add_kl(-surrogate, logp, ref_logp, kl_beta, mask, metrics)
    return AGGREGATIONS.get(agg)(per_token, mask, norm_mask), metrics


@POLICY_LOSSES.register("linear")
def linear_loss(
    *,
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    kl_beta: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    agg: str = "token-mean",
    norm_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The linear surrogate of the paper's categorical analysis (F-GRPO Appendix J, after
    BroRL, arXiv 2510.01180): L_t = -A pi_theta(a_t), so dL/dz_i = -A p_a (1[i = a] - p_i),
    the update of Eq. 5. Not a policy-gradient estimator (its gradient carries an extra p).
    It has no clip, so it takes no `clip_low`/`clip_high`."""
    adv = advantages if advantages.dim() == 2 else advantages[:, None]
    ratio = torch.exp(log_ratio(logp, old_logp))
    metrics = _common_metrics(ratio, logp, old_logp, mask, entropy)
    per_token = _add_kl(-adv * logp.exp(), logp, ref_logp, kl_beta, mask, metrics)
    return AGGREGATIONS.get(agg)(per_token, mask, norm_mask), metrics


@POLICY_LOSSES.register("cispo")
def cispo_loss(
    *,
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_low: float = 1.0,
    clip_high: float = 5.0,
    kl_beta: float = 0.0,
    ref_logp: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    agg: str = "token-mean",
    norm_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """CISPO (MiniMax-M1, arXiv 2506.13585; F-GRPO Eq. 15-16):

        L_t = -sg(clip(rho_t, 1 - clip_low, 1 + clip_high)) A log pi_theta(a_t)

    The IS weight is clipped to [0, 6] by default (eps_low 1.0, eps_high 5.0, after ScaleRL,
    arXiv 2510.13786) and detached, so every token keeps its gradient. Both sides are
    clipped, as in verl; TRL clips the upper side only, which differs when clip_low < 1.
    """
    adv = advantages if advantages.dim() == 2 else advantages[:, None]
    ratio = torch.exp(log_ratio(logp, old_logp))
    weight = ratio.clamp(1 - clip_low, 1 + clip_high).detach()
    metrics = _common_metrics(ratio, logp, old_logp, mask, entropy)
    metrics["clipfrac_low"] = _masked_mean((ratio < 1 - clip_low).float(), mask)
    metrics["clipfrac_high"] = _masked_mean((ratio > 1 + clip_high).float(), mask)
    per_token = _add_kl(-weight * adv * logp, logp, ref_logp, kl_beta, mask, metrics)
    return AGGREGATIONS.get(agg)(per_token, mask, norm_mask), metrics
