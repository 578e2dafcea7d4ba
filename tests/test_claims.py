"""Claims as data (mazerl.analysis.claims): a claims file read and judged on a fabricated
sweep against hand computations; the decisive study's committed claims.csv checked against its
claims file, the verdict rule, the paper's table and two claims recomputed here from the
per-maze files; and the write-up's generated blocks against the committed claims.csv."""

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from mazerl.analysis.claims import (
    COLUMNS,
    fill_blocks,
    load_claims,
    read_claims_csv,
    study_claims,
    summarize_claims,
)
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import load_module
from mazerl.analysis.verdicts import ALPHA
from mazerl.core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
DECISIVE = ROOT / "experiments" / "runs" / "decisive"
CLAIMS_YAML = ROOT / "experiments" / "studies" / "decisive" / "claims.yaml"
WRITE_UP = ROOT / "docs" / "results" / "decisive.md"
table4_gain = load_module(ROOT / "experiments" / "studies" / "paper" / "sections.py").table4_gain


def fake_run(root: Path, method: str, seed: int, n: int, exact_p, step: int = 100) -> Path:
    """A finished run of a conf/method preset as the trainer leaves it: the config group's
    choice in `.hydra/hydra.yaml`, per-maze exact probabilities at `step`, metrics.json with
    its base model (pass@1 0.30 from the bank)."""
    run = root / f"{method}_N{n}_s{seed}"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(
        yaml.safe_dump([f"method={method}", f"seed={seed}"])
    )
    config = {"seed": seed, "train": {"group_size": n}, "focal": {"gamma": 0.0}}
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    hydra = {"hydra": {"runtime": {"choices": {"method": method}}}}
    (run / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump(hydra))
    p = np.asarray(exact_p, dtype=float)
    (run / "eval").mkdir()
    ev = {"exact_pass@1": float(p.mean()), "per_maze": {"exact_p": p.tolist(), "mazes_hash": "h"}}
    (run / "eval" / f"step_{step:07d}.json").write_text(json.dumps({"id": ev}))
    metrics = {
        "final": {"eval/id/exact_pass@1": float(p.mean())},
        "base": {"eval/id/exact_pass@1": 0.30},
        "base_model": {"sha256": f"sha{seed}", "source": "bank"},
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run


CLAIMS = {
    "declared": "before the runs, 2026-01-01, commit abc1234",
    "methods": {"GRPO": {"method": "grpo"}, "New": {"method": "new"}},
    "defaults": {"set": "id", "metric": "exact_pass", "k": 1, "n": 8, "step": 100},
    "claims": [
        {"id": "gain", "family": "f", "a": "New", "b": "GRPO", "reference": 20.0,
         "reference_kind": "single run"},
        {"id": "over-base", "family": "f", "a": "New", "b": "base model", "reference": 25.0,
         "reference_kind": "mean"},
    ],
}  # fmt: skip


GRPO_P = [0.5, 0.4, 0.6, 0.3]
GAINS = [[0.10, 0.12, 0.20, 0.18], [0.05, 0.03, 0.07, 0.05], [0.10] * 4]


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """3 seeds x 4 mazes; New minus GRPO per maze (`GAINS`): seed means 0.15, 0.05, 0.10."""
    root = tmp_path / "sweep"
    for seed, g in enumerate(GAINS):
        fake_run(root, "grpo", seed, 8, GRPO_P)
        fake_run(root, "new", seed, 8, np.add(GRPO_P, g))
    fake_run(root, "new", 0, 32, [0.0] * 4)  # another group size: not read
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(CLAIMS))
    (root / "study.yaml").write_text("claims: ../claims.yaml\n")
    return root


def test_a_claims_file_judged_on_a_fabricated_sweep(sweep: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    rows = summarize_claims(sweep, out)
    with open(out / "claims.csv", newline="") as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    gain, base = read_claims_csv(out / "claims.csv")
    assert gain == {k: v for k, v in rows[0].items() if k in COLUMNS}
    # unit means 15, 5, 10 points: estimate 10, sd 5; one run: 10 +- t(2) 5 sqrt(4/3)
    assert float(gain["estimate"]) == pytest.approx(10.0, abs=1e-3)
    half = stats.t.ppf(0.975, 2) * 5 * math.sqrt(4 / 3)
    assert float(gain["pi_lo"]) == pytest.approx(10 - half, abs=1e-3)
    assert float(gain["pi_hi"]) == pytest.approx(10 + half, abs=1e-3)
    assert gain["units"] == "3 bank models" and gain["a"] == "New" and gain["b"] == "GRPO"
    # the interval is the two-way one on the df it used (here the maze term is kept)
    d = np.add(GRPO_P, GAINS) - np.array(GRPO_P)  # [3, 4], as the runs' files hold it
    ref = paired_difference(d)
    lo, hi = ref.interval()
    assert float(gain["lo"]) == pytest.approx(100 * lo, abs=1e-3)
    assert float(gain["hi"]) == pytest.approx(100 * hi, abs=1e-3)
    assert float(gain["df"]) == pytest.approx(ref.df, abs=0.05)
    p = 2 * stats.t.sf(ref.mean / ref.se, ref.df)
    assert float(gain["p"]) == pytest.approx(p, rel=1e-3)
    # against the base model: the runs' pass@1 minus 0.30, 0.45 + (0.15, 0.05, 0.10) - 0.30
    # = 30, 20, 25 points: mean 25, a t interval on 2 df, t(2) 5 / sqrt(3)
    assert float(base["estimate"]) == pytest.approx(25.0, abs=1e-3)
    half_ci = stats.t.ppf(0.975, 2) * 5 / math.sqrt(3)
    assert float(base["lo"]) == pytest.approx(25 - half_ci, abs=1e-3)
    assert base["df"] == "2.0" and base["pi_lo"] == ""  # a mean reference: no one-run interval
    # Holm over the family of two: the smaller p doubled, the larger kept (or raised)
    ps = sorted([float(gain["p"]), float(base["p"])])
    adj = sorted([float(gain["p_adjusted"]), float(base["p_adjusted"])])
    assert adj[0] == pytest.approx(2 * ps[0], rel=1e-3)
    assert adj[1] == pytest.approx(max(2 * ps[0], ps[1]), rel=1e-3)
    # the verdicts from the rows' own numbers: 25 lies in [25 - 12.4, 25 + 12.4]; the one-run
    # interval [-14.9, +34.9] holds 20
    assert base["magnitude"] == "consistent" and gain["magnitude"] == "consistent"
    for row in (gain, base):
        want = "shown" if float(row["p_adjusted"]) < ALPHA else "not shown"
        assert row["direction"] == want
    text = (out / "claims.md").read_text()
    assert "before the runs, 2026-01-01, commit abc1234" in text
    assert "| gain | New - GRPO | N = 8, exact id pass@1, 100 | 3 bank models | +10.0" in text


def test_bad_claims_files_say_what_is_wrong(sweep: Path, tmp_path: Path):
    def bad(change: dict, match: str) -> None:
        spec = {**CLAIMS, "claims": [{**CLAIMS["claims"][0], **change}]}
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(spec))
        with pytest.raises(UserError, match=match):
            load_claims(path, sweep)

    bad({"a": "Nobody"}, "a = 'Nobody' is not under methods")
    bad({"reference_kind": "median"}, "reference_kind 'median'")
    bad({"reference_kind": None}, "reference and reference_kind go together")
    bad({"sweep": "missing_arm"}, "sweep .*missing_arm does not exist")
    bad({"metric": "pass_rate"}, "metric 'pass_rate'")
    (sweep / "study.yaml").write_text("claims: ../nowhere.yaml\n")
    with pytest.raises(UserError, match=r"claims file \.\./nowhere\.yaml not found"):
        study_claims(sweep)


# --- the decisive study: the committed claims.csv ------------------------------------------


def committed() -> list[dict[str, str]]:
    return read_claims_csv(DECISIVE / "claims.csv")


def test_the_committed_claims_are_the_claims_file_s_and_follow_the_rule():
    rows = committed()
    spec = yaml.safe_load(CLAIMS_YAML.read_text())
    assert [r["claim"] for r in rows] == [c["id"] for c in spec["claims"]]
    with open(DECISIVE / "claims.csv", newline="") as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    assert study_claims(DECISIVE) == CLAIMS_YAML
    for r in rows:
        p, adj = float(r["p"]), float(r["p_adjusted"])
        assert p <= adj <= 1
        assert r["direction"] == ("shown" if adj < ALPHA else "not shown")
        lo, hi = (
            (r["pi_lo"], r["pi_hi"]) if r["reference_kind"] == "single run" else (r["lo"], r["hi"])
        )
        if r["reference"]:
            ref = float(r["reference"])
            want = "below" if float(hi) < ref else "above" if float(lo) > ref else "consistent"
            assert r["magnitude"] == want
        else:
            assert r["magnitude"] == "" and r["reference_kind"] == ""
    for family in {r["family"] for r in rows}:
        fam = sorted((float(r["p"]), float(r["p_adjusted"])) for r in rows if r["family"] == family)
        assert all(a[1] <= b[1] for a, b in itertools.pairwise(fam))  # monotone


def test_the_references_are_the_paper_s_table_4_gains():
    spec = yaml.safe_load(CLAIMS_YAML.read_text())
    gammas = {name: sel for name, sel in spec["methods"].items()}
    preset_gamma = {"fgrpo05": 0.5, "fgrpo1": 1.0}
    for c in spec["claims"]:
        if "reference" in c:
            gamma = preset_gamma[gammas[c["a"]]["method"]]
            assert c["b"] == "GRPO" and c["reference_kind"] == "single run"
            assert c["reference"] == table4_gain(c["n"], gamma, c.get("k", 1))


def unit_differences(sweep: Path, a: str, b: str, n: int, step: int, k: int) -> np.ndarray:
    """`[U, M]` exact ID pass@k of preset a minus preset b per seed and maze, read here from
    each run's overrides and eval/step_*.json (fractions)."""
    by = {}
    for run in sweep.iterdir():
        over = run / ".hydra" / "overrides.yaml"
        if not over.is_file():
            continue
        given = dict(o.split("=", 1) for o in yaml.safe_load(over.read_text()))
        if given.get("cell") != f"n{n}" or given.get("method") not in (a, b):
            continue
        ev = json.loads((run / "eval" / f"step_{step:07d}.json").read_text())
        q = np.array(ev["id"]["per_maze"]["exact_p"])
        by[given["method"], int(given["seed"])] = 1 - (1 - q) ** k
    seeds = sorted({s for m, s in by if m == a} & {s for m, s in by if m == b})
    return np.stack([by[a, s] - by[b, s] for s in seeds])


@pytest.mark.parametrize(
    ("claim", "sweep", "a", "b", "n", "step"),
    [
        ("n32-gamma05-grpo", DECISIVE, "fgrpo05", "grpo", 32, 15000),
        (
            "n8-gamma05-grpo-nozero",
            DECISIVE.parent / "decisive_nozero",
            "fgrpo05",
            "grpo",
            8,
            20000,
        ),
    ],
)
def test_two_committed_claims_recompute_from_the_per_maze_files(claim, sweep, a, b, n, step):
    row = next(r for r in committed() if r["claim"] == claim)
    d = 100 * unit_differences(sweep, a, b, n, step, 1)
    per_unit = d.mean(1)
    assert len(per_unit) == 13 and row["units"] == "13 bank models"
    assert float(row["estimate"]) == pytest.approx(d.mean(), abs=6e-4)
    s, k = per_unit.std(ddof=1), len(per_unit)
    half = stats.t.ppf(0.975, k - 1) * s * math.sqrt(1 + 1 / k)
    assert float(row["pi_lo"]) == pytest.approx(per_unit.mean() - half, abs=6e-4)
    assert float(row["pi_hi"]) == pytest.approx(per_unit.mean() + half, abs=6e-4)
    diff = paired_difference(d / 100)
    lo, hi = diff.interval()
    assert (float(row["lo"]), float(row["hi"])) == pytest.approx((100 * lo, 100 * hi), abs=6e-4)
    assert float(row["df"]) == pytest.approx(diff.df, abs=0.05)


def test_the_first_claim_reproduces_the_issue_s_numbers():
    row = next(r for r in committed() if r["claim"] == "n32-gamma05-grpo")
    # issue 51: +3.3 [+1.0, +5.5], p = 0.0075, one run about [-5.0, +11.6]
    assert [round(float(row[c]), 1) for c in ("estimate", "lo", "hi", "pi_lo", "pi_hi")] == [
        3.3, 1.0, 5.5, -5.0, 11.6,
    ]  # fmt: skip
    assert float(row["p"]) == pytest.approx(0.0075, abs=1e-4)


# --- the write-up -------------------------------------------------------------------------


def test_the_write_up_s_generated_blocks_match_the_committed_claims():
    text = WRITE_UP.read_text()
    rows = committed()
    assert "<!-- claims:start table paper -->" in text
    regenerated = fill_blocks(text, rows)
    assert regenerated == text, (
        "docs/results/decisive.md's claims blocks differ from experiments/runs/decisive/"
        "claims.csv: python experiments/fill_claims.py docs/results/decisive.md "
        "experiments/runs/decisive/claims.csv"
    )
    shown = {r["claim"] for r in rows}
    for r in rows:
        if r["family"] == "paper":
            assert f"| {r['claim']} |" in text, f"{r['claim']} is not in the write-up's table"
    assert shown


def test_fill_blocks_rewrites_a_stale_block():
    rows = [
        {"claim": "x", "family": "f", "a": "A", "b": "B", "n": "8", "set": "id",
         "metric": "exact_pass", "k": "1", "step": "100", "units": "3 seeds",
         "estimate": "3.263", "lo": "1.039", "hi": "5.487", "df": "12.3", "p": "0.00758",
         "p_adjusted": "0.0379", "pi_lo": "-5.029", "pi_hi": "11.555", "reference": "10.600",
         "reference_kind": "single run", "direction": "shown", "magnitude": "consistent"},
    ]  # fmt: skip
    stale = "before\n<!-- claims:start bullets x -->\n- refuted\n<!-- claims:end -->\nafter\n"
    out = fill_blocks(stale, rows)
    assert "refuted" not in out and out.startswith("before\n") and out.endswith("after\n")
    assert "- `x`, A - B (N = 8, exact id pass@1, step 100, 3 seeds): **+3.3 [+1.0, +5.5]**" in out
    assert "(12.3 df), p = 0.0076, Holm-adjusted 0.038 (f family): direction **shown**" in out
    assert "one run [-5.0, +11.6]: **consistent**" in out
    assert fill_blocks(out, rows) == out
    with pytest.raises(UserError, match="'y' is no claim id or family"):
        fill_blocks("<!-- claims:start table y -->\n<!-- claims:end -->", rows)
