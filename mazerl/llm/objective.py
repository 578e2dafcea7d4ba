"""mazerl's objectives for language-model trainers: a registered advantage estimator (after a
registered reward transform, for PKPO) times the focal weight, on a `[P, G]` reward tensor (P
prompts, G completions each).

A thin adapter over mazerl's public entry points (`ADVANTAGES` and `REWARD_TRANSFORMS` called
by name with their hyperparameters, `success_rate`, `focal_weight`), so TRL's
`FocalGRPOTrainer` and verl's registered estimators compute exactly what `mazerl-train`
computes. The bridge's names (`estimator_names`) are every advantage estimator and every
reward transform: a transform's name runs the transform, then the advantage estimator of its
method file `conf/algo/NAME.yaml` (`pkpo`: the PKPO transform, then `rloo`), as
`mazerl-train algo=NAME` does. The policy loss stays the framework's own.

An estimator that asks for more than the rewards (`mazerl.algos.estimator_inputs`: SELF's
greedy answers, the sampling log-probabilities of Differential Smoothing and the unlikeliness
reward) is not one of the bridge's names: neither framework hands it over (`UNAVAILABLE`), and
asking for one is a one-line `ConfigError` saying so.
"""

import inspect
import math

import torch
from omegaconf import OmegaConf

from mazerl.algos import (
    ADVANTAGES,
    REWARD_TRANSFORMS,
    estimator_inputs,
    focal_weight,
    success_rate,
)
from mazerl.core.config import CONF_DIR, load_option
from mazerl.core.errors import ConfigError

# why the bridge cannot hand an estimator's input (`mazerl.algos.advantages.INPUTS`) over
UNAVAILABLE = {
    "logp_mean": "the sampling log-probabilities, which verl 0.9.1 passes only to its own "
    "optimal-token-baseline estimators and TRL 1.16 computes only for an off-policy update, "
    "for each process's rows",
    "greedy_correct": "a greedy answer per prompt, which neither TRL nor verl generates for "
    "an estimator",
}


def estimator_names() -> list[str]:
    """The names the bridge takes as an estimator (`--algo`, `mazerl_<name>` in verl).

    Returns:
        Every registered advantage estimator of rewards alone and every reward transform,
        sorted (`drgrpo`, `grpo`, `maxrl`, `passk`, `pkpo`, `rloo`, `w_reinforce` and an
        installed plug-in's).
    """
    alone = [n for n in ADVANTAGES.names() if not estimator_inputs(n)]
    return sorted({*alone, *REWARD_TRANSFORMS.names()})


def method_parts(algo: str) -> tuple[str | None, str, dict]:
    """What an estimator name runs.

    Args:
        algo: a name of `estimator_names()`.

    Returns:
        `(transform, advantage, advantage_kwargs)`: for an advantage estimator `(None, algo,
        {})`; for a reward transform the transform's name and the advantage estimator with
        its hyperparameters that `conf/algo/<algo>.yaml` names (`pkpo`: `("pkpo", "rloo",
        {})`).

    Raises:
        ConfigError: `algo` is neither, naming the known names; an estimator that asks for
            more than the rewards, naming what; or a transform has no method file naming its
            advantage estimator.
    """
    if algo in ADVANTAGES:
        needs = estimator_inputs(algo)
        if needs:
            missing = "; ".join(f"{k}: {UNAVAILABLE[k]}" for k in needs)
            raise ConfigError(
                f"advantage estimator {algo!r} runs in mazerl-train only: it needs {missing}"
            )
        return None, algo, {}
    if algo in REWARD_TRANSFORMS:
        path = CONF_DIR / "algo" / f"{algo}.yaml"
        if not path.is_file():
            raise ConfigError(
                f"reward transform {algo!r} has no method file conf/algo/{algo}.yaml naming "
                "the advantage estimator that follows it"
            )
        method = load_option("algo", algo)
        return algo, method.advantage, OmegaConf.to_container(method.advantage_kwargs)
    raise ConfigError(
        f"unknown advantage estimator {algo!r}; known: {', '.join(estimator_names())}"
    )


def focal_advantages(
    rewards: torch.Tensor, algo: str = "grpo", gamma: float = 0.5, **advantage_kwargs
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages g * A of groups of rewards, and their focal weights g.

    A is the advantage estimator `algo` (`grpo`, `drgrpo`, `rloo`, ...) called with
    `advantage_kwargs` (`passk` needs `k`, `w_reinforce` its two weights, as mazerl's
    `algo.advantage_kwargs`); for a reward transform `algo` (`pkpo`) it is the advantage
    estimator of `method_parts` on the transformed rewards, `advantage_kwargs` going to the
    transform (`pkpo` needs `k`). g = (1 - mu_hat)^gamma with mu_hat the group's fraction of
    rewards >= 1, from the rewards themselves (F-GRPO, Eq. 11-13); gamma = 0 gives A itself.

    Args:
        rewards: `[P, G]` rewards, P groups of G completions.
        algo: an estimator name (`estimator_names`).
        gamma: the focal exponent, >= 0.
        **advantage_kwargs: the estimator's (or transform's) hyperparameters.

    Returns:
        `[P, G]` advantages g * A and `[P, 1]` focal weights g.

    Raises:
        ConfigError: an unknown `algo` (naming the known ones), or a missing or unknown
            argument.
    """
    transform, advantage, fixed = method_parts(algo)
    if transform is None:
        advantages = ADVANTAGES.call(advantage, rewards, **advantage_kwargs)
    else:
        scored = REWARD_TRANSFORMS.call(transform, rewards, **advantage_kwargs)
        advantages = ADVANTAGES.call(advantage, scored, **fixed)
    g = focal_weight(success_rate(rewards), gamma)
    return g * advantages, g


def method_kwargs(algo: str) -> dict:
    """The hyperparameters mazerl's method file gives an estimator name: what `mazerl-train
    algo=<algo>` runs with.

    Args:
        algo: a name of `estimator_names()`.

    Returns:
        From `conf/algo/<algo>.yaml` with its bases (`load_option`): its
        `reward_transform_kwargs` for a reward transform (`pkpo`: `{"k": 4}`), its
        `advantage_kwargs` for an advantage estimator the file names as its `advantage`
        (`passk`: `{"k": 4}`); `{}` where there is no such file (a plug-in's estimator).
    """
    path = CONF_DIR / "algo" / f"{algo}.yaml"
    if not path.is_file():
        return {}
    method = load_option("algo", algo)
    if method.get("reward_transform") == algo:
        return OmegaConf.to_container(method.reward_transform_kwargs)
    if method.get("advantage") == algo:
        return OmegaConf.to_container(method.advantage_kwargs)
    return {}


def settable(registry, name: str) -> list[str]:
    """The hyperparameters of a registered estimator or transform: its keyword parameters
    after the rewards it is called on."""
    return registry.parameters(name)[1:]


def check_objective(algo: str, gamma: float, advantage_kwargs: dict) -> dict:
    """Check an objective's settings before any rewards exist, and complete them.

    Args:
        algo: an estimator name (`estimator_names`).
        gamma: the focal exponent.
        advantage_kwargs: the estimator's (a transform's, for a transform name)
            hyperparameters given by the user (`--algo-arg`), over `method_kwargs(algo)`.

    Returns:
        The hyperparameters the objective runs with: `method_kwargs(algo)` updated with
        `advantage_kwargs` (`passk` with none given: `{"k": 4}`).

    Raises:
        ConfigError: an unknown estimator, an argument it does not take (naming the ones
            it does) or lacks (naming `--algo-arg`), or a gamma that is not a finite
            number >= 0.
    """
    transform, advantage, _ = method_parts(algo)
    registry, name = (ADVANTAGES, advantage) if transform is None else (REWARD_TRANSFORMS, algo)
    kwargs = {**method_kwargs(algo), **advantage_kwargs}
    unknown = sorted(k for k in kwargs if not registry.takes(name, k))
    if unknown:
        raise ConfigError(
            f"{registry.kind} {name!r} takes no argument {', '.join(map(repr, unknown))}; "
            f"its arguments: {', '.join(settable(registry, name)) or 'none'}"
        )
    params = list(inspect.signature(registry.get(name)).parameters.values())[1:]
    missing = [p.name for p in params if p.default is p.empty and p.name not in kwargs]
    if missing:
        raise ConfigError(
            f"{registry.kind} {name!r} needs the argument {', '.join(missing)}: give it with "
            + " ".join(f"--algo-arg {m}=VALUE" for m in missing)
        )
    if not (isinstance(gamma, int | float) and math.isfinite(gamma) and gamma >= 0):
        raise ConfigError(f"focal gamma must be a finite number >= 0, got {gamma!r}")
    return kwargs
