"""Shared helpers: run the real command-line apps in subprocesses, read TensorBoard events,
capture an update's gradients."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

ROOT = Path(__file__).resolve().parents[1]
# a tiny, fast configuration (smoke preset) for CLI tests
FAST = ["experiment=smoke", "logger.progress=lines", "threads=1"]
# the smallest whole training job, for tests that train in-process: 3x3 cells, a GRU of width 8
# over a one-layer encoder, one iteration of 2 mazes x 2, no base training, 3 evaluation mazes
# at 2 samples
TINY_JOB = [
    "maze.size=3",
    "policy.hidden=8",
    "policy.encoder_layers=1",
    "train.iterations=1",
    "train.num_prompts=2",
    "train.group_size=2",
    "base.steps=0",
    "base.target_pass1=null",
    "eval.sets=[{name: id, num_mazes: 3}]",
    "eval.n=2",
    "eval.exact_ks=[1]",
    "threads=1",
]


def options(group: str) -> list[str]:
    """The options of a config group that the apps accept and list: its YAML files and, for a
    group whose parts are options without one (`algo`, `policy`), every registered part."""
    from mazerl.algos import estimator_methods
    from mazerl.core.config import CONF_DIR
    from mazerl.policy import POLICIES

    parts = {"algo": estimator_methods, "policy": POLICIES.known}.get(group, list)
    return sorted({p.stem for p in (CONF_DIR / group).glob("*.yaml")} | {*parts()})


def run_app(module: str, *args: str, cwd: Path, timeout: float = 300, env=None):
    """Run `python -m module args...` and return the CompletedProcess (never raises)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
    )


@pytest.fixture(scope="session")
def base_cache(tmp_path_factory) -> Path:
    """One base-model cache for the whole session (the first run trains, the rest reuse)."""
    return tmp_path_factory.mktemp("base_cache")


@pytest.fixture
def train(tmp_path, base_cache):
    """`train(*overrides, run_dir=...)` runs mazerl-train on the smoke preset."""

    def _run(*overrides, run_dir: Path | None = None, check: bool = True, **kw):
        run_dir = run_dir or tmp_path / "run"
        out = run_app(
            "mazerl.apps.train",
            *FAST,
            f"hydra.run.dir={run_dir}",
            f"base.cache_dir={base_cache}",
            *overrides,
            cwd=tmp_path,
            **kw,
        )
        if check:
            assert out.returncode == 0, out.stdout + out.stderr
        return out, run_dir

    return _run


def scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """All scalar series of a run's TensorBoard events, read with TensorBoard's own reader."""
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0, "images": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def estimator_kwargs(name: str) -> dict:
    """The hyperparameters of the first `conf/algo/*.yaml` that names the estimator `name`
    with its `advantage_kwargs`; none (its defaults) otherwise."""
    from omegaconf import OmegaConf

    from mazerl.core.config import CONF_DIR

    for path in sorted((CONF_DIR / "algo").glob("*.yaml")):
        cfg = OmegaConf.load(path)
        if cfg.get("advantage") == name and "advantage_kwargs" in cfg:
            return OmegaConf.to_container(cfg.advantage_kwargs)
    return {}


def example_inputs(name: str, rewards: torch.Tensor) -> dict[str, torch.Tensor]:
    """What the estimator `name` asks for besides `[P, G]` rewards (`estimator_inputs`), made
    up: distinct mean log-probabilities in [-1, 0) in `rewards`' dtype, and greedy answers
    correct on the odd prompts."""
    from mazerl.algos import estimator_inputs

    p, g = rewards.shape
    made = {
        "logp_mean": (-torch.arange(1, p * g + 1, dtype=torch.float64) / (p * g))
        .reshape(p, g)
        .to(rewards.dtype),
        "greedy_correct": torch.arange(p) % 2 == 1,
    }
    return {k: made[k] for k in estimator_inputs(name)}


class GradCapture:
    """An optimizer that records the gradient of each step instead of stepping."""

    def __init__(self, params) -> None:
        self.params, self.grads = list(params), []

    def zero_grad(self, set_to_none=True) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.grads.append(
            torch.cat(
                [(torch.zeros_like(p) if p.grad is None else p.grad).flatten() for p in self.params]
            )
        )
