"""The leaderboard_rare study's section beside MaxRL's maze table
(experiments/studies/leaderboard_rare/sections.py) on fabricated runs: means and t intervals
over bank models, both rankings, Spearman's rho with Fieller's interval and the exact
permutation p, all worked by hand; methods with one bank model pending; one bank model run
twice refused."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from mazerl.analysis.runs import find_runs
from mazerl.analysis.study import load_module, study_sections
from mazerl.core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
SECTION = load_module(ROOT / "experiments" / "studies" / "leaderboard_rare" / "sections.py")


def run_of(root: Path, algo: str, seed: int, n: int, exact_p: list[float], step: int) -> Path:
    """A finished run of `algo` at group size `n` from bank model `seed`, evaluated at `step`
    with per-maze exact probabilities `exact_p` (pass@k = mean of 1 - (1 - p)^k)."""
    run = root / f"{algo}_N{n}_s{seed}"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump([f"algo={algo}", f"seed={seed}"]))
    config = {
        "seed": seed,
        "train": {"group_size": n},
        "focal": {"gamma": 0.0},
        "algo": {"name": algo},
    }
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    (run / ".hydra" / "hydra.yaml").write_text(
        yaml.safe_dump({"hydra": {"runtime": {"choices": {"algo": algo}}}})
    )
    p = np.asarray(exact_p)
    values = {f"exact_pass@{k}": float(np.mean(1 - (1 - p) ** k)) for k in (1, 256)}
    (run / "eval").mkdir()
    ev = {"id": {**values, "per_maze": {"exact_p": p.tolist(), "mazes_hash": "h"}}}
    (run / "eval" / f"step_{step:07d}.json").write_text(json.dumps(ev))
    metrics = {
        "final": {f"eval/id/{k}": v for k, v in values.items()},
        "base": {"eval/id/exact_pass@1": 0.3},
        "base_model": {"sha256": f"sha{seed}", "source": "bank"},
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run


# 5 mazes; a maze at p = 0 is never solved, so pass@256 counts the mazes with p >= 0.1
# (1 - 0.9^256 > 1 - 1e-11). Per bank model, pass@1 = mean p:
#   MaxRL [1, 1, 1, x, 0], x = .5, .75, 1: pass@1 70, 75, 80; pass@256 80
#   PKPO  [1, 1, x, 0, 0], x = .5, .75, 1: pass@1 50, 55, 60; pass@256 60
#   SELF  [1, x, .1, .1, .1], x = .2, .45 (2 bank models): pass@1 30, 35; pass@256 100
#   GRPO  [1, x, 0, 0, 0], x = .25, .5, .75: pass@1 25, 30, 35; pass@256 40
#   Differential Smoothing: one bank model (pending); at N = 8 only GRPO, one bank model
N32 = {
    "maxrl": [[1, 1, 1, x, 0] for x in (0.5, 0.75, 1.0)],
    "pkpo": [[1, 1, x, 0, 0] for x in (0.5, 0.75, 1.0)],
    "self": [[1, x, 0.1, 0.1, 0.1] for x in (0.2, 0.45)],
    "grpo": [[1, x, 0, 0, 0] for x in (0.25, 0.5, 0.75)],
    "diff_smoothing": [[1, 1, 1, 1, 1]],
}


@pytest.fixture
def runs(tmp_path: Path):
    for algo, rows in N32.items():
        for seed, p in enumerate(rows):
            run_of(tmp_path / "sweep", algo, seed, 32, p, 15_000)
    run_of(tmp_path / "sweep", "grpo", 0, 8, [1, 0, 0, 0, 0], 20_000)
    run_of(tmp_path / "sweep", "grpo", 1, 8, [1, 0, 0, 0, 0], 19_000)  # not at 20,000: left out
    return find_runs(tmp_path / "sweep")


def test_means_ranks_and_spearman_worked_by_hand(runs):
    lines = SECTION.maxrl_markdown(runs)
    text = "\n".join(lines)
    # MaxRL pass@1 70, 75, 80: mean 75, sd 5, half-width t(0.975, 2) 5 / sqrt 3 =
    # 4.303 x 2.887 = 12.42: [62.6, 87.4]; pass@256 80 each: [80.0, 80.0]
    # ranks at pass@1, ours: MaxRL 75 (1), PKPO 55 (2), SELF 32.5 (3), GRPO 30 (4); MaxRL's
    # table: 84.4, 74.5, 46.1, 39.6: the same order. At pass@256, ours: SELF 100 (1), MaxRL
    # 80 (2), PKPO 60 (3), GRPO 40 (4); MaxRL's: 94.3 (1), 87.5 SELF (2), 77.9 PKPO (3), 43.0
    assert (
        "| MaxRL | 3 | 75.0 [62.6, 87.4] | 1 | 84.4 | 1 | 80.0 [80.0, 80.0] | 2 | 94.3 | 1 |"
        in (text)
    )
    # SELF pass@1 30, 35: mean 32.5, sd 3.536, half t(0.975, 1) 2.5 = 12.706 x 2.5 = 31.77
    assert (
        "| SELF | 2 | 32.5 [0.7, 64.3] | 3 | 46.1 | 3 | 100.0 [100.0, 100.0] | 1 | 87.5 | 2 |"
        in (text)
    )
    assert (
        "| PKPO | 3 | 55.0 [42.6, 67.4] | 2 | 74.5 | 2 | 60.0 [60.0, 60.0] | 3 | 77.9 | 3 |" in text
    )
    assert (
        "| GRPO | 3 | 30.0 [17.6, 42.4] | 4 | 39.6 | 4 | 40.0 [40.0, 40.0] | 4 | 43.0 | 4 |" in text
    )
    # pass@1: the same order, rho = 1: Fieller's atanh is infinite (no interval); 1 of the
    # 4! = 24 orderings reaches rho = 1: p = 1/24 = 0.0417
    assert (
        "pass@1: Spearman's rho over 4 methods +1.00, Fieller's 95% interval [n/a, n/a], exact "
        "permutation p 0.0417 (24 orderings)." in lines
    )
    # pass@256: rank differences SELF -1, MaxRL +1, PKPO 0, GRPO 0: sum d^2 = 2, rho = 1 - 6 x
    # 2 / (4 x 15) = 0.8; atanh 0.8 = 1.0986, s = sqrt(1.06 / 1) = 1.0296, 1.0986 -+ 1.96 s =
    # [-0.9194, 3.1166], tanh: [-0.726, +0.996]; rho >= 0.8: the identity and the 3 swaps of
    # neighbours (sum d^2 = 2): p = 4/24 = 0.167
    assert (
        "pass@256: Spearman's rho over 4 methods +0.80, Fieller's 95% interval [-0.73, +1.00], "
        "exact permutation p 0.167 (24 orderings)." in lines
    )
    assert "Pending (fewer than 2 bank models read at this cell): Differential Smoothing (1)." in (
        lines
    )
    n8 = lines[lines.index("### N = 8, step 20,000") :]
    assert "pass@1: fewer than 2 methods ranked, no rank correlation." in n8
    pending = "GRPO (1), PKPO (0), SELF (0), Differential Smoothing (0), MaxRL (0)."
    assert f"Pending (fewer than 2 bank models read at this cell): {pending}" in n8
    assert lines[-2] == "MaxRL's rows without runs here: GRPO + entropy bonus."


def test_fieller_interval_and_permutation_p_by_hand():
    lo, hi = SECTION.fieller_interval(0.8, 4)
    assert (lo, hi) == pytest.approx(
        (math.tanh(1.0986 - 2.0180), math.tanh(1.0986 + 2.0180)), abs=1e-3
    )
    assert math.isnan(SECTION.fieller_interval(0.5, 3)[0])  # m - 3 = 0: none
    # 5 methods, var 1.06 / 2: rho 0.9 -> atanh 1.4722 -+ 1.96 x 0.7280 = [0.0453, 2.8991]
    assert SECTION.fieller_interval(0.9, 5) == pytest.approx((0.0453, 0.9939), abs=1e-3)
    # 3 methods, our order 1 3 2 against 1 2 3: rho 0.5; orderings with rho >= 0.5: 3 of 6
    assert SECTION.spearman_p([3, 1, 2], [3, 2, 1]) == pytest.approx(0.5)
    assert SECTION.spearman_p([5, 4, 3, 2, 1], [5, 4, 3, 2, 1]) == pytest.approx(1 / 120)


def test_one_bank_model_twice_is_refused(runs, tmp_path: Path):
    run_of(tmp_path / "sweep" / "again", "maxrl", 0, 32, [1] * 5, 15_000)
    with pytest.raises(UserError, match="MaxRL at N = 32 has two runs of bank model 0"):
        SECTION.maxrl_markdown(find_runs(tmp_path / "sweep"))


def test_no_method_of_the_table_no_section(tmp_path: Path):
    run_of(tmp_path / "sweep", "passk", 0, 32, [1] * 5, 15_000)
    assert SECTION.maxrl_markdown(find_runs(tmp_path / "sweep")) == []


def test_the_study_names_the_section():
    (found,) = study_sections((ROOT / "experiments" / "runs" / "leaderboard_rare",))
    assert found is SECTION.beside_maxrl_table
