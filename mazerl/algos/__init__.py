"""Group-based RLVR objectives as pure functions over tensors.

Every module in this package is imported here, so a new advantage estimator or policy loss
is one new file that registers itself (`@ADVANTAGES.register`, `@POLICY_LOSSES.register`)
plus one `conf/algo/NAME.yaml` that names it.
"""

import importlib
import pkgutil

from mazerl.algos.advantages import ADVANTAGES
from mazerl.algos.focal import focal_weight, success_rate
from mazerl.algos.losses import AGGREGATIONS, POLICY_LOSSES
from mazerl.algos.objective import (
    AlgoConfig,
    FocalConfig,
    group_advantages,
    keep_mixed_groups,
    policy_loss,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "ADVANTAGES",
    "AGGREGATIONS",
    "POLICY_LOSSES",
    "AlgoConfig",
    "FocalConfig",
    "focal_weight",
    "group_advantages",
    "keep_mixed_groups",
    "policy_loss",
    "success_rate",
]
