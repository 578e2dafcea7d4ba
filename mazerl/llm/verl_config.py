"""How mazerl plugs into verl's `python -m verl.trainer.main_ppo` (no verl import here).

verl runs its trainer (`TaskRunner`) and workers as Ray actors, each a fresh process with its
own registry of advantage estimators, so registering in the launching script reaches the driver
only. What every verl process does load is `VERL_USE_EXTERNAL_MODULES`: `import verl` imports
the comma-separated modules it names (`verl/__init__.py`, verl 0.9.1). Set in Ray's runtime
environment (`ray_kwargs.ray_init.runtime_env.env_vars`, which verl passes to `ray.init`), it
reaches every actor, and so do the focal exponent and the estimator's hyperparameters, read at
each call from `MAZERL_FOCAL_GAMMA` and `MAZERL_ADVANTAGE_KWARGS` (JSON; verl's `AlgoConfig`
has no field for them). `overrides` writes those settings, the estimator's name and mazerl's
reward function as Hydra overrides (`mazerl-llm verl-args` prints them).
"""

import json
import os

from mazerl.core.errors import ConfigError
from mazerl.llm.objective import check_objective

MODULE = "mazerl.llm.verl_estimators"  # registers mazerl_<name> for every mazerl estimator
GAMMA_VARIABLE = "MAZERL_FOCAL_GAMMA"
KWARGS_VARIABLE = "MAZERL_ADVANTAGE_KWARGS"
DEFAULT_GAMMA = 0.5


def focal_gamma() -> float:
    """gamma from `MAZERL_FOCAL_GAMMA` (default 0.5); a `ConfigError` naming the variable when
    it is not a finite number >= 0."""
    text = os.environ.get(GAMMA_VARIABLE, str(DEFAULT_GAMMA))
    try:
        gamma = float(text)
    except ValueError:
        raise ConfigError(f"{GAMMA_VARIABLE} must be a number, got {text!r}") from None
    if not (gamma >= 0 and gamma != float("inf")):
        raise ConfigError(f"{GAMMA_VARIABLE} must be a finite number >= 0, got {text!r}")
    return gamma


def advantage_kwargs() -> dict:
    """The estimator's hyperparameters from `MAZERL_ADVANTAGE_KWARGS`, a JSON object (default
    none); a `ConfigError` naming the variable otherwise."""
    text = os.environ.get(KWARGS_VARIABLE, "{}")
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError:
        kwargs = None
    if not isinstance(kwargs, dict):
        raise ConfigError(f"{KWARGS_VARIABLE} must be a JSON object, got {text!r}")
    return kwargs


def runtime_env(gamma: float = DEFAULT_GAMMA, kwargs: dict | None = None) -> dict[str, str]:
    """The environment variables every verl process needs: the module that registers mazerl's
    estimators, the focal exponent and (when given) the estimator's hyperparameters."""
    env = {"VERL_USE_EXTERNAL_MODULES": MODULE, GAMMA_VARIABLE: repr(float(gamma))}
    if kwargs:
        env[KWARGS_VARIABLE] = json.dumps(kwargs, separators=(",", ":"))
    return env


def overrides(algo: str = "grpo", gamma: float = DEFAULT_GAMMA, kwargs: dict | None = None):
    """`verl.trainer.main_ppo` Hydra overrides (a list of strings) for mazerl's estimator
    `algo` with its hyperparameters `kwargs`, times the focal weight with `gamma`, and mazerl's
    reward function; a `ConfigError` for an unknown estimator, a missing or unknown argument or
    a bad gamma. The environment values are quoted so that Hydra keeps them strings (Ray takes
    no numbers there)."""
    check_objective(algo, gamma, kwargs or {})
    env = runtime_env(gamma, kwargs)
    return [
        f"algorithm.adv_estimator=mazerl_{algo}",
        *(f"+ray_kwargs.ray_init.runtime_env.env_vars.{k}='{v}'" for k, v in env.items()),
        "custom_reward_function.path=pkg://mazerl.llm.verifier",
        "custom_reward_function.name=compute_score",
    ]
