"""The settings of a method (`AlgoConfig`, one `conf/algo/*.yaml`) and of F-GRPO's focal
weighting (`FocalConfig`), each field with its rule and description.

No torch here: `--help` and the config checks read these classes and the registries of the
parts (whose names are read from the part modules' source, `Registry.known`) without loading
the objectives.
"""

from dataclasses import dataclass

from mazerl.core.config import CONF_DIR
from mazerl.core.registry import Registry
from mazerl.core.settings import (
    FLAG,
    MAPPING,
    NATURAL,
    NON_NEGATIVE,
    POSITIVE,
    TEXT,
    number,
    optional,
    registered,
    setting,
)

# the registries of a method's parts: a module of `mazerl.algos` that uses one of the
# decorators registers parts (`mazerl.core.registry`); the names are known without torch
ADVANTAGES = Registry("advantage estimator", "mazerl.algos", ("estimator", "ADVANTAGES.register"))
REWARD_TRANSFORMS = Registry("reward transform", "mazerl.algos", ("REWARD_TRANSFORMS.register",))
POLICY_LOSSES = Registry("policy loss", "mazerl.algos", ("surrogate", "POLICY_LOSSES.register"))
AGGREGATIONS = Registry("loss aggregation", "mazerl.algos", ("AGGREGATIONS.register",))


@dataclass
class AlgoConfig:
    """Hyperparameters of one method (one `conf/algo/*.yaml`); `check_algo` checks the
    registered parts' arguments on a group size."""

    name: str = setting("grpo", TEXT, "the method's name (as logged)")
    advantage: str = setting(
        "grpo", registered(ADVANTAGES), "a registered group advantage estimator"
    )
    # the *_kwargs values are checked by check_algo against the registered part's signature
    advantage_kwargs: dict = setting(
        {}, MAPPING, "the estimator's hyperparameters (checked against its signature)"
    )
    reward_transform: str | None = setting(
        None,
        optional(registered(REWARD_TRANSFORMS)),
        "a registered reward transform applied first (PKPO), or null",
    )
    reward_transform_kwargs: dict = setting(
        {}, MAPPING, "the transform's hyperparameters (as advantage_kwargs)"
    )
    loss: str = setting(
        "clip", registered(POLICY_LOSSES), "a registered policy loss (per-token surrogate)"
    )
    clip_low: float = setting(0.2, POSITIVE, "eps_low of the clip (or of CISPO's IS weight)")
    clip_high: float = setting(0.2, POSITIVE, "eps_high of the clip")
    kl_beta: float = setting(
        0.0, NON_NEGATIVE, "coefficient of the k3 KL to the base (reference) policy"
    )
    entropy_coef: float = setting(
        0.0,
        NON_NEGATIVE,
        "coefficient of the entropy bonus (-c H_t per token; reads every row)",
    )
    loss_agg_mode: str = setting(
        "token-mean",
        registered(AGGREGATIONS),
        "how token losses are aggregated (a registered aggregation)",
    )
    dynamic_sampling: bool = setting(
        False, FLAG, "DAPO's filter: drop groups with all-equal rewards and refill"
    )
    dynamic_sampling_max_rounds: int = setting(
        4, NATURAL, "extra sampling rounds to refill the batch"
    )
    loss_kwargs: dict = setting(
        {}, MAPPING, "the loss's other hyperparameters (checked against its signature)"
    )
    label: str | None = setting(
        None,
        optional(TEXT),
        "the method's display name in tables and figures (null: its name; a YAML on a base "
        "inherits the base's); a template: {gamma} the focal exponent, {a.b} a setting of "
        "this config, [...] shown only with the focal weight (gamma > 0): '[F-]GRPO[ γ {gamma}]'",
    )


@dataclass
class FocalConfig:
    """F-GRPO's focal coefficient g = (1 - mu_hat)^gamma; gamma = 0 turns it off."""

    gamma: float = setting(
        0.5, NON_NEGATIVE, "F-GRPO's focal exponent: g = (1 - mu_hat)^gamma; 0 turns it off"
    )
    correct_reward: float | None = setting(
        1.0, optional(number()), "mu_hat counts rewards >= this (null: the group's maximum)"
    )


def estimator_methods() -> list[str]:
    """The advantage estimators without a `conf/algo/NAME.yaml`, in-tree or a plug-in's: each
    is the option `algo=NAME` (`estimator_method`). Read without importing the objectives
    (`Registry.known`), so `--help` loads no torch."""
    return [n for n in ADVANTAGES.known() if not (CONF_DIR / "algo" / f"{n}.yaml").is_file()]


def estimator_method(name: str) -> AlgoConfig:
    """The option `algo=NAME` of an estimator without a YAML: GRPO's settings (the clipped
    loss, no KL, token-mean aggregation) with `name` and `advantage` NAME."""
    return AlgoConfig(name=name, advantage=name)
