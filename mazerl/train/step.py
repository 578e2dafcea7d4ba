"""One training iteration as computation only: collect, advantages, update.

`TrainStep(...)(learner, mazes, it)` samples iteration `it`'s `num_prompts` x `group_size`
rollouts, scores them with the batched stepper, computes the group advantages times the focal
weight, and runs `ppo_epochs` x `minibatches` clipped, gradient-clipped updates against the
sampling-time log-probs, then steps the learning-rate schedule. It reads no file, clock, lock
or signal: the loop (`mazerl.train.loop`) does the I/O around it (resume, checkpoints, logging,
evaluation, signals) and `mazerl-bench` times these same calls. Everything random comes from
the run seed's streams keyed by the iteration, so a step is a function of (learner, it).
"""

import copy
from dataclasses import dataclass

import torch

from mazerl.algos import AlgoConfig, FocalConfig, estimator_inputs, group_advantages
from mazerl.envs.spec import MazeTask
from mazerl.eval.routes import route_tracking
from mazerl.rollout import Rollouts
from mazerl.train.collect import collect, greedy_correct
from mazerl.train.config import Config, TrainConfig
from mazerl.train.schedule import lr_factor
from mazerl.train.update import update


@dataclass
class Learner:
    """What a step changes: the trained `policy`, its `optimizer` and learning-rate
    `scheduler`; `base` (the base policy: the KL reference and the route masses' baseline)
    stays fixed."""

    policy: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    base: torch.nn.Module

    @classmethod
    def start(cls, train: TrainConfig, base: torch.nn.Module, total: int) -> "Learner":
        """A run's learner before its first iteration: a copy of the `base` policy, AdamW
        (`train.lr`, `betas`, `weight_decay`; torch's fused kernel: one call for all the
        parameters) and the schedule over `total` iterations (`train.warmup`,
        `train.schedule`)."""
        policy = copy.deepcopy(base).train()
        optimizer = torch.optim.AdamW(
            policy.parameters(), lr=train.lr, betas=tuple(train.betas),
            weight_decay=train.weight_decay, fused=True,
        )  # fmt: skip
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda it: lr_factor(it, total, train.warmup, train.schedule)
        )
        return cls(policy, optimizer, scheduler, base)


@dataclass
class Batch:
    """One iteration's rollouts, the sampling rounds they took (dynamic sampling), the exact
    route masses of braid runs (`routes/*`; empty otherwise) and, for an estimator that asks
    for it, whether each prompt's greedy answer is correct (`[P]` bool; None otherwise)."""

    rollouts: Rollouts
    rounds: int
    routes: dict[str, float]
    greedy_correct: torch.Tensor | None = None


@dataclass
class StepStats:
    """What one step measured: the batch, its group metrics (`frac_zero_adv_groups`, focal
    weight, ...), the update's averaged metrics, the optimizer steps skipped for a non-finite
    loss or gradient, and the learning rate after the schedule's step."""

    batch: Batch
    group_metrics: dict[str, float]
    loss_metrics: dict[str, float]
    skipped: int
    lr: float


@dataclass(frozen=True)
class TrainStep:
    """The settings of a step: the `train`, `algo` and `focal` sections, the maze rule
    (`allow_revisits`), whether to track route masses (braid runs), the run `seed` and the
    `device`. A variant (another group size, update skipping off) is another `TrainStep`."""

    train: TrainConfig
    algo: AlgoConfig
    focal: FocalConfig
    allow_revisits: bool
    track_routes: bool
    seed: int
    device: torch.device

    @classmethod
    def of(cls, cfg: Config, task: MazeTask, device: torch.device) -> "TrainStep":
        """The step of a run's typed config (`mazerl.apps.schema.typed`: its sections as they
        are) on the mazes of `task` (`MazeTask.of(cfg.maze)`, built once per run)."""
        return cls(
            cfg.train, cfg.algo, cfg.focal, task.allow_revisits, task.braid, cfg.seed, device
        )

    def __call__(self, learner: Learner, mazes, it: int, sampler=None) -> StepStats:
        """Iteration `it` (0-based) whole: `learn(learner, collect(...), it)`."""
        return self.learn(learner, self.collect(learner, mazes, it, sampler), it)

    def collect(self, learner: Learner, mazes, it: int, sampler=None) -> Batch:
        """Iteration `it`'s rollouts of the prompts `mazes.draw(count, it, round)` gives (a
        `TrainingMazes`), sampled from `sampler` (default: the learner's policy; a benchmark
        passes a policy that follows the solutions, for episodes of a trained policy's
        length), in braid runs the route masses of the policy before its update, and for an
        estimator that asks for `greedy_correct` the greedy answer of each prompt (one more
        generation, of P rows, that draws no random number)."""
        rollouts, rounds = collect(
            sampler or learner.policy, mazes, it, self.device,
            allow_revisits=self.allow_revisits, train=self.train, algo=self.algo, seed=self.seed,
        )  # fmt: skip
        routes = {}
        if self.track_routes:  # exact route masses: tail misses, rare-route mass
            routes = route_tracking(learner.policy, learner.base, rollouts, self.train.temperature)
        greedy = None
        if "greedy_correct" in estimator_inputs(self.algo.advantage):
            greedy = greedy_correct(
                sampler or learner.policy, rollouts.mazes, self.device,
                allow_revisits=self.allow_revisits,
            )  # fmt: skip
        return Batch(rollouts, rounds, routes, greedy)

    def advantages(self, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        """`[P * G]` group-normalised advantages times the focal weight, and the group metrics
        (with `greedy_correct`, the fraction of prompts whose greedy answer is correct, when
        the estimator asks for it). The estimator gets only the inputs it asks for."""
        r = batch.rollouts
        available = {
            "logp_mean": lambda: r.logp_mean,
            "greedy_correct": lambda: batch.greedy_correct,
        }
        inputs = {k: available[k]() for k in estimator_inputs(self.algo.advantage)}
        adv, metrics = group_advantages(r.rewards_by_group, self.algo, self.focal, **inputs)
        if "greedy_correct" in inputs:
            metrics["greedy_correct"] = inputs["greedy_correct"].float().mean()
        return adv.flatten(), {k: float(v) for k, v in metrics.items()}

    def update(
        self, learner: Learner, batch: Batch, advantages: torch.Tensor, it: int
    ) -> tuple[dict[str, float], int]:
        """The clipped updates of `mazerl.train.update.update` (minibatches, gradient clipping,
        zero-advantage skipping as `train` says); then the learning-rate schedule's step."""
        ref = learner.base if self.algo.kl_beta > 0 else None
        metrics, skipped = update(
            learner.policy, ref, learner.optimizer, batch.rollouts, advantages, self.algo,
            self.train, seed=self.seed, it=it,
        )  # fmt: skip
        learner.scheduler.step()
        return metrics, skipped

    def learn(self, learner: Learner, batch: Batch, it: int) -> StepStats:
        """Advantages and update of a collected batch."""
        advantages, group_metrics = self.advantages(batch)
        loss_metrics, skipped = self.update(learner, batch, advantages, it)
        lr = learner.scheduler.get_last_lr()[0]
        return StepStats(batch, group_metrics, loss_metrics, skipped, lr)
