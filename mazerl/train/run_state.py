"""What a run must keep to resume bit-identically: the policy, optimizer, scheduler, counters
and random states, saved as `checkpoints/ckpt_<iteration>.pt` in the run dir."""

import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from mazerl.core import checkpoint
from mazerl.core.errors import CheckpointError, UserError
from mazerl.eval.runner import eval_step

# settings that may change between a run and its resumption
RESUMABLE = {
    "train": {
        "iterations",
        "eval_every",
        "checkpoint_every",
        "keep_checkpoints",
        "resume",
        "log_every",
        "max_bad_steps",
        "stop_on_zero_advantage",  # also absent from checkpoints older than the setting
        "fork",  # read only where the run dir has no checkpoint of its own
    },
    "eval": None,
    "logger": None,
    "threads": None,
    "device": None,
    "base": {"cache_dir"},
}

# settings a fork's record leaves out: how it is run and logged, not what it trains
FORK_IGNORED = {
    "train": {"fork", "resume", "checkpoint_every", "keep_checkpoints", "log_every"},
    "logger": None,
    "threads": None,
    "device": None,
    "base": {"cache_dir"},
}
# what a training checkpoint (`RunState.save`) holds
CHECKPOINT_KEYS = {
    "policy_state", "optimizer", "scheduler", "iteration", "skipped", "elapsed", "config",
    "base_model", "rng",
}  # fmt: skip

# settings added after studies were checkpointed, with the value that reproduces the runs
# written before them: a checkpoint without one resumes when the setting has that value
ADDED = {
    "train": {"zero_gradient_step": True},
    "algo": {
        "advantage_kwargs": {},
        "reward_transform": None,
        "reward_transform_kwargs": {},
        "entropy_coef": 0.0,
    },
}


def finite(state: dict) -> bool:
    """Every floating-point tensor of a state dict is finite (no nan, no inf)."""
    floats = [v for v in state.values() if torch.is_tensor(v) and v.is_floating_point()]
    return all(bool(torch.isfinite(v).all()) for v in floats)


def differences(saved: dict, current: dict, ignore: dict = RESUMABLE) -> list[str]:
    """The settings (dotted names) in which two run configs differ, leaving out those of
    `ignore` (`{section: keys, or None for all}`; by default the ones a resumption may change)
    and reading a setting a saved config predates at the value it had then (`ADDED`)."""
    diff = []
    for key in sorted(set(saved) | set(current)):
        if key in ignore and ignore[key] is None:
            continue
        a, b = saved.get(key), current.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            skip, added = ignore.get(key, set()), ADDED.get(key, {})
            diff += [
                f"{key}.{k}"
                for k in sorted(set(a) | set(b))
                if k not in skip and a.get(k, added.get(k)) != b.get(k)
            ]
        elif a != b:
            diff.append(key)
    return diff


def check_same_run(saved: dict, current: dict, path: Path) -> None:
    """Refuse to resume a checkpoint written by a different configuration."""
    if diff := differences(saved, current):
        raise CheckpointError(
            f"{path} was written by a different config (differs in {', '.join(diff)}); "
            "use another run dir or train.resume=false"
        )


def copy_history(checkpoint_path: Path, out: Path, iteration: int) -> bool:
    """Give a forked run the evaluations of the run it forks up to the fork
    (`eval/step_*.json` at or before `iteration`), where the checkpoint sits in a run dir's
    `checkpoints/`, and remove any of its own after `iteration` (an earlier try's); returns
    whether there were any to copy. `train.csv` and TensorBoard events start at the fork (a
    changed setting may log other scalars)."""
    for stale in (out / "eval").glob("step_*.json"):
        if eval_step(stale) > iteration:
            stale.unlink()
    source = checkpoint_path.parent.parent / "eval"
    if checkpoint_path.parent.name != "checkpoints" or not source.is_dir():
        return False
    (out / "eval").mkdir(parents=True, exist_ok=True)
    for path in source.glob("step_*.json"):
        if eval_step(path) <= iteration:
            shutil.copy2(path, out / "eval" / path.name)
    return True


class RunState:
    """The trainable state of a run and its checkpoint folder.

    `iteration` is the number of finished iterations, `skipped` the non-finite optimizer steps
    skipped so far, `elapsed()` the training seconds including those before a resumption.
    Each checkpoint also names the base model for `mazerl-eval`: `base`, the folder of its
    stored evaluations, and `base_model`, where its weights came from (`obtain_base`)."""

    def __init__(
        self, folder: Path, keep: int, config: dict, base_dir: Path, base_model: dict, **modules
    ):
        self.ckpts = checkpoint.CheckpointDir(folder, keep)
        self.config, self.modules = config, modules
        self.base_dir, self.base_model = base_dir, base_model
        self.iteration, self.skipped, self._elapsed0 = 0, 0, 0.0
        self._t0 = time.time()
        self.forked: dict | None = None  # set by fork(), kept across resumptions

    def elapsed(self) -> float:
        return self._elapsed0 + time.time() - self._t0

    def resume(self, device, warn: Callable[[str], None] = print) -> Path | None:
        """Load the newest usable checkpoint of the folder, if any; returns its path. One that
        cannot be read or holds non-finite parameters is skipped with a warning naming it."""
        for latest in reversed(self.ckpts.paths()):
            try:
                state = checkpoint.load(latest, map_location=device)
            except CheckpointError as e:
                warn(f"warning: skipping {latest}: {e}")
                continue
            if not finite(state.get("policy_state", {})):
                warn(f"warning: skipping {latest}: its parameters are not finite")
                continue
            break
        else:
            return None
        check_same_run(state["config"], self.config, latest)
        self._load(state, latest)
        self.forked = state.get("forked")
        return latest

    def fork(self, path: Path, device) -> dict:
        """Start from another run's checkpoint `path` (`train.fork`): its weights, optimizer
        moments, schedule, counters and random state, under this run's settings, which may
        differ from the checkpoint's (a counterfactual: the same state, one setting changed).
        The optimizer's moments are the checkpoint's, its lr, betas and weight decay this run's.
        The base model must be the same. Returns what `metrics.json` records as `forked`:
        the checkpoint, its iteration and the settings that differ (how it is run and logged
        aside: `FORK_IGNORED`)."""
        if not path.is_file():
            raise CheckpointError(f"train.fork: no checkpoint file at {path}")
        state = checkpoint.load(path, map_location=device)
        if not isinstance(state, dict) or not set(state) >= CHECKPOINT_KEYS:
            raise CheckpointError(
                f"train.fork: {path} is not a mazerl-train checkpoint (a run dir's "
                "checkpoints/ckpt_*.pt)"
            )
        if not finite(state["policy_state"]):
            raise CheckpointError(f"train.fork: {path}: its parameters are not finite")
        their_base, our_base = state["base_model"]["sha256"], self.base_model["sha256"]
        if their_base != our_base:
            raise CheckpointError(
                f"train.fork: {path} started from another base model (sha256 "
                f"{their_base[:12]}, this run's is {our_base[:12]}): set base.* as in the "
                "forked run"
            )
        optimizer, scheduler = self.modules["optimizer"], self.modules["scheduler"]
        ours = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
        self._load(state, path)
        # the moments and step counts are the checkpoint's; lr, betas, weight decay this run's,
        # the lr at the checkpoint's place in this run's schedule
        for group, settings in zip(optimizer.param_groups, ours, strict=True):
            group.update(settings)
        scheduler.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        lrs = [
            b * f(scheduler.last_epoch)
            for b, f in zip(scheduler.base_lrs, scheduler.lr_lambdas, strict=True)
        ]
        for group, lr in zip(optimizer.param_groups, lrs, strict=True):
            group["lr"] = lr
        self.forked = {
            "checkpoint": str(path),
            "iteration": self.iteration,
            "differs": differences(state["config"], self.config, FORK_IGNORED),
        }
        return self.forked

    def _load(self, state: dict, path: Path) -> None:
        """Put a loaded checkpoint's modules, counters and random states in place."""
        for name, module in self.modules.items():
            try:
                module.load_state_dict(state[name])
            except (RuntimeError, ValueError, KeyError) as e:
                raise CheckpointError(f"checkpoint {path} does not match {name}: {e}") from None
        self.iteration, self.skipped = state["iteration"], state["skipped"]
        self._elapsed0, self._t0 = state["elapsed"], time.time()
        torch.set_rng_state(state["rng"]["torch"])
        np.random.set_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])

    def save(self) -> Path:
        """Write `ckpt_<iteration>.pt`; refuses (`CheckpointError`) non-finite parameters, so
        every checkpoint written is a good one."""
        state = {name: module.state_dict() for name, module in self.modules.items()}
        if not finite(state["policy_state"]):
            raise CheckpointError(
                f"not saving iteration {self.iteration}: the parameters are not finite"
            )
        state.update(
            iteration=self.iteration,
            policy_config=self.config["policy"],
            skipped=self.skipped,
            elapsed=self.elapsed(),
            config=self.config,
            base=str(self.base_dir),
            base_model=self.base_model,
            forked=self.forked,
            rng={
                "torch": torch.get_rng_state(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
        )
        return self.ckpts.save(state, self.iteration)


def start_fork(state: RunState, fork: Path, out: Path, total: int, device) -> str:
    """Start the run in `out` (of `total` iterations) from the checkpoint `fork`
    (`RunState.fork`) and give it the source's evaluations up to there (`copy_history`);
    returns the log line. Refuses the run dir's own checkpoint and one at or past the end."""
    if fork.parent.parent == out.resolve():
        raise UserError(f"train.fork: {fork} is this run dir's own; fork into another")
    forked = state.fork(fork, device)
    if state.iteration >= total:
        raise UserError(
            f"train.fork: {fork} is at iteration {state.iteration}, not before the run's end "
            f"({total})"
        )
    copied = copy_history(fork, out, state.iteration)
    history = "its evaluations copied" if copied else "no evaluations to copy"
    return (
        f"forking from {fork} at iteration {state.iteration} ({history}); "
        f"settings that differ: {', '.join(forked['differs']) or 'none'}"
    )
