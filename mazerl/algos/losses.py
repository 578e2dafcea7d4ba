"""Policy losses: a per-token surrogate, the terms every method may add, and one aggregation.

A policy loss is composed in one place (`surrogate` below): the method's per-token surrogate,
then the k3 KL to a reference (`kl_beta`) and the entropy bonus (`entropy_coef`), each added
once, then the aggregation (`agg`), applied once. A new loss is one per-token function:

    @surrogate("name")
    def name_surrogate(*, ratio, advantages, mask, my_param=0.1):  # takes what it reads
        return per_token_loss, metrics

A surrogate takes any of `ratio` (rho_t, log-ratio clamped, see `log_ratio`), `logp`,
`old_logp` (the sampling log-probs), `advantages` (`[B, 1]` or `[B, T]`), `mask` and `entropy`
(the current policy's per-token entropy, with gradient), and its own hyperparameters, which
come from `algo.loss_kwargs` (or `algo.clip_low` / `clip_high` where it takes them). It
returns the per-token loss `[B, T]` and metrics (detached scalars). `reads_every_row=True`
declares that its value on a row depends on the other rows (a batch statistic, as the
covariance methods' token selection): the update then never skips a row. `on_policy="clip"`
declares that at one update per batch (rho = 1 at every token) it computes that registered
loss's update: a method acting through the ratio only (`on_policy_loss`).

The composed loss is registered in `POLICY_LOSSES` under the surrogate's name and called with
`logp`, `old_logp`, `mask` `[B, T]`, `advantages` `[B]` or `[B, T]`, optional `ref_logp`,
`entropy` `[B, T]` and `norm_mask` (`[B', T]`, the mask of the whole batch when only some of
its rows are given: the update skips rows whose advantage is zero, and the aggregation takes
its normaliser from it, so the loss is the whole batch's). It returns `(scalar loss to
minimise, metrics)`; metrics are averaged over the response tokens of the rows given. An
argument it does not declare is an error.
"""

import inspect
from collections.abc import Callable

import torch

from mazerl.algos.config import AGGREGATIONS, POLICY_LOSSES
from mazerl.core.errors import ConfigError

LossFn = Callable[..., tuple[torch.Tensor, dict[str, torch.Tensor]]]
AggFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]


def masked(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """`x` on the response tokens, exactly 0 elsewhere (so inf or NaN in padding cannot leak).

    Args:
        x: `[B, T]` values.
        mask: `[B, T]` 1 on the response tokens.

    Returns:
        `[B, T]`, `x`'s dtype.
    """
    return torch.where(mask.bool(), x, torch.zeros((), dtype=x.dtype, device=x.device))


@AGGREGATIONS.register("token-mean")
def token_mean(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Mean over all response tokens of the batch (DAPO; the F-GRPO paper's setting).

    Args:
        loss: `[B, T]` per-token loss.
        mask: `[B, T]` 1 on the response tokens of the rows given.
        norm_mask: `[B', T]` the mask of the whole batch when only some of its rows are given
            (the normaliser is taken from it); None: `mask`.

    Returns:
        The scalar loss.
    """
    norm = mask if norm_mask is None else norm_mask
    return masked(loss, mask).sum() / norm.sum().clamp(min=1)


@AGGREGATIONS.register("seq-mean-token-mean")
def seq_mean_token_mean(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Mean over tokens within each sequence, then over sequences (the original GRPO).

    Args:
        loss: `[B, T]` per-token loss.
        mask: `[B, T]` 1 on the response tokens of the rows given.
        norm_mask: `[B', T]` the mask of the whole batch when only some of its rows are given
            (the normaliser is taken from it); None: `mask`.

    Returns:
        The scalar loss.
    """
    norm = mask if norm_mask is None else norm_mask
    per_seq = masked(loss, mask).sum(-1) / mask.sum(-1).clamp(min=1)
    has_tokens = mask.sum(-1) > 0
    return (per_seq * has_tokens).sum() / (norm.sum(-1) > 0).sum().clamp(min=1)


@AGGREGATIONS.register("seq-mean-token-sum-norm")
def seq_mean_token_sum_norm(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Sum over tokens divided by the constant T (the padded max response length), averaged
    over sequences: Dr. GRPO's length-unbiased normaliser (arXiv 2503.20783).

    Args:
        loss: `[B, T]` per-token loss.
        mask: `[B, T]` 1 on the response tokens of the rows given.
        norm_mask: `[B', T]` the mask of the whole batch when only some of its rows are given
            (the normaliser is taken from it); None: `mask`.

    Returns:
        The scalar loss.
    """
    norm = mask if norm_mask is None else norm_mask
    return masked(loss, mask).sum() / (norm.shape[0] * norm.shape[1])


@AGGREGATIONS.register("token-sum")
def token_sum(loss: torch.Tensor, mask: torch.Tensor, norm_mask=None) -> torch.Tensor:
    """Sum over all response tokens, unnormalised: the update grows with the number of
    samples (the categorical simulation's `paper_categorical` preset, see
    docs/results/categorical.md).

    Args:
        loss: `[B, T]` per-token loss.
        mask: `[B, T]` 1 on the response tokens of the rows given.
        norm_mask: `[B', T]` the mask of the whole batch when only some of its rows are given
            (unused: the sum has no normaliser).

    Returns:
        The scalar loss.
    """
    return masked(loss, mask).sum()


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean over the response tokens (a metric).

    Args:
        x: `[B, T]` values.
        mask: `[B, T]` 1 on the response tokens.

    Returns:
        The detached scalar mean (0 without response tokens).
    """
    return (masked(x, mask).sum() / mask.sum().clamp(min=1)).detach()


LOG_RATIO_BOUND = 20.0  # |log rho| cap, as verl: exp(20) ~ 5e8 cannot overflow a float32 loss


def log_ratio(logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """log rho_t = log pi_theta - log pi_old per token, clamped to +-LOG_RATIO_BOUND (the clamp
    is inactive, and the gradient exact, whenever the policy is within e^20 of pi_old).

    Args:
        logp: `[B, T]` log pi_theta(a_t).
        old_logp: `[B, T]` log pi_old(a_t), the sampling policy's.

    Returns:
        `[B, T]` log-ratios in [-20, 20].
    """
    return (logp - old_logp).clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi_theta || pi_ref): exp(ref - logp) - (ref - logp) - 1 >= 0
    (Schulman 2020, as in GRPO).

    Args:
        logp: `[B, T]` log pi_theta(a_t).
        ref_logp: `[B, T]` log pi_ref(a_t).

    Returns:
        `[B, T]` estimates, >= 0, in nats.
    """
    d = ref_logp - logp
    return torch.exp(d) - d - 1.0


# what the composed loss hands a surrogate, if the surrogate names it
SURROGATE_INPUTS = ("ratio", "logp", "old_logp", "advantages", "mask", "entropy")


def _composed_loss(fn: Callable, reads_every_row: bool, on_policy: str | None = None) -> LossFn:
    """The policy loss of the per-token surrogate `fn`: see the module docstring."""
    inputs = [p for p in inspect.signature(fn).parameters if p in SURROGATE_INPUTS]

    def loss(
        *,
        logp: torch.Tensor,
        old_logp: torch.Tensor,
        advantages: torch.Tensor,
        mask: torch.Tensor,
        ref_logp: torch.Tensor | None = None,
        entropy: torch.Tensor | None = None,
        norm_mask: torch.Tensor | None = None,
        kl_beta: float = 0.0,
        entropy_coef: float = 0.0,
        agg: str = "token-mean",
        **params,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        if entropy is None and ("entropy" in inputs or entropy_coef != 0):
            raise ConfigError(
                f"policy loss {fn.__name__} with entropy_coef={entropy_coef} needs the policy's "
                "per-token entropy, which this trainer does not compute"
            )
        adv = advantages if advantages.dim() == 2 else advantages[:, None]
        lr = log_ratio(logp, old_logp)
        ratio = torch.exp(lr)
        given = dict(
            ratio=ratio, logp=logp, old_logp=old_logp, advantages=adv, mask=mask, entropy=entropy
        )
        metrics = {
            "ratio_mean": masked_mean(ratio, mask),
            # k3 estimate of KL(pi_old || pi_theta) on the sampled tokens
            "approx_kl": masked_mean(ratio - 1.0 - lr, mask),
        }
        if entropy is not None:
            metrics["entropy"] = masked_mean(entropy, mask)
        per_token, own = fn(**{k: given[k] for k in inputs}, **params)
        metrics |= own
        if ref_logp is not None and kl_beta != 0:
            kl = kl_k3(logp, ref_logp)
            metrics["kl_ref"] = masked_mean(kl, mask)
            per_token = per_token + kl_beta * kl
        if entropy_coef != 0:
            per_token = per_token - entropy_coef * entropy
        return AGGREGATIONS.get(agg)(per_token, mask, norm_mask), metrics

    shared = [p for p in inspect.signature(loss).parameters.values() if p.kind == p.KEYWORD_ONLY]
    own = [p for p in inspect.signature(fn).parameters.values() if p.name not in inputs]
    loss.__signature__ = inspect.Signature([*shared, *own])
    loss.__doc__, loss.__name__, loss.__qualname__ = fn.__doc__, fn.__name__, fn.__qualname__
    loss.reads_every_row = reads_every_row
    loss.on_policy = on_policy
    return loss


def surrogate(
    name: str, *, reads_every_row: bool = False, on_policy: str | None = None
) -> Callable[[Callable], Callable]:
    """`@surrogate("name")` registers the policy loss `name` composed from the decorated
    per-token surrogate (see the module docstring).

    Args:
        name: the loss's name, the option `algo.loss=NAME`.
        reads_every_row: True declares that its value on a row depends on the other rows (a
            batch statistic): the update then never skips a row.
        on_policy: the registered loss this one equals at one update per batch (rho = 1 at
            every token: Clip-Cov and KL-Cov are then the clipped loss); None: none.

    Returns:
        The decorator; it returns the surrogate itself as is.
    """

    def add(fn: Callable) -> Callable:
        POLICY_LOSSES.register(name)(_composed_loss(fn, reads_every_row, on_policy))
        return fn

    return add


def on_policy_loss(loss: str) -> str:
    """The loss whose update `loss` computes at one update per batch (rho = 1 at every token).

    Args:
        loss: a policy loss's name (registered or not: a plug-in's not installed).

    Returns:
        Its `on_policy` declaration, else `loss` itself.
    """
    if loss not in POLICY_LOSSES:
        return loss
    return getattr(POLICY_LOSSES.get(loss), "on_policy", None) or loss


def reads_every_row(loss: str) -> bool:
    """Whether a policy loss needs every row of a batch.

    Args:
        loss: a registered policy loss.

    Returns:
        Its declaration; True for a loss registered without `surrogate` (it does not say, so
        it gets every row).
    """
    return getattr(POLICY_LOSSES.get(loss), "reads_every_row", True)


@surrogate("clip")
def clip_surrogate(*, ratio, advantages, mask, clip_low: float = 0.2, clip_high: float = 0.2):
    """PPO clipped surrogate with separate bounds (arXiv 1707.06347):

        L_t = -min(rho_t A, clip(rho_t, 1 - clip_low, 1 + clip_high) A)

    GRPO (arXiv 2402.03300): clip_low = clip_high = 0.2. DAPO's clip-higher
    (arXiv 2503.14476): clip_low 0.2, clip_high 0.28. Clipped tokens get no gradient.

    Args:
        ratio: `[B, T]` rho_t = pi_theta / pi_old per token.
        advantages: `[B, 1]` or `[B, T]` advantages.
        mask: `[B, T]` 1 on the response tokens (for the metrics).
        clip_low: the lower bound is 1 - clip_low.
        clip_high: the upper bound is 1 + clip_high.

    Returns:
        The `[B, T]` per-token loss and the metrics `clipfrac_low`, `clipfrac_high` (the
        fractions of tokens clipped on each side).
    """
    adv = advantages
    clipped = torch.minimum(ratio * adv, ratio.clamp(1 - clip_low, 1 + clip_high) * adv)
    metrics = {
        "clipfrac_low": masked_mean(((ratio < 1 - clip_low) & (adv < 0)).float(), mask),
        "clipfrac_high": masked_mean(((ratio > 1 + clip_high) & (adv > 0)).float(), mask),
    }
    return -clipped, metrics


@surrogate("linear")
def linear_surrogate(*, logp, advantages):
    """The linear surrogate of the paper's categorical analysis (F-GRPO Appendix J, after
    BroRL, arXiv 2510.01180): L_t = -A pi_theta(a_t), so dL/dz_i = -A p_a (1[i = a] - p_i),
    the update of Eq. 5. Not a policy-gradient estimator (its gradient carries an extra p).
    It has no clip, so it takes no `clip_low`/`clip_high`.

    Args:
        logp: `[B, T]` log pi_theta(a_t), with gradient.
        advantages: `[B, 1]` or `[B, T]` advantages.

    Returns:
        The `[B, T]` per-token loss and no metrics.
    """
    return -advantages * logp.exp(), {}


@surrogate("cispo")
def cispo_surrogate(
    *, ratio, logp, advantages, mask, clip_low: float = 1.0, clip_high: float = 5.0
):
    """CISPO (MiniMax-M1, arXiv 2506.13585; F-GRPO Eq. 15-16):

        L_t = -sg(clip(rho_t, 1 - clip_low, 1 + clip_high)) A log pi_theta(a_t)

    The IS weight is clipped to [0, 6] by default (eps_low 1.0, eps_high 5.0, after ScaleRL,
    arXiv 2510.13786) and detached, so every token keeps its gradient. Both sides are
    clipped, as in verl; TRL clips the upper side only, which differs when clip_low < 1.

    Args:
        ratio: `[B, T]` rho_t = pi_theta / pi_old per token.
        logp: `[B, T]` log pi_theta(a_t), with gradient.
        advantages: `[B, 1]` or `[B, T]` advantages.
        mask: `[B, T]` 1 on the response tokens (for the metrics).
        clip_low: the IS weight's lower bound is 1 - clip_low.
        clip_high: the IS weight's upper bound is 1 + clip_high.

    Returns:
        The `[B, T]` per-token loss and the metrics `clipfrac_low`, `clipfrac_high`.
    """
    weight = ratio.clamp(1 - clip_low, 1 + clip_high).detach()
    metrics = {
        "clipfrac_low": masked_mean((ratio < 1 - clip_low).float(), mask),
        "clipfrac_high": masked_mean((ratio > 1 + clip_high).float(), mask),
    }
    return -weight * advantages * logp, metrics
