"""Registers mazerl's advantage estimators, focal weight included, with verl on import.

    import mazerl.llm.verl_estimators   # in the verl entry script, before the trainer starts
    python -m verl.trainer.main_ppo algorithm.adv_estimator=mazerl_grpo ...

Every estimator in mazerl's registry becomes `mazerl_<name>` (`mazerl_grpo`, `mazerl_drgrpo`,
`mazerl_rloo`, ...) through verl's `register_adv_est`. verl calls it as
`fn(token_level_rewards, response_mask, index, config, ...)`: the outcome reward of each
response is its token rewards' sum, responses are grouped by `index` (verl's prompt uid; every
group must have the same size), and the advantage `[bs, response_length]` is
`focal_advantages` of the group, on every response token. verl's `AlgoConfig` has no field for
the focal exponent, so gamma is read at each call from the environment variable
`MAZERL_FOCAL_GAMMA` (default 0.5; 0 gives the estimator alone). Tested with verl 0.9.1's own
registry (`verl.trainer.ppo.core_algos`).
"""

import math
import os

import numpy as np
import torch
from verl.trainer.ppo.core_algos import register_adv_est

from mazerl.algos import ADVANTAGES
from mazerl.llm.objective import focal_advantages

GAMMA_VARIABLE = "MAZERL_FOCAL_GAMMA"


def focal_gamma() -> float:
    """gamma from `MAZERL_FOCAL_GAMMA` (default 0.5); a `ValueError` naming the variable when
    it is not a finite number >= 0."""
    text = os.environ.get(GAMMA_VARIABLE, "0.5")
    try:
        gamma = float(text)
    except ValueError:
        gamma = math.nan
    if not (math.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"{GAMMA_VARIABLE} must be a finite number >= 0, got {text!r}")
    return gamma


def group_order(index) -> tuple[np.ndarray, int]:
    """The row order that puts each group's rows together (groups by sorted uid, rows in
    their order) and the group size G; a `ValueError` for groups of different sizes."""
    _, inverse, counts = np.unique(np.asarray(index), return_inverse=True, return_counts=True)
    if len(set(counts.tolist())) != 1:
        sizes = sorted(set(counts.tolist()))
        raise ValueError(f"mazerl estimators need groups of one size; got sizes {sizes}")
    return np.argsort(inverse, kind="stable"), int(counts[0])


def estimator(name: str):
    """verl's estimator for mazerl's advantage `name` times the focal weight."""

    def compute(token_level_rewards, response_mask, index, config=None, **kwargs):
        scores = token_level_rewards.sum(dim=-1)  # [bs]
        order, size = group_order(index)
        order_t = torch.as_tensor(order, device=scores.device)
        rewards = scores[order_t].reshape(-1, size)  # [P, G]
        advantages, _ = focal_advantages(rewards, name, focal_gamma())
        per_row = torch.empty_like(scores)
        per_row[order_t] = advantages.reshape(-1).to(scores.dtype)
        out = per_row[:, None] * response_mask
        return out, out

    compute.__name__ = f"mazerl_{name}"
    return compute


for _name in ADVANTAGES.names():
    register_adv_est(f"mazerl_{_name}")(estimator(_name))
