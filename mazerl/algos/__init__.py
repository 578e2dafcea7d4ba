"""Group-based RLVR objectives as pure functions over tensors.

A new advantage estimator, reward transform or policy loss is one new file in this package
that registers itself (`@estimator`, `@REWARD_TRANSFORMS.register`, `@surrogate`): the
registries (`mazerl.algos.config`) find the modules that use their decorators
(`mazerl.core.registry`). An estimator is then the option `algo=NAME` (GRPO's other
settings); a `conf/algo/NAME.yaml` is needed only for a method whose other settings differ.

Importing the package loads no torch: the settings (`AlgoConfig`, `FocalConfig`) and the
registries are here at once, so `--help` and the config checks read them without the
objectives; the first use of any other name below imports its module.
"""

from mazerl.algos.config import (
    ADVANTAGES,
    AGGREGATIONS,
    POLICY_LOSSES,
    REWARD_TRANSFORMS,
    AlgoConfig,
    FocalConfig,
    estimator_method,
    estimator_methods,
)
from mazerl.core.lazy import lazy_getattr

# the objectives' names -> their modules (imported on first use)
LAZY = {
    "estimator": "advantages",
    "estimator_inputs": "advantages",
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


__getattr__ = lazy_getattr(__name__, LAZY)


__all__ = [
    "ADVANTAGES",
    "AGGREGATIONS",
    "POLICY_LOSSES",
    "REWARD_TRANSFORMS",
    "AlgoConfig",
    "FocalConfig",
    "estimator_method",
    "estimator_methods",
    *LAZY,
]
