"""A method = advantage estimator + focal weight + policy loss + aggregation, from config.

`conf/algo/<name>.yaml` names the estimator and the loss and sets their defaults, so
`algo=cispo focal.gamma=1.0` composes F-CISPO. The trainer and the categorical simulation
both call `group_advantages` then `policy_loss`.
"""

from dataclasses import dataclass, field

import torch

from mazerl.algos.advantages import ADVANTAGES, all_equal
from mazerl.algos.focal import focal_weight, success_rate
from mazerl.algos.losses import POLICY_LOSSES


@dataclass
class AlgoConfig:
    """Hyperparameters of one method (one `conf/algo/*.yaml`)."""

    name: str = "grpo"
    advantage: str = "grpo"  # a registered advantage estimator
    loss: str = "clip"  # a registered policy loss
    clip_low: float = 0.2  # eps_low (clip) or the IS-weight eps_low (cispo)
    clip_high: float = 0.2  # eps_high
    kl_beta: float = 0.0  # coefficient of the k3 KL to the base (reference) policy
    loss_agg_mode: str = "token-mean"  # a registered aggregation
    dynamic_sampling: bool = False  # DAPO's filter: drop all-equal groups and refill
    dynamic_sampling_max_rounds: int = 4  # extra sampling rounds to refill the batch
    loss_kwargs: dict = field(default_factory=dict)  # extra arguments for a custom loss


@dataclass
class FocalConfig:
    """F-GRPO's focal coefficient g = (1 - mu_hat)^gamma; gamma = 0 turns it off."""

    gamma: float = 0.5
    correct_reward: float | None = 1.0  # mu_hat counts rewards >= this; null: group maximum


def group_advantages(
    rewards: torch.Tensor, algo: AlgoConfig, focal: FocalConfig
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """`[P, G]` rewards -> `[P, G]` advantages g * A and group diagnostics."""
    advantages = ADVANTAGES.get(algo.advantage)(rewards)
    mu = success_rate(rewards, focal.correct_reward)
    g = focal_weight(mu, focal.gamma)
    mixed = ~all_equal(rewards)
    metrics = {
        "frac_zero_adv_groups": (~mixed).float().mean(),
        "frac_all_correct": (mixed.logical_not() & (mu == 1)).float().mean(),
        "frac_all_wrong": (mixed.logical_not() & (mu == 0)).float().mean(),
        # the weight only matters where the advantage is non-zero: average over mixed groups
        "focal_weight_mean": (g * mixed).sum() / mixed.sum().clamp(min=1),
    }
    return g * advantages, metrics


def policy_loss(
    algo: AlgoConfig, **tensors: torch.Tensor | None
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The configured loss on `logp, old_logp, advantages, mask[, ref_logp, entropy]`: it gets
    the method's hyperparameters it declares (the linear loss has no clip) and every one of
    `algo.loss_kwargs`, an unknown one being a `ConfigError` naming the loss's parameters."""
    hyper = {
        "clip_low": algo.clip_low,
        "clip_high": algo.clip_high,
        "kl_beta": algo.kl_beta,
        "agg": algo.loss_agg_mode,
    }
    hyper = {k: v for k, v in hyper.items() if POLICY_LOSSES.takes(algo.loss, k)}
    return POLICY_LOSSES.call(algo.loss, **hyper, **algo.loss_kwargs, **tensors)


def keep_mixed_groups(rewards: torch.Tensor) -> torch.Tensor:
    """DAPO dynamic sampling filter (arXiv 2503.14476): `[P]` bool, True for groups whose
    rewards are not all equal. The trainer drops the rest and samples more prompts to refill."""
    return ~all_equal(rewards).squeeze(-1)
