"""A method = reward transform (optional) + advantage estimator + focal weight + policy loss
(a per-token surrogate, the KL and entropy terms, one aggregation), from config.

`conf/algo/<name>.yaml` names the parts and sets their hyperparameters, so
`algo=cispo focal.gamma=1.0` composes F-CISPO. The trainer and the categorical simulation
both call `group_advantages` then `policy_loss`; the update asks `reads_every_row` which rows
it may skip.
"""

import contextlib
from collections.abc import Iterator

import torch

from mazerl.algos.advantages import (
    ADVANTAGES,
    INPUTS,
    REWARD_TRANSFORMS,
    all_equal,
    declares_all_equal_zero,
    estimator_inputs,
)
from mazerl.algos.config import AlgoConfig, FocalConfig
from mazerl.algos.focal import focal_weight, success_rate
from mazerl.algos.losses import POLICY_LOSSES
from mazerl.algos.losses import reads_every_row as loss_reads_every_row
from mazerl.core.errors import ConfigError


def group_advantages(
    rewards: torch.Tensor, algo: AlgoConfig, focal: FocalConfig, **inputs: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The focal-weighted group advantages g * A of a batch of groups.

    A is the estimator's on the transformed rewards (when a transform is set); the focal
    weight g and the diagnostics come from the rewards themselves.

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        algo: the method (`algo.*`: estimator, reward transform and their arguments).
        focal: the focal weighting (`focal.gamma`, `focal.correct_reward`).
        **inputs: what the estimator asks for besides the rewards (`estimator_inputs`), and
            nothing else: `logp_mean` `[P, G]`, `greedy_correct` `[P]` (`INPUTS`).

    Returns:
        `[P, G]` advantages and the diagnostics (scalar tensors): `frac_zero_adv_groups`,
        `frac_all_correct`, `frac_all_wrong` and `focal_weight_mean` (over mixed groups).
    """
    scored = rewards
    if algo.reward_transform is not None:
        scored = REWARD_TRANSFORMS.call(
            algo.reward_transform, rewards, **algo.reward_transform_kwargs
        )
    advantages = ADVANTAGES.call(algo.advantage, scored, **algo.advantage_kwargs, **inputs)
    mu = success_rate(rewards, focal.correct_reward)
    g = focal_weight(mu, focal.gamma)
    weighted = g * advantages
    mixed = ~all_equal(rewards)
    metrics = {
        "frac_zero_adv_groups": (weighted == 0).all(-1).float().mean(),
        "frac_all_correct": (mixed.logical_not() & (mu == 1)).float().mean(),
        "frac_all_wrong": (mixed.logical_not() & (mu == 0)).float().mean(),
        # the weight only matters where the advantage is non-zero: average over mixed groups
        "focal_weight_mean": (g * mixed).sum() / mixed.sum().clamp(min=1),
    }
    return weighted, metrics


def policy_loss(
    algo: AlgoConfig, **tensors: torch.Tensor | None
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The configured policy loss.

    The loss gets the method's hyperparameters it declares (the linear loss has no clip) and
    every one of `algo.loss_kwargs`.

    Args:
        algo: the method (`algo.loss`, `loss_agg_mode`, `clip_low`/`clip_high`, `kl_beta`,
            `entropy_coef`, `loss_kwargs`).
        **tensors: `logp`, `old_logp`, `mask` (`[B, T]`), `advantages` (`[B]` or `[B, T]`),
            and optionally `ref_logp`, `entropy` (`[B, T]`) and `norm_mask` (`[B', T]`), as
            `mazerl.algos.losses` describes them.

    Returns:
        The scalar loss to minimise and the metrics (detached scalars).

    Raises:
        ConfigError: an argument in `algo.loss_kwargs` the loss does not take (naming the
            loss's parameters).
    """
    hyper = {
        "clip_low": algo.clip_low,
        "clip_high": algo.clip_high,
        "kl_beta": algo.kl_beta,
        "entropy_coef": algo.entropy_coef,
        "agg": algo.loss_agg_mode,
    }
    hyper = {k: v for k, v in hyper.items() if POLICY_LOSSES.takes(algo.loss, k)}
    return POLICY_LOSSES.call(algo.loss, **hyper, **algo.loss_kwargs, **tensors)


def reads_every_row(algo: AlgoConfig) -> bool:
    """Whether the loss reads rows whose advantage is zero: the KL term and the entropy bonus
    do (they are non-zero on every row), and so does a loss that declares it (a batch
    statistic). Otherwise such rows add exactly zero, and the update may skip them.

    Args:
        algo: the method.

    Returns:
        True when the update must keep every row.
    """
    return algo.kl_beta > 0 or algo.entropy_coef > 0 or loss_reads_every_row(algo.loss)


@contextlib.contextmanager
def _about(key: str) -> Iterator[None]:
    """A `ConfigError` raised in the block names the config key `algo.<key>` first."""
    try:
        yield
    except ConfigError as e:
        raise ConfigError(f"algo.{key}: {e}") from None


def check_algo(algo: AlgoConfig, group_size: int) -> None:
    """Raise a one-line `ConfigError` if the method cannot run on groups of `group_size`: a
    part given an argument it does not take or lacking one it needs, a value a part refuses
    (each part checks its own values, so each is called once: the transform and estimator on
    a group of zero rewards, the loss on one row of two tokens), an estimator's input (`INPUTS`)
    given as a setting, or DAPO's filter with an estimator that gives all-equal groups a
    signal.

    Args:
        algo: the method.
        group_size: G, rollouts per prompt.

    Raises:
        ConfigError: the method cannot run, naming the config key (`algo.<key>`) first.
    """
    for parts in (REWARD_TRANSFORMS, ADVANTAGES, POLICY_LOSSES):
        parts.load()  # a part module that fails to load is its own error, not an algo key's
    rewards = torch.zeros(1, group_size)
    with _about("reward_transform_kwargs"):
        if algo.reward_transform is not None:
            kwargs = algo.reward_transform_kwargs
            rewards = REWARD_TRANSFORMS.call(algo.reward_transform, rewards, **kwargs)
        elif algo.reward_transform_kwargs:
            raise ConfigError("given, but algo.reward_transform is null")
    with _about("advantage_kwargs"):
        computed = sorted(set(algo.advantage_kwargs) & set(INPUTS))
        if computed:
            raise ConfigError(f"{', '.join(computed)}: computed by the step, not a setting")
        example = {
            "logp_mean": torch.zeros(1, group_size),
            "greedy_correct": torch.zeros(1, dtype=torch.bool),
        }
        inputs = {k: example[k] for k in estimator_inputs(algo.advantage)}
        ADVANTAGES.call(algo.advantage, rewards, **algo.advantage_kwargs, **inputs)
    with _about("loss_kwargs"):
        t = torch.zeros(1, 2)
        one_token = dict(logp=t, old_logp=t, advantages=torch.zeros(1), mask=torch.ones(1, 2))
        policy_loss(algo, **one_token, entropy=t)
    if algo.dynamic_sampling and not declares_all_equal_zero(algo.advantage):
        raise ConfigError(
            f"algo.dynamic_sampling must be false with algo.advantage={algo.advantage}, which "
            "gives all-equal groups a non-zero advantage (the filter would drop them)"
        )


def keep_mixed_groups(rewards: torch.Tensor) -> torch.Tensor:
    """DAPO dynamic sampling filter (arXiv 2503.14476). The trainer drops the groups it
    rejects and samples more prompts to refill.

    Args:
        rewards: `[P, G]` rewards.

    Returns:
        `[P]` bool, True for groups whose rewards are not all equal.
    """
    return ~all_equal(rewards).squeeze(-1)
