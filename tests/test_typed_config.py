"""The config is typed once, at the app's boundary: the loop and the step get the schema's
dataclasses themselves, and the maze task (`MazeTask`) travels instead of the `maze` section;
the cache keys of the existing configurations stay what they were."""

import tempfile
from pathlib import Path

import pytest
from conftest import TINY_JOB
from hydra import compose, initialize_config_dir

from mazerl.algos import AlgoConfig, FocalConfig
from mazerl.apps.schema import register_configs, typed
from mazerl.core.config import CONF_DIR
from mazerl.envs.spec import MazeConfig, MazeSpec, MazeTask
from mazerl.eval.config import EvalSetConfig
from mazerl.eval.evaluate import excluded_keys
from mazerl.eval.runner import cached_sets
from mazerl.policy.config import GruConfig
from mazerl.train import loop
from mazerl.train.collect import TrainingMazes
from mazerl.train.config import Config, TrainConfig
from mazerl.train.step import TrainStep


def config(*overrides: str) -> Config:
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return typed(compose("config", overrides=list(overrides)))


def test_typed_makes_every_section_its_config_class():
    cfg = config("algo=dapo", "focal.gamma=1.0", "maze.pool_size=7")
    assert isinstance(cfg, Config)
    assert isinstance(cfg.maze, MazeConfig) and isinstance(cfg.policy, GruConfig)
    assert isinstance(cfg.algo, AlgoConfig) and isinstance(cfg.focal, FocalConfig)
    assert all(isinstance(s, EvalSetConfig) for s in cfg.eval.sets)
    assert (cfg.algo.clip_high, cfg.focal.gamma) == (0.28, 1.0)  # conf/algo/dapo.yaml
    task = MazeTask.of(cfg.maze)
    assert task == MazeTask(MazeSpec(size=5), allow_revisits=False, pool_size=7)


class Stop(Exception):
    """Raised by the spy once the step is built: the test needs no training."""


def test_the_loop_gives_the_step_the_typed_sections_themselves(tmp_path, monkeypatch):
    """The step of a run holds the run's own `train`, `algo` and `focal` objects (not copies
    rebuilt from a dict) and the maze rule of the run's task."""
    cfg = config(*TINY_JOB, "maze.allow_revisits=true", f"base.cache_dir={tmp_path / 'cache'}")
    made = []
    real = TrainStep.of

    def spy(cfg, task, device):
        made.append((task, real(cfg, task, device)))
        raise Stop

    monkeypatch.setattr(loop.TrainStep, "of", spy)
    with pytest.raises(Stop):
        loop.train(cfg, tmp_path / "run")
    ((task, step),) = made
    assert step.train is cfg.train and isinstance(step.train, TrainConfig)
    assert step.algo is cfg.algo and step.focal is cfg.focal
    assert task == MazeTask(MazeSpec(size=3), allow_revisits=True, pool_size=0)
    assert (step.allow_revisits, step.track_routes) == (True, False)
    braid = MazeTask(MazeSpec(size=4, routes=2))
    assert real(cfg, braid, step.device).track_routes


# Cache keys recorded by the code before the config was typed (main at 327fd38), each a name
# the cache gives its files: `eval_sets/sets_<key>.pkl` and `train_mazes/<key>/` (blocks of
# 10 iterations). Typing the config must not move a sweep's cached evaluation sets or
# training mazes (nor the bank's keys: test_bank.py).
KEYS_BEFORE = {
    (): ("3dcc6846d1615e12", "7d459a07b55a6ba0"),
    ("experiment=leaderboard",): ("a58a7f211cf6d1cd", "e1853cca08b300f7"),
}


@pytest.mark.parametrize("overrides", list(KEYS_BEFORE))
def test_the_evaluation_set_and_training_maze_keys_are_those_before_typing(overrides):
    cfg = config(*overrides)
    task = MazeTask.of(cfg.maze)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sets = cached_sets(task.spec, cfg.eval, root / "sets", lambda line: None)
        mazes = TrainingMazes(
            task, excluded_keys(sets), cfg.seed, lambda line: None, root / "mazes", block=10
        )
        mazes.prepare(cfg.train.num_prompts, 0)
        stored = [p.stem for p in (root / "sets").iterdir()]
        blocks = [p.name for p in (root / "mazes").iterdir()]
    sets_key, mazes_key = KEYS_BEFORE[overrides]
    assert (stored, blocks) == ([f"sets_{sets_key}"], [mazes_key])
