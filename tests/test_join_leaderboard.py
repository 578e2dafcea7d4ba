"""One command to join the leaderboard, end to end on a tiny preset: the committed study
(`experiment=decisive`: GRPO and F-GRPO gamma 1) and a new method (`experiment=leaderboard
algo=w_reinforce`) run from two base models, which a temporary bank then holds; `mazerl-summarize
MINE COMMITTED --out DIR` puts the new method on the board paired by bank model, flags the pair
whose runs ran on another kind of CPU, and leaves out a run whose base model is not a bank
model. The presets' maze, policy and evaluation are shrunk to a toy (3x3 mazes, 16 evaluation
mazes, 6 steps); each sweep runs in its own `mazerl-train -m` process. The runs train their two
base models into a cache (base.bank=auto: a process of its own cannot see a test's bank), which
the bank then holds byte for byte, so their metrics.json name its cache keys and sha256."""

import csv
import hashlib
import json
import shutil

import numpy as np
import pytest
import torch
from conftest import ROOT, run_app

from mazerl.analysis import summarize
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import load_module
from mazerl.train.bank import INDEX, bank_index

TINY = [
    "cell=n8",  # N = 8; the protocol's 20,000 steps cut to 6 below
    "seed=0,1",  # bank models 0 and 1
    "maze.size=3",
    "policy.hidden=32",
    "base.steps=40",
    "base.target_pass1=null",
    "base.probe_every=40",
    "base.probe_mazes=16",
    "base.probe_samples=4",
    "base.held_out=16",
    "base.bank=auto",
    "eval.sets=[{name: id, num_mazes: 16}]",
    "eval.sampled_mazes=null",
    "eval.n=8",
    "eval.n_during=8",
    "eval.exact_ks=[1,8]",
    "eval.images=0",
    "train.iterations=6",
    "train.eval_every=3",
    "train.checkpoint_every=3",
    "train.log_every=3",
    "train.num_prompts=8",
    "threads=1",
    "logger.progress=lines",
]
NEW = "W-REINFORCE (λ = 0.1)"


def sweep(tmp_path, preset: str, method: str, folder: str):
    out = run_app(
        "mazerl.apps.train", "-m", f"experiment={preset}", method, *TINY,
        f"base.cache_dir={tmp_path / 'cache'}", f"hydra.sweep.dir={tmp_path / folder}",
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp_path / folder


def tiny_bank(cache, bank):
    """A bank of the base models in `cache`: each copied with its cache key (its folder) and
    sha256, bank model k the base model of base.seed k."""
    bank.mkdir()
    models = []
    for folder in sorted(p.parent for p in cache.glob("*/base.pt")):
        seed = torch.load(folder / "base.pt", weights_only=False)["config"]["base"]["seed"]
        shutil.copyfile(folder / "base.pt", bank / f"tiny-s{seed}.pt")
        sha = hashlib.sha256((bank / f"tiny-s{seed}.pt").read_bytes()).hexdigest()
        models.append({"name": f"tiny-s{seed}", "seed": seed, "key": folder.name,
                       "file": f"tiny-s{seed}.pt", "sha256": sha})  # fmt: skip
    (bank / INDEX).write_text(json.dumps({"models": models}))
    return {m["seed"]: m for m in models}


def exact_p(run) -> np.ndarray:
    """`[M]` exact per-maze success probabilities (ID) of the run's last evaluation (step 6)."""
    evaluation = json.loads((run / "eval" / "step_0000006.json").read_text())
    return np.array(evaluation["id"]["per_maze"]["exact_p"])


def edit_metrics(run, **changes):
    metrics = json.loads((run / "metrics.json").read_text())
    (run / "metrics.json").write_text(json.dumps(metrics | changes))
    return metrics


def test_a_new_method_joins_the_committed_board_paired_by_bank_model(tmp_path, monkeypatch):
    committed = sweep(tmp_path, "decisive", "method=grpo,fgrpo1", "decisive")
    mine = sweep(tmp_path, "leaderboard", "algo=w_reinforce", "mine")
    models = tiny_bank(tmp_path / "cache", tmp_path / "bank")
    assert sorted(models) == [0, 1]  # one base model per seed
    protocol = ROOT / "experiments" / "studies" / "leaderboard" / "protocol.py"
    (committed / "study.yaml").write_text(f"pairing: {protocol}:PROTOCOL\n")  # as decisive's
    monkeypatch.setattr(load_module(protocol), "bank_index", lambda: bank_index(tmp_path / "bank"))
    # bank model 0's new run came from a machine of another vector capability
    own = json.loads((mine / "w_reinforce_N8_g0.0_s0" / "metrics.json").read_text())
    other = "AVX512" if own["cpu_capability"] != "AVX512" else "AVX2"
    edit_metrics(mine / "w_reinforce_N8_g0.0_s0", cpu_capability=other)
    # two runs that cannot be placed: a base model trained elsewhere, and one with bank
    # model 1's cache key but other weights
    for seed, origin in ((2, {"source": "trained", "key": "0123456789abcdef", "sha256": "0" * 64}),
                         (3, models[1] | {"source": "cache", "sha256": "f" * 64})):  # fmt: skip
        run = shutil.copytree(
            mine / "w_reinforce_N8_g0.0_s1", mine / f"w_reinforce_N8_g0.0_s{seed}"
        )
        (run / ".hydra" / "overrides.yaml").write_text(
            (run / ".hydra" / "overrides.yaml").read_text().replace("seed=1", f"seed={seed}")
        )
        edit_metrics(run, base_model={k: origin[k] for k in ("source", "key", "sha256")})

    table = summarize(mine, committed, out=tmp_path / "out")

    board = table.split("### Leaderboard, id")[1].split("\n#")[0]
    rows = {r.split(" | ")[1]: r.split(" | ") for r in board.splitlines() if r.startswith("| 8 |")}
    assert set(rows) == {f"{NEW} †", "GRPO", "F-GRPO γ 1", "base model"}
    assert rows["GRPO"][4] == "reference" and rows[f"{NEW} †"][2] == "2"  # bank models 0, 1
    # by hand from the per-maze files: bank model k's new run minus bank model k's GRPO run
    new = [exact_p(mine / f"w_reinforce_N8_g0.0_s{k}") for k in (0, 1)]
    grpo = [exact_p(committed / f"grpo_N8_g0.0_s{k}") for k in (0, 1)]
    d = np.stack([new[0] - grpo[0], new[1] - grpo[1]])  # [bank models, mazes]
    assert rows[f"{NEW} †"][3] == f"{100 * np.mean(new):.1f}"
    assert rows[f"{NEW} †"][4] == paired_difference(d).text(100, 1)
    with open(tmp_path / "out" / "leaderboard.csv", newline="") as fh:
        csv_row = next(
            r for r in csv.DictReader(fh)
            if r["method"] == NEW and r["metric"] == "eval/id/exact_pass@1"
        )  # fmt: skip
    lo, hi = paired_difference(d).interval()
    assert float(csv_row["diff_vs_grpo"]) == pytest.approx(d.mean())
    assert (float(csv_row["diff_lo"]), float(csv_row["diff_hi"])) == pytest.approx((lo, hi))
    crossed = np.stack([new[0] - grpo[1], new[1] - grpo[0]])  # paired the wrong way round
    assert paired_difference(crossed).interval() != pytest.approx((lo, hi))
    assert (csv_row["paired_seeds"], csv_row["mazes"], csv_row["paired_across_cpus"]) == (
        "2", "16", "1"
    )  # fmt: skip
    # the flag: bank model 0's pair ran on two kinds of CPU
    cpu = f"{own['cpu']}, {{}}, 1 thread"
    assert (
        f"† {NEW} at N = 8, paired by bank model across CPU kinds: RL rounding differs: bank "
        f"model 0 ({cpu.format(other)} against GRPO's {cpu.format(own['cpu_capability'])})."
    ) in board
    assert "†" not in rows["F-GRPO γ 1"][1]  # the committed runs share one machine
    # one line for each run that cannot be placed
    assert (
        f"- {mine / 'w_reinforce_N8_g0.0_s2'}: left out: its base model (trained, cache key "
        "0123456789abcdef) is not a bank model"
    ) in table
    assert (
        f"- {mine / 'w_reinforce_N8_g0.0_s3'}: left out: its base model has bank model 1's "
        "cache key but not its sha256"
    ) in table
