"""The bank of base models: every shipped file matches its hash and its recorded exact pass@1,
the main job and the study presets load bank model k, and a mismatch is refused clearly."""

import shutil

import pytest
import torch
from hydra import compose, initialize_config_dir

from mazerl.apps.schema import register_configs, typed
from mazerl.core.config import CONF_DIR, to_container
from mazerl.core.errors import CheckpointError, ConfigError
from mazerl.envs.spec import MazeSpec, MazeTask
from mazerl.eval import runner
from mazerl.eval.evaluate import SetResult, exact_route_masses
from mazerl.eval.metric_names import Metric
from mazerl.eval.runner import cached_sets, held_out_keys
from mazerl.train.bank import BANK_DIR, INDEX, bank_file, bank_index, sha256
from mazerl.train.sft import load_base, obtain_base

CPU = torch.device("cpu")
PASS1 = Metric("pass", k=1)


def config(*overrides):
    """The typed `mazerl-train` config with `overrides`."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return typed(compose(config_name="config", overrides=list(overrides)))


def base_of(cfg, cache):
    """`obtain_base` as a run calls it, with the cache in `cache`."""
    task = MazeTask.of(cfg.maze)
    held_out = held_out_keys(task.spec, cfg.eval, cfg.base.held_out, cache / "eval_sets")
    return obtain_base(task, held_out, CPU, lambda _: None, policy=cfg.policy, base=cfg.base)


def test_the_bank_holds_at_least_ten_models_with_seeds_0_to_k():
    seeds = sorted(e["seed"] for e in bank_index().values())
    assert len(seeds) >= 10 and seeds == list(range(len(seeds)))


def test_each_bank_file_has_its_hash_and_its_recorded_exact_pass1(tmp_path):
    cfg = config("experiment=maze_long")
    sets = cached_sets(MazeSpec.of(cfg.maze), cfg.eval, tmp_path)
    (id_set,) = [s for s in sets if s.name == "id"]
    assert len(id_set.mazes) == 1024
    policy_cfg = to_container(cfg.policy)
    for entry in bank_index().values():
        path = BANK_DIR / entry["file"]
        assert sha256(path) == entry["sha256"]
        policy, ckpt = load_base(path, policy_cfg, CPU)
        assert ckpt["config"]["base"]["seed"] == entry["seed"]
        masses, _ = exact_route_masses(policy, id_set.mazes, 1.0, CPU)
        # perfect mazes: one route, so the exact pass@1 is the mean route probability
        recorded = entry["exact"]["id"]["exact_pass@1"]
        assert masses[:, 0].mean() == pytest.approx(recorded, rel=1e-5)
        assert 0.2 < recorded < 0.5  # SFT stops at probe pass@1 0.3


@pytest.mark.parametrize(
    "overrides, seed",
    [
        ((), 0),
        (("experiment=maze_long", "seed=3"), 3),
        (("experiment=leaderboard", "seed=7"), 7),
        (("experiment=leaderboard", "seed=2", "maze.pool_size=100"), 2),  # RL-only: not keyed
    ],
)
def test_the_main_job_and_the_study_presets_load_bank_model_k(tmp_path, overrides, seed):
    cfg = config(*overrides, "base.bank=require", f"base.cache_dir={tmp_path}")
    _, _, origin = base_of(cfg, tmp_path)
    entry = next(e for e in bank_index().values() if e["seed"] == seed)
    assert origin == {"source": "bank", "key": entry["key"], "sha256": entry["sha256"]}
    assert not (tmp_path / entry["key"] / "base.pt").exists()  # nothing trained


def test_require_names_the_setting_when_no_bank_model_matches(tmp_path):
    cfg = config("maze.size=4", "base.bank=require", f"base.cache_dir={tmp_path}")
    with pytest.raises(ConfigError, match=r"^base.bank=require: no bank model"):
        base_of(cfg, tmp_path)


def test_a_changed_bank_file_is_refused_and_off_ignores_the_bank(tmp_path):
    bank = tmp_path / "bank"
    shutil.copytree(BANK_DIR, bank)
    entry = next(iter(bank_index(bank).values()))
    assert bank_file(entry["key"], "auto", bank) == (bank / entry["file"], entry["sha256"])
    assert bank_file(entry["key"], "off", bank) is None
    data = bytearray((bank / entry["file"]).read_bytes())
    data[-100] ^= 1
    (bank / entry["file"]).write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"does not match its sha256 in .*{INDEX}"):
        bank_file(entry["key"], "auto", bank)


def test_a_stored_base_evaluation_belongs_to_its_weights(tmp_path, monkeypatch):
    """A bank model and a model trained here under the same cache key share the cache folder;
    each keeps its own stored evaluation (keyed by the checkpoint's sha256)."""
    calls = []

    def evaluate_all(*args, **kwargs):
        calls.append(1)
        return {"id": SetResult({PASS1: len(calls) / 4})}

    monkeypatch.setattr(runner, "evaluate_all", evaluate_all)
    cfg = config()

    def stored(weights):
        return (
            runner.BaseEvaluation.load_or_run(
                tmp_path,
                None,
                [],
                CPU,
                print,
                task=MazeTask.of(cfg.maze),
                eval=cfg.eval,
                weights=weights,
            )
            .results["id"]
            .values[PASS1]
        )

    assert stored("bank") == 0.25
    assert stored("trained here") == 0.5
    assert stored("bank") == 0.25 and len(calls) == 2


def test_a_stored_base_evaluation_is_keyed_by_the_episodes_not_the_training_pool(
    tmp_path, monkeypatch
):
    """The base model's evaluation depends on the evaluation sets (the spec) and the maze
    rule, not on `maze.pool_size`, which only the training mazes read: runs that differ in
    the pool share one stored evaluation; another rule or spec has its own."""
    calls = []

    def evaluate_all(*args, allow_revisits, **kwargs):
        calls.append(allow_revisits)
        return {"id": SetResult({PASS1: len(calls) / 4})}

    monkeypatch.setattr(runner, "evaluate_all", evaluate_all)

    def stored(*overrides):
        cfg = config(*overrides)
        return runner.BaseEvaluation.load_or_run(
            tmp_path, None, [], CPU, print, task=MazeTask.of(cfg.maze), eval=cfg.eval,
            weights="w",
        ).results["id"].values[PASS1]  # fmt: skip

    assert stored() == 0.25
    assert stored("maze.pool_size=64") == 0.25 and calls == [False]
    assert stored("maze.allow_revisits=true") == 0.5
    assert stored("maze.routes=2") == 0.75
    assert calls == [False, True, False]


def test_too_few_mazes_left_for_sft_names_base_held_out(tmp_path):
    """3x3 cells have 192 Prim mazes: holding out 1,024 per set leaves none to train on."""
    cfg = config("maze.size=3", "base.bank=off", f"base.cache_dir={tmp_path}")
    with pytest.raises(ConfigError, match=r"^cannot draw .* or lower base.held_out=1024 \("):
        base_of(cfg, tmp_path)
