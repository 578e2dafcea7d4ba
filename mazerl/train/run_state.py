"""What a run must keep to resume bit-identically: the policy, optimizer, scheduler, counters
and random states, saved as `checkpoints/ckpt_<iteration>.pt` in the run dir."""

import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from mazerl.core import checkpoint
from mazerl.core.errors import CheckpointError

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
    },
    "eval": None,
    "logger": None,
    "threads": None,
    "device": None,
    "base": {"cache_dir"},
}


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


def read_metrics(path: Path) -> tuple[dict | None, str]:
    """A finished run's `metrics.json`: `(metrics, "")`, or `(None, why it is unusable)` when
    it cannot be read, is not JSON or has no numeric `final` metrics."""
    try:
        metrics = json.loads(Path(path).read_text())
    except OSError as e:
        return None, f"unreadable metrics.json ({e.strerror})"
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        return None, f"unreadable metrics.json ({e.__class__.__name__}: {e})"
    final = metrics.get("final") if isinstance(metrics, dict) else None
    numbers = isinstance(final, dict) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in final.values()
    )
    if not numbers:
        return None, "unreadable metrics.json (no numeric 'final' metrics)"
    return metrics, ""


def finite(state: dict) -> bool:
    """Every floating-point tensor of a state dict is finite (no nan, no inf)."""
    floats = [v for v in state.values() if torch.is_tensor(v) and v.is_floating_point()]
    return all(bool(torch.isfinite(v).all()) for v in floats)


def check_same_run(saved: dict, current: dict, path: Path) -> None:
    """Refuse to resume a checkpoint written by a different configuration."""
    diff = []
    for key in sorted(set(saved) | set(current)):
        if key in RESUMABLE and RESUMABLE[key] is None:
            continue
        a, b = saved.get(key), current.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            skip, added = RESUMABLE.get(key, set()), ADDED.get(key, {})
            diff += [
                f"{key}.{k}"
                for k in sorted(set(a) | set(b))
                if k not in skip and a.get(k, added.get(k)) != b.get(k)
            ]
        elif a != b:
            diff.append(key)
    if diff:
        raise CheckpointError(
            f"{path} was written by a different config (differs in {', '.join(diff)}); "
            "use another run dir or train.resume=false"
        )


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
        for name, module in self.modules.items():
            try:
                module.load_state_dict(state[name])
            except (RuntimeError, ValueError, KeyError) as e:
                raise CheckpointError(f"checkpoint {latest} does not match {name}: {e}") from None
        self.iteration, self.skipped = state["iteration"], state["skipped"]
        self._elapsed0, self._t0 = state["elapsed"], time.time()
        torch.set_rng_state(state["rng"]["torch"])
        np.random.set_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])
        return latest

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
            rng={
                "torch": torch.get_rng_state(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
        )
        return self.ckpts.save(state, self.iteration)
