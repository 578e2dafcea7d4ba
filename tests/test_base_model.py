"""The base model's demonstrations and the mazerl-eval command on a real checkpoint."""

import json

import numpy as np
import pytest
import torch
from conftest import run_app
from test_bank import CPU
from test_bank import config as bank_config

from mazerl.apps.eval import base_weights
from mazerl.core.config import to_container
from mazerl.envs.maze import replay
from mazerl.envs.spec import MazeSpec
from mazerl.eval.evaluate import exact_route_masses
from mazerl.eval.runner import cached_sets
from mazerl.train.bank import BANK_DIR, bank_index, sha256
from mazerl.train.sft import demonstrations, load_base


def test_clean_demonstrations_are_the_solutions():
    mazes = [MazeSpec(size=4).sample(np.random.default_rng(i)) for i in range(6)]
    actions, positions, mask = demonstrations(mazes, 0.0, np.random.default_rng(0))
    for i, m in enumerate(mazes):
        n = int(mask[i].sum())
        assert tuple(actions[i, :n].tolist()) == m.solution
        assert [tuple(p) for p in positions[i, :n].tolist()] == replay(m.grid, m.start, m.solution)[
            :-1
        ]


def test_noisy_demonstrations_end_at_their_first_mistake():
    mazes = [MazeSpec(size=5).sample(np.random.default_rng(i)) for i in range(400)]
    actions, _, mask = demonstrations(mazes, 0.1, np.random.default_rng(1))
    lengths = mask.sum(1).long()
    clean = 0
    for i, m in enumerate(mazes):
        n = int(lengths[i])
        taken = tuple(actions[i, :n].tolist())
        if taken == m.solution:
            clean += 1
            continue
        assert taken[:-1] == m.solution[: n - 1]  # correct until the last, wrong move
        assert taken[-1] != m.solution[n - 1]
    # a demonstration is clean with probability 0.9^L; compare with the expected count
    expected = sum(0.9 ** len(m.solution) for m in mazes)
    assert abs(clean - expected) < 4 * np.sqrt(expected)


def test_mazerl_eval_on_a_training_checkpoint(train, tmp_path):
    _, run = train("train.iterations=2", "train.checkpoint_every=2", run_dir=tmp_path / "r")
    ckpt = run / "checkpoints" / "ckpt_0000002.pt"
    out = run_app(
        "mazerl.apps.eval",
        f"checkpoint={ckpt}",
        "eval.n=16",
        "eval.images=1",
        f"hydra.run.dir={tmp_path}/ev",
        "threads=1",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "ev" / "eval.json").read_text())
    scalars = result["scalars"]
    for s in ("id", "ood_large", "ood_dfs"):
        assert 0 <= scalars[f"eval/{s}/pass@1"] <= scalars[f"eval/{s}/pass@16"] <= 1
        assert f"eval/{s}/delta_pass@1_vs_base" in scalars
        assert len(result["sets"][s]["per_maze"]["successes"]) == 64
    assert any((tmp_path / "ev" / "tb").iterdir())
    assert "id: pass@1" in out.stdout
    torch.load(ckpt, weights_only=False)  # the checkpoint itself is intact


def test_mazerl_eval_compares_a_bank_run_with_its_bank_model(tmp_path):
    """A run from bank model 0 keeps no base.pt in its cache folder: mazerl-eval finds the bank
    file by the checkpoint's `base_model` and its base row is bank model 0's exact pass@1."""
    sets = ", ".join(
        f"{{name: {name}, {extra}num_mazes: 8}}"
        for name, extra in (
            ("id", ""),
            ("ood_large", "size_delta: 2, "),
            ("ood_dfs", "generator: dfs, "),
        )
    )  # the default sets' names and kinds (they key the base model), fewer mazes
    out = run_app(
        "mazerl.apps.train", "base.bank=require", "train.iterations=2", "train.checkpoint_every=2",
        "eval.n=4", "eval.n_during=4", "eval.exact_ks=[1]", f"eval.sets=[{sets}]", "eval.images=0",
        "logger.progress=lines", "threads=1", f"base.cache_dir={tmp_path}/cache",
        f"hydra.run.dir={tmp_path}/run", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert not list((tmp_path / "cache").rglob("base.pt"))  # nothing trained here
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_0000002.pt"
    out = run_app(
        "mazerl.apps.eval", f"checkpoint={ckpt}", "eval.n=4", "eval.images=0", "threads=1",
        "eval.sets=[{name: id, num_mazes: 16}]", f"hydra.run.dir={tmp_path}/ev", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "no comparison with the base model" not in out.stdout
    scalars = json.loads((tmp_path / "ev" / "eval.json").read_text())["scalars"]
    base = scalars["eval/id/exact_pass@1"] - scalars["eval/id/delta_exact_pass@1_vs_base"]
    # bank model 0 on that id set (16 perfect mazes): its mean route probability
    cfg = bank_config("eval.sets=[{name: id, num_mazes: 16}]")
    sets = cached_sets(MazeSpec.of(cfg.maze), cfg.eval, tmp_path / "sets")
    (id_set,) = [s for s in sets if s.name == "id"]
    entry = next(e for e in bank_index().values() if e["seed"] == 0)
    policy, _ = load_base(BANK_DIR / entry["file"], to_container(cfg.policy), CPU)
    masses, _ = exact_route_masses(policy, id_set.mazes, 1.0, CPU)
    assert len(id_set.mazes) == 16 and base == pytest.approx(masses[:, 0].mean(), abs=1e-6)


def test_base_weights_follow_the_checkpoints_origin_and_refuse_a_changed_file(tmp_path):
    said = []
    mine = tmp_path / "mine.pt"
    mine.write_bytes(b"weights")
    state = {"base": str(tmp_path), "base_model": {"source": "path", "key": None,
             "sha256": sha256(mine), "path": str(mine)}}  # fmt: skip
    assert base_weights(state, said.append) == (mine, sha256(mine))
    before = sha256(mine)
    mine.write_bytes(b"retrained")
    assert base_weights(state, said.append) is None
    assert said == [
        f"no comparison with the base model: {mine} is not the file the run started from "
        f"(sha256 {sha256(mine)[:12]}, the run's {before[:12]})"
    ]
    entry = next(iter(bank_index().values()))
    bank = {"source": "bank", "key": entry["key"], "sha256": entry["sha256"]}
    assert base_weights({"base": "gone", "base_model": bank}, said.append) == (
        BANK_DIR / entry["file"], entry["sha256"],
    )  # fmt: skip
    assert (
        base_weights({"base": "gone", "base_model": bank | {"key": "0" * 16}}, said.append) is None
    )
    assert said[-1] == (
        "no comparison with the base model: this install's bank has no model with cache key "
        + "0" * 16
    )
    # a checkpoint from before `base_model`: base.pt of its base folder
    (tmp_path / "base.pt").write_bytes(b"cached")
    assert base_weights({"base": str(tmp_path)}, said.append) == (
        tmp_path / "base.pt", sha256(tmp_path / "base.pt"),
    )  # fmt: skip
    assert base_weights({"policy_state": {}}, said.append) is None and len(said) == 2  # base.pt
