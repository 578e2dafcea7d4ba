"""Group-based RLVR objectives as pure functions over tensors.

Every module of this package is imported here, by name, so that its parts are registered: a
new advantage estimator, reward transform or policy loss is one new file that registers itself
(`@estimator`, `@REWARD_TRANSFORMS.register`, `@surrogate`), added to the import list below,
plus one `conf/algo/NAME.yaml` that names it.
"""

# the modules that only register parts (estimators, transforms, losses)
from mazerl.algos import (  # noqa: F401
    clip_cov,
    entropy_adv,
    kl_cov,
    maxrl,
    passk,
    pkpo,
    tail_miss,
    w_reinforce,
)
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
