"""Registers mazerl's advantage estimators, focal weight included, with verl on import.

Every name of `mazerl.llm.objective.estimator_names` becomes `mazerl_<name>` (`mazerl_drgrpo`,
`mazerl_grpo`, `mazerl_maxrl`, `mazerl_passk`, `mazerl_pkpo`, `mazerl_rloo`,
`mazerl_w_reinforce`, and those of installed plug-ins) through verl's `register_adv_est`;
`mazerl_pkpo` applies PKPO's reward transform, then its advantage estimator. verl imports this
module in every process when `VERL_USE_EXTERNAL_MODULES` names it (`verl_config`: set it in
Ray's runtime environment; `mazerl-llm verl-args` writes the overrides):

    python -m verl.trainer.main_ppo $(mazerl-llm verl-args --algo grpo --gamma 0.5) ...

verl calls an estimator as `fn(token_level_rewards, response_mask, index, config, ...)`: the
outcome reward of each response is its token rewards' sum, responses are grouped by `index`
(verl's prompt uid; every group must have the same size), and the advantage
`[bs, response_length]` is `focal_advantages` of the group, on every response token. gamma is
read at each call from `MAZERL_FOCAL_GAMMA` (default 0.5; 0 gives the estimator alone), the
estimator's hyperparameters from `MAZERL_ADVANTAGE_KWARGS` (JSON, e.g. `{"k":4}` for `passk`
and `pkpo`). Tested with a stand-in of verl's registry across a process boundary and, where
verl is installed, with verl's own registry and config (`tests/test_llm_verl.py`; verl 0.9.1).
"""

import numpy as np
import torch
from verl.trainer.ppo.core_algos import register_adv_est

from mazerl.core.plugins import load_plugins
from mazerl.llm.objective import estimator_names, focal_advantages
from mazerl.llm.verl_config import advantage_kwargs, focal_gamma


def group_order(index) -> tuple[np.ndarray, int]:
    """The row order that puts each group's rows together.

    Args:
        index: `[bs]` group ids (verl's prompt uids).

    Returns:
        `([bs] row order: groups by sorted uid, rows in their order, group size G)`.

    Raises:
        ValueError: the groups are not all of one size.
    """
    _, inverse, counts = np.unique(np.asarray(index), return_inverse=True, return_counts=True)
    if len(set(counts.tolist())) != 1:
        sizes = sorted(set(counts.tolist()))
        raise ValueError(f"mazerl estimators need groups of one size; got sizes {sizes}")
    return np.argsort(inverse, kind="stable"), int(counts[0])


def estimator(name: str):
    """verl's advantage estimator for a mazerl estimator name.

    Args:
        name: a name of `estimator_names()`.

    Returns:
        `fn(token_level_rewards, response_mask, index, config=None, **kwargs)` ->
        `(advantages, returns)`, both `[bs, response_length]`: the focal advantage of each
        response's outcome reward within its group, on every response token.
    """

    def compute(token_level_rewards, response_mask, index, config=None, **kwargs):
        scores = token_level_rewards.sum(dim=-1)  # [bs]
        order, size = group_order(index)
        order_t = torch.as_tensor(order, device=scores.device)
        rewards = scores[order_t].reshape(-1, size)  # [P, G]
        advantages, _ = focal_advantages(rewards, name, focal_gamma(), **advantage_kwargs())
        per_row = torch.empty_like(scores)
        per_row[order_t] = advantages.reshape(-1).to(scores.dtype)
        out = per_row[:, None] * response_mask
        return out, out

    compute.__name__ = f"mazerl_{name}"
    return compute


load_plugins()  # a plug-in's estimators too
for _name in estimator_names():
    register_adv_est(f"mazerl_{_name}")(estimator(_name))
