"""Training prompts and the iteration's groups of rollouts."""

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

import torch

from mazerl.algos import AlgoConfig, keep_mixed_groups
from mazerl.core.errors import ConfigError
from mazerl.core.files import cached_pickle, config_hash
from mazerl.core.streams import (
    STREAM_SAMPLING,
    STREAM_TRAIN_MAZES,
    STREAM_TRAIN_POOL,
    rng,
    torch_generator,
)
from mazerl.envs.maze import EVENTS, Maze
from mazerl.envs.spec import MazeTask, sample_mazes
from mazerl.rollout import Rollouts, generate
from mazerl.train.config import TrainConfig

TRAIN_BLOCK = 100  # iterations of fresh training mazes per cache file


class TrainingMazes:
    """Training prompts of a `MazeTask`: fresh mazes every iteration (`maze.pool_size=0`), or
    draws without replacement from a fixed pool: `pool_size` generated mazes, or a layout collection
    (`maze.layout`). Generated mazes skip evaluation mazes; a layout pool is used whole, and
    when it shares mazes with the evaluation sets, `log` says so once. Draws depend only on
    (seed, iteration, round), so a resumed run draws exactly the same mazes. Built before the
    base model, so that a maze space too small to train on stops the run before any work.

    With `cache_dir`, fresh mazes of the first sampling round are generated `block`
    iterations at a time and stored there (keyed by the maze spec, the evaluation mazes, the
    count and the seed), so the runs of a sweep that share a seed generate them once:
    braid mazes cost about 10 ms each, several times an iteration's rollouts and update."""

    def __init__(
        self,
        task: MazeTask,
        excluded: set[bytes],
        seed: int,
        log: Callable[[str], None] = print,
        cache_dir: Path | None = None,
        block: int = TRAIN_BLOCK,
    ) -> None:
        spec, pool_size = task.spec, task.pool_size
        self.spec, self.excluded, self.seed, self.log = spec, excluded, seed, log
        self.cache_dir, self.block, self._loaded = cache_dir, block, (None, [])
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
        """`count` training mazes of iteration `it`, sampling round `rounds`."""
        if self.pool:
            draw = rng(self.seed, STREAM_TRAIN_MAZES, it, rounds)
            idx = draw.choice(len(self.pool), size=min(count, len(self.pool)), replace=False)
            return [self.pool[i] for i in idx]
        if self.cache_dir is None or rounds:
            return self._fresh(count, it, rounds)
        return self._cached_block(count, it // self.block)[it % self.block]

    def prepare(self, count: int, it: int) -> None:
        """Read (or make and store) the cached block that holds iteration `it`'s `count` fresh
        mazes, so that `draw(count, it, 0)` then reads no file and takes no lock: the loop
        calls it before the training step (`mazerl.train.step`), which does no I/O."""
        if not self.pool and self.cache_dir is not None:
            self._cached_block(count, it // self.block)

    def _fresh(self, count: int, it: int, rounds: int) -> list[Maze]:
        keys = (self.seed, STREAM_TRAIN_MAZES, it, rounds)
        return sample_mazes(self.spec, count, self.excluded, *keys)

    @functools.cached_property
    def _excluded_digest(self) -> str:
        """The evaluation mazes' identity in the cache key (hashed once, not per block)."""
        return hashlib.sha256(b"".join(sorted(self.excluded))).hexdigest()

    def _cached_block(self, count: int, b: int) -> list[list[Maze]]:
        """The fresh mazes of iterations `b * block` ... `(b + 1) * block - 1`, round 0."""
        if self._loaded[0] != (count, b):
            key = config_hash(repr(self.spec), self._excluded_digest, count, self.block)
            its = range(b * self.block, (b + 1) * self.block)
            mazes = cached_pickle(
                self.cache_dir / key / f"seed{self.seed}_block{b}.pkl",
                lambda: [self._fresh(count, it, 0) for it in its],
                self.log,
            )
            self._loaded = ((count, b), mazes)
        return self._loaded[1]


def collect(
    policy,
    mazes: TrainingMazes,
    it: int,
    device,
    *,
    allow_revisits: bool,
    train: TrainConfig,
    algo: AlgoConfig,
    seed: int,
) -> tuple[Rollouts, int]:
    """Sample iteration `it`'s `train.num_prompts` x `train.group_size` rollouts (at
    `train.temperature` and `train.top_p`, under the maze rule `allow_revisits`, from the run
    `seed`'s sampling stream). With DAPO's dynamic sampling (`algo.dynamic_sampling`), groups with
    all-equal rewards are dropped and more mazes are drawn (up to
    `algo.dynamic_sampling_max_rounds` extra rounds) to refill the batch. Returns the
    rollouts and the rounds used."""
    t, a = train, algo
    parts, kept, rounds = [], 0, 0
    while True:
        r = generate(
            policy,
            mazes.draw(t.num_prompts, it, rounds),
            t.group_size,
            temperature=t.temperature,
            top_p=t.top_p,
            allow_revisits=allow_revisits,
            device=device,
            generator=torch_generator(device, seed, STREAM_SAMPLING, it, rounds),
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


def greedy_correct(policy, mazes: list[Maze], device, *, allow_revisits: bool) -> torch.Tensor:
    """Whether each maze's greedy answer (the most likely action at each token) reaches the
    goal: one generation per maze in `generate`'s greedy mode, which draws no random number.

    Args:
        policy: the policy that samples.
        mazes: the P mazes.
        device: where the tensors go.
        allow_revisits: the maze rule.

    Returns:
        `[P]` bool.
    """
    r = generate(policy, mazes, 1, allow_revisits=allow_revisits, device=device, greedy=True)
    return r.reward > 0


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
