"""The base model's demonstrations and the mazerl-eval command on a real checkpoint."""

import json

import numpy as np
import torch
from conftest import run_app

from mazerl.envs.maze import replay
from mazerl.envs.spec import MazeSpec
from mazerl.train.sft import demonstrations


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
