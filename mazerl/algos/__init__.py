"""Group-based RLVR objectives as pure functions over tensors.

Every module in this package is imported here, so a new advantage estimator, reward transform
or policy loss is one new file that registers itself (`@estimator`,
`@REWARD_TRANSFORMS.register`, `@surrogate`) plus one `conf/algo/NAME.yaml` that names it.
"""

import importlib
import pkgutil

from mazerl.algos.advantages import ADVANTAGES, REWARD_TRANSFORMS, estimator
from mazerl.algos.focal import focal_weight, success_rate
from mazerl.algos.losses import AGGREGATIONS, POLICY_LOSSES, surrogate
from mazerl.algos.objective import (
    AlgoConfig,
    FocalConfig,
    check_algo,
    group_advantages,
    keep_mixed_groups,
    policy_loss,
    reads_every_row,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "ADVANTAGES",
    "AGGREGATIONS",
    "POLICY_LOSSES",
    "REWARD_TRANSFORMS",
    "AlgoConfig",
    "FocalConfig",
    "check_algo",
    "estimator",
    "focal_weight",
    "group_advantages",
    "keep_mixed_groups",
    "policy_loss",
    "reads_every_row",
    "success_rate",
    "surrogate",
]
