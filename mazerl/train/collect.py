"""Training prompts and the iteration's groups of rollouts."""

from collections.abc import Callable

import torch

from mazerl.algos import keep_mixed_groups
from mazerl.core.errors import ConfigError
from mazerl.core.streams import (
    STREAM_SAMPLING,
    STREAM_TRAIN_MAZES,
    STREAM_TRAIN_POOL,
    rng,
    torch_generator,
)
from mazerl.envs.maze import EVENTS, Maze
from mazerl.envs.spec import MazeSpec, sample_mazes
from mazerl.rollout import Rollouts, generate


class TrainingMazes:
    """Training prompts: fresh mazes every iteration (`maze.pool_size=0`), or draws without
    replacement from a fixed pool: `pool_size` generated mazes, or a layout collection
    (`maze.layout`). Generated mazes skip evaluation mazes; a layout pool is used whole, and
    when it shares mazes with the evaluation sets, `log` says so once. Draws depend only on
    (seed, iteration, round), so a resumed run draws exactly the same mazes. Built before the
    base model, so that a maze space too small to train on stops the run before any work."""

    def __init__(
        self,
        spec: MazeSpec,
        pool_size: int,
        excluded: set[bytes],
        seed: int,
        log: Callable[[str], None] = print,
    ) -> None:
        self.spec, self.excluded, self.seed = spec, excluded, seed
        if spec.collection is None:
            self.pool = sample_mazes(spec, pool_size, excluded, seed, STREAM_TRAIN_POOL)
            if not self.pool:  # fresh mazes: check now that the space has some to give
                sample_mazes(spec, 1, excluded, seed, STREAM_TRAIN_MAZES, 0, 0)
            return
        if pool_size:
            raise ConfigError(
                f"maze.pool_size must be 0 with maze.layout (the layout collection is the "
                f"training pool), got {pool_size}"
            )
        self.pool = list(spec.collection)
        shared = sum(m.key in excluded for m in self.pool)
        if shared:
            log(
                f"note: evaluation is (partly) on training mazes: {shared} of the "
                f"{len(self.pool)} mazes of maze.layout={spec.layout} are evaluation mazes"
            )

    def draw(self, count: int, it: int, rounds: int) -> list[Maze]:
        keys = (self.seed, STREAM_TRAIN_MAZES, it, rounds)
        if not self.pool:
            return sample_mazes(self.spec, count, self.excluded, *keys)
        idx = rng(*keys).choice(len(self.pool), size=min(count, len(self.pool)), replace=False)
        return [self.pool[i] for i in idx]


def collect(policy, cfg, mazes: TrainingMazes, it: int, device) -> tuple[Rollouts, int]:
    """Sample the iteration's `num_prompts` x `group_size` rollouts. With DAPO's dynamic
    sampling, groups with all-equal rewards are dropped and more mazes are drawn (up to
    `dynamic_sampling_max_rounds` extra rounds) to refill the batch. Returns the rollouts and
    the rounds used."""
    t, a = cfg.train, cfg.algo
    parts, kept, rounds = [], 0, 0
    while True:
        r = generate(
            policy,
            mazes.draw(t.num_prompts, it, rounds),
            t.group_size,
            temperature=t.temperature,
            top_p=t.top_p,
            allow_revisits=cfg.maze.allow_revisits,
            device=device,
            generator=torch_generator(device, cfg.seed, STREAM_SAMPLING, it, rounds),
        )
        if not a.dynamic_sampling:
            return r, 1
        keep = keep_mixed_groups(r.rewards_by_group).nonzero().squeeze(1)
        parts.append(r.select(keep))
        kept += len(keep)
        rounds += 1
        if kept >= t.num_prompts or rounds > a.dynamic_sampling_max_rounds:
            if kept == 0:  # no mixed group at all: the last batch, whose update is zero
                return r, rounds
            merged = Rollouts.cat(parts)
            return merged.select(list(range(min(kept, t.num_prompts)))), rounds


def rollout_metrics(r: Rollouts) -> dict[str, float]:
    """Mean reward, success rate, response length and how the episodes ended."""
    events = torch.bincount(r.event.clamp(min=0), minlength=len(EVENTS)).float() / len(r.event)
    out = {
        "reward_mean": float(r.reward.mean()),
        "success_rate": float((r.rewards_by_group > 0).float().mean()),
        "response_length": float(r.length.float().mean()),
    }
    out.update({f"end_{name}": float(events[i]) for i, name in enumerate(EVENTS)})
    return out
