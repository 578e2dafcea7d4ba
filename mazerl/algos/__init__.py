"""Group-based RLVR objectives as pure functions over tensors.

Every module of `PARTS` registers its parts when imported: a new advantage estimator, reward
transform or policy loss is one new file that registers itself (`@estimator`,
`@REWARD_TRANSFORMS.register`, `@surrogate`), added to `PARTS`, plus one `conf/algo/NAME.yaml`
that names it.

Importing the package loads no torch: the settings (`AlgoConfig`, `FocalConfig`, from
`mazerl.algos.config`) are here at once, so `--help` reads them without the objectives; the
first use of any other name below imports every module of `PARTS` (registering their parts),
then the name's module.
"""

import importlib

from mazerl.algos.config import AlgoConfig, FocalConfig, plugin_method, plugin_methods

# the modules that register parts (estimators, transforms, losses)
PARTS = (
    "advantages",
    "losses",
    "clip_cov",
    "entropy_adv",
    "kl_cov",
    "maxrl",
    "passk",
    "pkpo",
    "tail_miss",
    "w_reinforce",
)
# the objectives' names -> their modules (imported on first use)
LAZY = {
    "ADVANTAGES": "advantages",
    "REWARD_TRANSFORMS": "advantages",
    "estimator": "advantages",
    "AGGREGATIONS": "losses",
    "POLICY_LOSSES": "losses",
    "on_policy_loss": "losses",
    "surrogate": "losses",
    "focal_weight": "focal",
    "success_rate": "focal",
    "check_algo": "objective",
    "group_advantages": "objective",
    "keep_mixed_groups": "objective",
    "policy_loss": "objective",
    "reads_every_row": "objective",
}


def __getattr__(name: str):
    """A name of `LAZY`, on its first use: every module of `PARTS` imported first."""
    if name not in LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for part in PARTS:
        importlib.import_module(f"{__name__}.{part}")
    return getattr(importlib.import_module(f"{__name__}.{LAZY[name]}"), name)


__all__ = ["AlgoConfig", "FocalConfig", "plugin_method", "plugin_methods", *LAZY]
