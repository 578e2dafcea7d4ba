"""How many iterations a run has and the learning-rate factor at each."""

import math


def iterations_for(train_cfg) -> int:
    """Fixed steps, or (budget=rollouts) iterations scaled so prompts x N x iterations is
    the same as `iterations` at `budget_reference_group_size`."""
    if train_cfg.budget == "steps":
        return train_cfg.iterations
    ref = train_cfg.budget_reference_group_size
    return max(1, round(train_cfg.iterations * ref / train_cfg.group_size))


def lr_factor(it: int, total: int, warmup: int, schedule: str) -> float:
    """Linear warm-up over `warmup` iterations, then constant or cosine decay to 0."""
    if warmup and it < warmup:
        return (it + 1) / warmup
    if schedule == "cosine":
        progress = (it - warmup) / max(1, total - warmup)
        return 0.5 * (1 + math.cos(math.pi * progress))
    return 1.0
