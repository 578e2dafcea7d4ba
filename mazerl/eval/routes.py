"""Per-route metrics for mazes with several known routes (braid mazes, `maze.routes` > 1).

Every route's probability under the policy is exact: the product of its token probabilities
(`exact_route_masses`, teacher-forced passes). A route is *rare* when the base model gives it
less than `rare_fraction` of the maze's success probability, and *forgotten* when its mass
falls below `forget_fraction` of its base mass. The tail-miss event of the paper (Lemma 3.1)
is measured per training group: mixed rewards and no sample on a rare route, next to the
closed form at the group's exact p (total route mass) and tau (rare route mass).
"""

import numpy as np
import torch

from mazerl.algos.tail_miss import tail_miss
from mazerl.eval.evaluate import exact_route_masses

RARE_FRACTION = 0.2
FORGET_FRACTION = 0.1


def rare_routes(base_mass: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The rare routes: valid routes with less than RARE_FRACTION of the base model's success
    mass of their maze.

    Args:
        base_mass: `[M, R]` the base model's exact route probabilities.
        valid: `[M, R]` bool, the maze has route r.

    Returns:
        `[M, R]` bool.
    """
    total = base_mass.sum(1, keepdims=True)
    return valid & (base_mass < RARE_FRACTION * np.maximum(total, 1e-300))


def eval_route_metrics(
    mass: np.ndarray, base_mass: np.ndarray, valid: np.ndarray, found: np.ndarray
) -> dict[str, float]:
    """Route scalars for one evaluation set.

    Args:
        mass: `[M, R]` the evaluated policy's exact route probabilities.
        base_mass: `[M, R]` the base model's (rare routes are taken from it).
        valid: `[M, R]` bool, the maze has route r.
        found: `[M]` distinct routes found by the samples of each maze.

    Returns:
        `mass_route_<r>` (the exact route mass, mean over mazes with route r), `rare_mass`
        and `common_mass` (summed per maze, mean over mazes), `rare_routes_per_maze`,
        `forgotten` (routes per maze whose mass fell below FORGET_FRACTION of the base's)
        and `distinct_found` (mean over mazes).
    """
    rare = rare_routes(base_mass, valid)
    common = valid & ~rare
    out = {
        "rare_mass": float((mass * rare).sum(1).mean()),
        "common_mass": float((mass * common).sum(1).mean()),
        "rare_routes_per_maze": float(rare.sum(1).mean()),
        "forgotten": float((valid & (mass < FORGET_FRACTION * base_mass)).sum(1).mean()),
        "distinct_found": float(found.mean()),
    }
    for k in range(mass.shape[1]):
        out[f"mass_route_{k}"] = float(mass[:, k][valid[:, k]].mean()) if valid[:, k].any() else 0.0
    return out


def tail_miss_stats(
    rewards: torch.Tensor, route: torch.Tensor, rare: np.ndarray, mass: np.ndarray
) -> dict[str, float]:
    """Measured and closed-form tail-miss rate for one iteration's groups.

    Args:
        rewards: `[P, G]` the groups' rewards.
        route: `[P*G]` route ids, -1 on failure.
        rare: `[P, R]` bool, the rare routes (`rare_routes`).
        mass: `[P, R]` the sampling policy's exact route probabilities.

    Returns:
        `tail_miss_rate` (the share of mixed groups that sampled no rare route, over mazes
        with a rare route), `tail_miss_closed_form` (its closed form at the exact p and tau),
        `train_rare_mass` (tau) and `train_success_mass` (p), means over the P mazes.
    """
    p_groups, g = rewards.shape
    ids = route.reshape(p_groups, g).cpu().numpy()
    wins = rewards.sum(1).cpu().numpy()
    mixed = (wins > 0) & (wins < g)
    on_rare = rare[np.arange(p_groups)[:, None], ids.clip(min=0)] & (ids >= 0)
    hit_rare = on_rare.any(1)
    p = mass.sum(1)
    tau = (mass * rare).sum(1)
    closed = tail_miss(g, np.clip(p, 0, 1), np.clip(tau, 0, None))
    has_rare = rare.any(1)
    return {
        "tail_miss_rate": float((mixed & ~hit_rare)[has_rare].mean()) if has_rare.any() else 0.0,
        "tail_miss_closed_form": float(closed[has_rare].mean()) if has_rare.any() else 0.0,
        "train_rare_mass": float(tau.mean()),
        "train_success_mass": float(p.mean()),
    }


def route_tracking(policy, base_policy, rollouts, temperature: float) -> dict[str, float]:
    """Tail-miss rate of one training iteration's groups (mixed rewards, no rare route sampled)
    and its closed form at the exact p and tau of the sampling policy; rare routes are those
    the base model gives less than RARE_FRACTION of the maze's success mass.

    Args:
        policy: the sampling policy.
        base_policy: the base model (it names the rare routes).
        rollouts: the iteration's groups.
        temperature: the sampling temperature (> 0).

    Returns:
        `tail_miss_stats` of the groups.
    """
    device = rollouts.actions.device
    mass, valid = exact_route_masses(policy, rollouts.mazes, temperature, device)
    base, _ = exact_route_masses(base_policy, rollouts.mazes, temperature, device)
    rare = rare_routes(base, valid)
    return tail_miss_stats(rollouts.rewards_by_group, rollouts.route, rare, mass)
