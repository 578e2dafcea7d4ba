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

The reward function's keys moved: verl up to 0.7.0 reads the top-level
`custom_reward_function.path` / `.name`; from 0.7.1 on `config.reward.custom_reward_function`
(`verl.trainer.ppo.reward.get_custom_reward_fn`, read in the released 0.6.1, 0.7.0, 0.7.1 and
0.9.1), and `main_ppo` ignores the legacy top-level keys (it never calls
`migrate_legacy_reward_impl`), so verl's default scorer then fails on mazerl's `data_source`.
`overrides` writes the keys of the installed verl, the current ones when none is installed.
Tested with verl 0.9.1 (`tests/test_llm_verl.py` composes its `ppo_trainer.yaml`).
"""

import importlib.metadata
import json
import os

from packaging.version import Version

from mazerl.core.errors import ConfigError
from mazerl.llm.objective import check_objective

MODULE = "mazerl.llm.verl_estimators"  # registers mazerl_<name> for every mazerl estimator
GAMMA_VARIABLE = "MAZERL_FOCAL_GAMMA"
KWARGS_VARIABLE = "MAZERL_ADVANTAGE_KWARGS"
DEFAULT_GAMMA = 0.5
REWARD_UNDER_REWARD = Version("0.7.1")  # the first verl reading reward.custom_reward_function


def focal_gamma() -> float:
    """The focal exponent of this process.

    Returns:
        gamma from `MAZERL_FOCAL_GAMMA` (default 0.5).

    Raises:
        ConfigError: the variable is not a finite number >= 0 (naming it).
    """
    text = os.environ.get(GAMMA_VARIABLE, str(DEFAULT_GAMMA))
    try:
        gamma = float(text)
    except ValueError:
        raise ConfigError(f"{GAMMA_VARIABLE} must be a number, got {text!r}") from None
    if not (gamma >= 0 and gamma != float("inf")):
        raise ConfigError(f"{GAMMA_VARIABLE} must be a finite number >= 0, got {text!r}")
    return gamma


def advantage_kwargs() -> dict:
    """The estimator's hyperparameters of this process.

    Returns:
        The JSON object of `MAZERL_ADVANTAGE_KWARGS` (default: none).

    Raises:
        ConfigError: the variable is not a JSON object (naming it).
    """
    text = os.environ.get(KWARGS_VARIABLE, "{}")
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError:
        kwargs = None
    if not isinstance(kwargs, dict):
        raise ConfigError(f"{KWARGS_VARIABLE} must be a JSON object, got {text!r}")
    return kwargs


def runtime_env(gamma: float = DEFAULT_GAMMA, kwargs: dict | None = None) -> dict[str, str]:
    """The environment variables every verl process needs.

    Args:
        gamma: the focal exponent.
        kwargs: the estimator's hyperparameters, if any.

    Returns:
        `VERL_USE_EXTERNAL_MODULES` (the module that registers mazerl's estimators),
        `MAZERL_FOCAL_GAMMA` and, when `kwargs` is given, `MAZERL_ADVANTAGE_KWARGS` (JSON).
    """
    env = {"VERL_USE_EXTERNAL_MODULES": MODULE, GAMMA_VARIABLE: repr(float(gamma))}
    if kwargs:
        env[KWARGS_VARIABLE] = json.dumps(kwargs, separators=(",", ":"))
    return env


def installed_verl() -> str | None:
    """The installed verl's version, read from its metadata (verl is not imported).

    Returns:
        The version text, or None when verl is not installed.
    """
    try:
        return importlib.metadata.version("verl")
    except importlib.metadata.PackageNotFoundError:
        return None


def reward_overrides(verl_version: str | None = None) -> list[str]:
    """The Hydra overrides that make verl score with mazerl's `compute_score`.

    Args:
        verl_version: the verl they are for; None: the installed verl's, or the current keys
            when none is installed.

    Returns:
        `reward.custom_reward_function.path=pkg://mazerl.llm.verifier` and `.name=
        compute_score` for verl >= 0.7.1; the legacy top-level `custom_reward_function.*` keys
        for an older verl.
    """
    version = verl_version or installed_verl()
    legacy = version is not None and Version(version) < REWARD_UNDER_REWARD
    prefix = "" if legacy else "reward."
    return [
        f"{prefix}custom_reward_function.path=pkg://mazerl.llm.verifier",
        f"{prefix}custom_reward_function.name=compute_score",
    ]


def overrides(
    algo: str = "grpo",
    gamma: float = DEFAULT_GAMMA,
    kwargs: dict | None = None,
    verl_version: str | None = None,
) -> list[str]:
    """`verl.trainer.main_ppo` Hydra overrides for a mazerl estimator and reward function.

    The environment values are quoted so that Hydra keeps them strings (Ray takes no numbers
    there).

    Args:
        algo: an estimator name (`mazerl.llm.objective.estimator_names`).
        gamma: the focal exponent (0: the estimator alone).
        kwargs: the estimator's (a transform's) hyperparameters, over those of its method
            file (`objective.method_kwargs`: `pkpo` and `passk` get k = 4).
        verl_version: as `reward_overrides`.

    Returns:
        The estimator `algorithm.adv_estimator=mazerl_<algo>`, Ray's runtime environment
        (`runtime_env`) and the reward function (`reward_overrides`).

    Raises:
        ConfigError: an unknown estimator, a missing or unknown argument, or a bad gamma.
    """
    env = runtime_env(gamma, check_objective(algo, gamma, kwargs or {}))
    return [
        f"algorithm.adv_estimator=mazerl_{algo}",
        *(f"+ray_kwargs.ray_init.runtime_env.env_vars.{k}='{v}'" for k, v in env.items()),
        *reward_overrides(verl_version),
    ]
