"""Sweeps: presets, launchers (joblib, local Ray) and the summarizer."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml
from conftest import FAST, run_app
from torch.utils.tensorboard import SummaryWriter

from mazerl.analysis import summarize
from mazerl.analysis.figures import errorbars_vs_n


@pytest.mark.parametrize(
    "launcher",
    ["hydra/launcher=joblib", "hydra/launcher=ray_local"],
    ids=["joblib", "ray"],
)
def test_smoke_sweep_lands_every_job(tmp_path, base_cache, launcher):
    sweep = tmp_path / "sweep"
    extra = ["hydra.launcher.ray.init.num_cpus=2"] if "ray" in launcher else []
    out = run_app(
        "mazerl.apps.train",
        "-m",
        *FAST,
        launcher,
        *extra,
        f"hydra.sweep.dir={sweep}",
        f"base.cache_dir={base_cache}",
        "train.iterations=3",
        cwd=tmp_path,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir())
    assert [j.name for j in jobs] == [  # the preset's sweep: N x gamma
        "N4_g0.5_iterations3",
        "N4_g0_iterations3",
        "N8_g0.5_iterations3",
        "N8_g0_iterations3",
    ]
    for job in jobs:
        m = json.loads((job / "metrics.json").read_text())
        assert m["iterations"] == 3 and "eval/id/pass@1" in m["final"]
        assert any((job / "tb").iterdir())
        # parallel jobs share one console: each console line names its job, train.log need not
        if "joblib" in launcher:  # (Ray's driver adds its own worker prefix)
            assert f"[{job.name}] iteration 3/3  reward " in out.stdout
            # each job's last line opens the whole sweep in TensorBoard
            assert f"[{job.name}] open it in TensorBoard: tensorboard --logdir sweep" in out.stdout
        assert "iteration 3/3" in (job / "train.log").read_text()
        assert f"[{job.name}]" not in (job / "train.log").read_text()
    table = summarize(sweep)
    assert "4 runs, 4 finished" in table and "Missing" not in table


def _fake_run(root, name, overrides, finals, curve):
    """A run folder as a launcher leaves it: .hydra/, tb events (real SummaryWriter),
    metrics.json."""
    run = root / name
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    writer = SummaryWriter(str(run / "tb"))
    for step, value in enumerate(curve, start=1):
        writer.add_scalar("train/success_rate", value, step)
    writer.add_scalar("eval/id/pass@1", finals["eval/id/pass@1"], len(curve))
    writer.close()
    base = {"eval/id/pass@1": 0.3, "eval/id/pass@8": 0.6, "eval/id/success_rate": 0.3}
    final = dict(finals)
    for k in list(finals):
        final[k.replace("/pass@", "/delta_pass@") + "_vs_base"] = finals[k] - base[k]
    (run / "metrics.json").write_text(json.dumps({"final": final, "base": base}))
    return run


def test_summary_numbers_by_hand(tmp_path):
    sweep = tmp_path / "sweep"
    values = {  # (gamma, seed) -> pass@1, pass@8
        ("0", "0"): (0.2, 0.50),
        ("0", "1"): (0.4, 0.60),
        ("0", "2"): (0.6, 0.70),
        ("0.5", "0"): (0.5, 0.9),
        ("0.5", "1"): (0.7, 0.9),
    }
    for (g, s), (p1, p8) in values.items():
        _fake_run(
            sweep,
            f"g{g}_s{s}",
            [f"focal.gamma={g}", f"seed={s}", "train.group_size=8"],
            {"eval/id/pass@1": p1, "eval/id/pass@8": p8},
            [0.1, 0.2, 0.3],
        )
    crashed = sweep / "g1_s0"
    (crashed / ".hydra").mkdir(parents=True)
    (crashed / ".hydra" / "overrides.yaml").write_text(
        "- focal.gamma=1\n- seed=0\n- train.group_size=8\n"
    )
    (crashed / "checkpoints").mkdir()
    (crashed / "checkpoints" / "ckpt_0000002.pt").write_bytes(b"x")
    half = _fake_run(
        sweep,
        "g1_s1",
        ["focal.gamma=1", "seed=1", "train.group_size=8"],
        {"eval/id/pass@1": 0.1, "eval/id/pass@8": 0.1},
        [0.1],
    )
    (half / "metrics.json").write_text('{"final": {"eval/id/pa')  # half-written

    table = summarize(sweep)
    # gamma 0: pass@1 mean of 0.2, 0.4, 0.6 = 0.4, SE = std(ddof=1) / sqrt(3) = 0.2 / 1.732
    # columns: pass@1, pass@8, then the changes against the base (0.3 and 0.6)
    assert (
        "| focal.gamma=0 | 3 | 0.400 ± 0.115 | 0.600 ± 0.058 | 0.100 ± 0.115 | 0.000 ± 0.058 |"
        in table
    )
    # gamma 0.5: mean of 0.5, 0.7 = 0.6, SE = 0.1414 / 1.414 = 0.1; pass@8 identical: SE 0
    assert (
        "| focal.gamma=0.5 | 2 | 0.600 ± 0.100 | 0.900 ± 0.000 | 0.300 ± 0.100 | 0.300 ± 0.000 |"
        in table
    )
    assert "7 runs, 5 finished" in table
    assert "- g1_s0: unfinished (last checkpoint ckpt_0000002.pt)" in table
    assert "- g1_s1: unreadable metrics.json (JSONDecodeError: " in table
    rows = (sweep / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("group,n_seeds,eval/id/pass@1,eval/id/pass@1_se")
    first = rows[1].split(",")
    assert first[0] == "focal.gamma=0" and float(first[2]) == pytest.approx(0.4)
    assert float(first[3]) == pytest.approx(np.std([0.2, 0.4, 0.6], ddof=1) / np.sqrt(3))
    for png in ("pass_at_k.png", "curves.png"):
        assert (sweep / png).stat().st_size > 5000
    assert (sweep / "summary.md").read_text() == table


def test_summarize_cli_errors(tmp_path):
    out = run_app("mazerl.apps.summarize", str(tmp_path / "nope"), cwd=tmp_path)
    assert out.returncode == 2 and "sweep dir" in out.stderr and "does not exist" in out.stderr
    out = run_app("mazerl.apps.summarize", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and "no runs under" in out.stderr


def test_presets_declare_their_sweeps():
    from mazerl.core.config import CONF_DIR

    expected = {
        "maze_group_sweep": {
            "train.group_size": "4,8,16,32,64,128",
            "focal.gamma": "0,0.5,1.0",
            "seed": "0,1,2",
        },
        "maze_transfer": {"algo": "grpo,dapo,cispo", "focal.gamma": "0,0.5", "seed": "0,1,2"},
        "gamma_sweep": {"focal.gamma": "0,0.25,0.5,1,2", "seed": "0,1,2"},
        "smoke": {"train.group_size": "4,8", "focal.gamma": "0,0.5"},
        "maze_long": {"train.group_size": "32,8", "focal.gamma": "0,1.0,0.5", "seed": "0,1,2"},
    }
    for name, params in expected.items():
        cfg = yaml.safe_load(Path(f"{CONF_DIR}/experiment/{name}.yaml").read_text())
        assert {k: str(v) for k, v in cfg["hydra"]["sweeper"]["params"].items()} == params


def test_study_presets_evaluate_exactly_on_many_mazes_and_the_default_stays_small():
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs
    from mazerl.core.config import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        default = compose(config_name="config")
        for name in ("maze_group_sweep", "maze_transfer", "rare_routes"):
            cfg = compose(config_name="config", overrides=[f"experiment={name}"])
            assert cfg.train.iterations == 3000 and cfg.train.eval_every == 250, name
            sizes = {s.name: s.num_mazes for s in cfg.eval.sets}
            assert sizes["id"] == 1024 and all(v == 512 for k, v in sizes.items() if k != "id")
            assert cfg.eval.sampled_mazes == 64 and 2048 in cfg.eval.exact_ks, name
        long = compose(config_name="config", overrides=["experiment=maze_long", "seed=2"])
        assert long.train.iterations == 20000 and long.train.eval_every == 500
        assert long.base.seed == 2 and default.base.seed == 0  # one base model per seed
        assert [s.num_mazes for s in long.eval.sets] == [1024, 512, 512]
    assert [s.num_mazes for s in default.eval.sets] == [64, 64, 64]
    assert default.eval.sampled_mazes is None and default.train.iterations == 300


def test_group_size_axes_are_log_and_ticked_at_the_swept_sizes():
    fig, ax = plt.subplots()
    errorbars_vs_n(ax, {"gamma=0": {4: [0.5, 0.6], 16: [0.7]}, "gamma=0.5": {8: [0.4, 0.5]}})
    assert ax.get_xscale() == "log"
    assert list(ax.get_xticks()) == [4, 8, 16]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16"]
    ax.set(xlabel="group size N")  # later settings keep the ticks
    assert list(ax.get_xticks()) == [4, 8, 16]
    plt.close(fig)


SUBDIRS = [  # (primary config, a job's overrides, its folder)
    ("config", ["algo=grpo", "train.group_size=8", "focal.gamma=0.5", "seed=0"], "grpo_N8_g0.5_s0"),
    ("config", ["seed=1", "train.iterations=300", "threads=1", "device=cpu"], "iterations300_s1"),
    ("config", ["maze=braid", "focal.gamma=0", "train.group_size=16"], "braid_N16_g0"),
    ("categorical", ["sim.group_size=4", "focal.gamma=1"], "N4_g1"),
    # the presets with committed studies keep their folders, so a re-launch finds its jobs
    (
        "config",
        ["experiment=maze_group_sweep", "train.group_size=8", "focal.gamma=0", "seed=0"],
        "focal.gamma=0,seed=0,train.group_size=8",
    ),
    (
        "config",
        ["experiment=maze_transfer", "algo=dapo", "focal.gamma=0.5", "seed=2"],
        "algo=dapo,focal.gamma=0.5,seed=2",
    ),
    (
        "config",
        ["experiment=rare_routes", "focal.gamma=0", "seed=0", "train.group_size=4"],
        "focal.gamma=0,seed=0,train.group_size=4",
    ),
    (
        "categorical",
        ["experiment=paper_categorical", "focal.gamma=0", "sim.group_size=2"],
        "focal.gamma=0,sim.group_size=2",
    ),
    (
        "config",
        ["experiment=maze_long", "train.group_size=8", "focal.gamma=0.5", "seed=0"],
        "grpo_N8_g0.5_s0",  # maze_long names its own
    ),
]


@pytest.mark.parametrize(("config", "overrides", "folder"), SUBDIRS)
def test_sweep_job_folders_are_short_and_the_studies_keep_theirs(config, overrides, folder):
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs
    from mazerl.core.config import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config, overrides=overrides, return_hydra_config=True)
    assert cfg.hydra.sweep.subdir == folder
