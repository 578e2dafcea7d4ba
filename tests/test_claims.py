"""Claims as data (mazerl.analysis.claims): a claims file read and judged on a fabricated
sweep against hand computations; the family rules and bad files refused in one line; the
declaration computed from git; every study's committed claims.csv checked against its claims
file, the verdict rule and the paper's table, recomputed row by row from the per-maze files
(every column: a row edited by hand fails), and claims recomputed here by hand; every
write-up's generated blocks against its committed claims.csv (experiments/fill_claims.py's
WRITE_UPS and EXAMPLES), and README's findings rows."""

import csv
import functools
import itertools
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from mazerl.analysis.claims import (
    BLOCK,
    COLUMNS,
    fill_blocks,
    load_claims,
    read_claims_csv,
    recompute_claims,
    study_claims,
    summarize_claims,
)
from mazerl.analysis.declared import declared_line
from mazerl.analysis.runs import find_runs
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import load_module
from mazerl.analysis.verdicts import ALPHA, TOO_FEW
from mazerl.core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "experiments" / "runs"
DECISIVE = RUNS / "decisive"
CLAIMS_YAML = ROOT / "experiments" / "studies" / "decisive" / "claims.yaml"
WRITE_UP = ROOT / "docs" / "results" / "decisive.md"
table4_gain = load_module(ROOT / "experiments" / "studies" / "paper" / "sections.py").table4_gain
STUDIES = sorted(p.parent for p in RUNS.glob("*/study.yaml") if study_claims(p.parent))
# the studies with finished runs, so a claims.csv; a study declared before its runs has none yet
RAN = [s for s in STUDIES if any(run.finished for run in find_runs(s))]
FILL = load_module(ROOT / "experiments" / "fill_claims.py")  # experiments/ is no package


def fake_run(
    root: Path, method: str, seed: int, n: int, exact_p, step: int = 100, rise: float = 0.0
) -> Path:
    """A finished run of a conf/method preset as the trainer leaves it: the config group's
    choice in `.hydra/hydra.yaml`, per-maze exact probabilities at `step` (and, with `rise`, at
    the 5 evaluations before it, every 100 steps, each maze's p lower by `rise` per 1,000 steps
    before `step`), metrics.json with its base model (pass@1 0.30 from the bank)."""
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
    for at in range(step - 500 * (rise != 0), step + 1, 100):
        q = p - rise * (step - at) / 1000
        ev = {
            "exact_pass@1": float(q.mean()),
            "per_maze": {"exact_p": q.tolist(), "mazes_hash": "h"},
        }
        (run / "eval" / f"step_{at:07d}.json").write_text(json.dumps({"id": ev}))
    metrics = {
        "final": {"eval/id/exact_pass@1": float(p.mean())},
        "base": {"eval/id/exact_pass@1": 0.30},
        "base_model": {"sha256": f"sha{seed}", "source": "bank"},
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run


CLAIMS = {
    "reference_setting": "a paper's table: bigger mazes, one run per cell",
    "methods": {"GRPO": {"method": "grpo"}, "New": {"method": "new"}},
    "defaults": {"set": "id", "metric": "exact_pass", "k": 1, "n": 8, "step": 100},
    "claims": [
        {"id": "gain", "family": "f", "a": "New", "b": "GRPO", "expect": "greater",
         "reference": 20.0, "reference_kind": "single run", "reference_mazes": 256},
        {"id": "over-base", "family": "f", "a": "New", "b": "base model", "expect": "greater",
         "reference": 25.0, "reference_kind": "mean"},
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
    assert float(gain["estimate"]) == pytest.approx(10.0, abs=1e-3)
    assert gain["units"] == "3 bank models" and gain["a"] == "New" and gain["b"] == "GRPO"
    # d (points): seed rows [10 12 20 18], [5 3 7 5], [10 10 10 10]; seed means 15, 5, 10,
    # maze means 25/3, 25/3, 37/3, 11; grand mean 10. MS_unit = 4 var(15, 5, 10) = 100;
    # MS_maze = 3 var(maze means) = 3 * 12 / 3 = 12; residual sum of squares 24 + 4 + 12 = 40
    # on 6 df: MS_res = 20/3. The mean's interval: (100 + 12 - 20/3) / 12 on Satterthwaite's
    # df (100 + 12 - 20/3)^2 / (100^2/2 + 12^2/3 + (20/3)^2/6)
    ms_u, ms_m, ms_r = 100.0, 12.0, 20 / 3
    var = (ms_u + ms_m - ms_r) / 12
    df = (ms_u + ms_m - ms_r) ** 2 / (ms_u**2 / 2 + ms_m**2 / 3 + ms_r**2 / 6)
    half = stats.t.ppf(0.975, df) * math.sqrt(var)
    assert (float(gain["lo"]), float(gain["hi"])) == pytest.approx((10 - half, 10 + half), abs=1e-3)
    assert float(gain["df"]) == pytest.approx(df, abs=0.05)
    p_two_way = 2 * stats.t.sf(10 / math.sqrt(var), df)
    assert float(gain["p"]) == pytest.approx(p_two_way, rel=1e-3)
    # 3 units: p_units from t = 10 / (5 / sqrt 3) on 2 df
    p_units = 2 * stats.t.sf(10 / (5 / math.sqrt(3)), 2)
    assert float(gain["p_units"]) == pytest.approx(p_units, rel=1e-3)
    # one run on 256 mazes: c_u = 4/12, c_m = (1/4 + 1/256)/3, c_r = 2/768 - 1/4 - 1/12
    terms = [(4 / 12 * ms_u, 2), ((1 / 4 + 1 / 256) / 3 * ms_m, 3), ((2 / 768 - 1 / 3) * ms_r, 6)]
    pi_var = sum(t for t, _ in terms)
    pi_df = pi_var**2 / sum(t**2 / f for t, f in terms)
    pi_half = stats.t.ppf(0.975, pi_df) * math.sqrt(pi_var)
    assert float(gain["pi_lo"]) == pytest.approx(10 - pi_half, abs=1e-3)
    assert float(gain["pi_hi"]) == pytest.approx(10 + pi_half, abs=1e-3)
    assert float(gain["pi_df"]) == pytest.approx(pi_df, abs=0.05)
    # against the base model: the runs' pass@1 minus 0.30, 0.45 + (0.15, 0.05, 0.10) - 0.30
    # = 30, 20, 25 points: mean 25, a t interval on 2 df, t(2) 5 / sqrt(3)
    assert float(base["estimate"]) == pytest.approx(25.0, abs=1e-3)
    half_ci = stats.t.ppf(0.975, 2) * 5 / math.sqrt(3)
    assert float(base["lo"]) == pytest.approx(25 - half_ci, abs=1e-3)
    assert base["df"] == "2.0" and base["pi_lo"] == ""  # a mean reference: no one-run interval
    p_base = 2 * stats.t.sf(25 / (5 / math.sqrt(3)), 2)  # p_units is the same t here
    # Holm over the family of two on max(p, p_units): the smaller doubled, the larger raised
    rule = sorted([max(p_two_way, p_units), p_base])
    assert float(base["p_adjusted"]) == pytest.approx(2 * rule[0], rel=1e-3)
    assert float(gain["p_adjusted"]) == pytest.approx(max(2 * rule[0], rule[1]), rel=1e-3)
    assert gain["p_adjusted_study"] == gain["p_adjusted"]  # one family: the study's Holm
    # the words: base 25 > 0 with Holm 2 * 0.0131 < 0.05, expected greater; gain Holm >= 0.074
    assert base["direction"] == "supported" and gain["direction"] == "not shown"
    # 25 inside [12.6, 37.4], 0 not: consistent; the one-run interval holds 20 and 0
    assert base["magnitude"] == "consistent" and gain["magnitude"] == "uninformative"
    assert gain["setting"] and gain["reference_setting"] == CLAIMS["reference_setting"]
    text = (out / "claims.md").read_text()
    assert "Declared: not computed here (no git history beside the claims file)." in text
    assert (
        "| gain | New - GRPO | greater | N = 8, exact id pass@1, 100 | 3 bank models | +10.0"
        in text
    )
    assert "a paper's table: bigger mazes, one run per cell" in text


def test_a_claim_against_its_estimate_s_sign_reads_contradicted(sweep: Path, tmp_path: Path):
    """The same base-model claim expecting `less`: its Holm p (2 x 0.0131) below 0.05 with a
    positive estimate reads contradicted."""
    spec = {**CLAIMS, "claims": [CLAIMS["claims"][0], {**CLAIMS["claims"][1], "expect": "less"}]}
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    out.mkdir()
    _, row = summarize_claims(sweep, out)
    assert float(row["p_adjusted"]) < ALPHA and row["direction"] == "contradicted"


def test_a_study_part_way_through_its_runs_has_no_verdict_below_two_units(
    sweep: Path, tmp_path: Path
):
    """The fixture's 3 seeds of New and GRPO at N = 8, and Other run for seed 0 only: Other
    - GRPO has 1 unit, and at N = 4 nothing has finished (0 units). Those claims get their
    units counted, no numbers and `too few units`, and each counts as p = 1 in its family's
    Holm: New - GRPO's rule p, max(p, p_units) = p_units (t = 10 / (5 / sqrt 3) on 2 df,
    0.0742), is the smaller of a family of three (m = 3 as declared, not 1): 3 x 0.0742."""
    fake_run(sweep, "other", 0, 8, np.add(GRPO_P, 0.2))
    methods = {**CLAIMS["methods"], "Other": {"method": "other"}}
    spec = {
        "methods": methods,
        "defaults": CLAIMS["defaults"],
        "claims": [
            {"id": "gain", "family": "f", "a": "New", "b": "GRPO", "expect": "greater"},
            {"id": "other", "family": "f", "a": "Other", "b": "GRPO", "expect": "greater"},
            {"id": "other-new", "family": "f", "a": "Other", "b": "New", "expect": "less",
             "n": 4},
            {"id": "other-flat", "a": "Other", "b": "GRPO", "margin": 1.0},
        ],
    }  # fmt: skip
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    out.mkdir()
    gain, other, nothing, flat = summarize_claims(sweep, out)
    p_units = 2 * stats.t.sf(10 / (5 / math.sqrt(3)), 2)
    assert p_units == pytest.approx(0.0742, abs=1e-4)
    assert float(gain["p_units"]) == pytest.approx(p_units, rel=1e-3)
    assert float(gain["p_adjusted"]) == pytest.approx(3 * p_units, rel=1e-3)
    assert float(gain["p_adjusted_study"]) == pytest.approx(3 * p_units, rel=1e-3)
    assert gain["direction"] == "not shown" and gain["units"] == "3 bank models"
    assert other["units"] == "1 bank model" and nothing["units"] == "0 bank models"
    for row in (other, nothing):
        assert row["direction"] == TOO_FEW and row["magnitude"] == ""
        assert all(row[c] == "" for c in ("estimate", "lo", "hi", "df", "p", "p_adjusted"))
    assert flat["units"] == "1 bank model" and flat["convergence"] == TOO_FEW
    assert flat["slope"] == ""
    text = (out / "claims.md").read_text()
    assert "Too few units (3 of 4 claims: other, other-new, other-flat)" in text
    assert "| other | Other - GRPO | greater | N = 8, exact id pass@1, 100 | 1 bank model |" in text
    assert "| other | n/a |" not in text  # no Wilcoxon row for it
    bullets = fill_blocks("<!-- claims:start bullets other -->\n<!-- claims:end -->", [other])
    assert "(N = 8, exact id pass@1, step 100): 1 bank model paired, fewer than 2: **too few " in (
        bullets
    )


def test_convergence_claims_read_the_slope_against_the_margin(tmp_path: Path):
    """New rises over GRPO by 0.2, 0.4, 0.3 points per 1,000 steps (seeds 0, 1, 2) over the
    last three evaluations: mean 0.3, sd 0.1, interval 0.3 -+ t(2) 0.1 / sqrt 3 =
    [+0.052, +0.548]. Inside a margin of 1.0: converged; past 0.5 and above 0: still rising.
    The same cell twice is a double; a convergence claim has no family."""
    root = tmp_path / "sweep"
    for seed, rise in enumerate([0.002, 0.004, 0.003]):
        fake_run(root, "grpo", seed, 8, GRPO_P, step=600, rise=1e-9)
        fake_run(root, "new", seed, 8, np.add(GRPO_P, 0.1), step=600, rise=rise)
    spec = {
        "methods": CLAIMS["methods"],
        "defaults": {"set": "id", "k": 1, "n": 8, "step": 600, "a": "New", "b": "GRPO"},
        "claims": [{"id": "flat", "margin": 1.0}, {"id": "flat-tight", "margin": 0.5, "step": 500}],
    }
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    (root / "study.yaml").write_text("claims: ../claims.yaml\n")
    out = tmp_path / "out"
    out.mkdir()
    flat, tight = summarize_claims(root, out)
    half = stats.t.ppf(0.975, 2) * 0.1 / math.sqrt(3)
    assert float(flat["slope"]) == pytest.approx(0.3, abs=1e-3)
    assert float(flat["slope_lo"]) == pytest.approx(0.3 - half, abs=1e-3)
    assert float(flat["slope_hi"]) == pytest.approx(0.3 + half, abs=1e-3)
    assert flat["convergence"] == "converged" and flat["direction"] == ""
    # read at step 500 (the last three evaluations 300-500): the same slopes, past 0.5
    assert float(tight["slope_hi"]) == pytest.approx(0.3 + half, abs=1e-3)
    assert tight["convergence"] == "still rising"
    spec["claims"].append({"id": "flat-again", "margin": 2.0})
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(UserError, match=r"claim flat-again: the same test as claim flat$"):
        summarize_claims(root, out)
    assert (
        "| flat | New - GRPO | N = 8, exact id pass@1, 600 | 3 bank models | +0.3"
        in (out / "claims.md").read_text()
    )


def test_bad_claims_files_say_what_is_wrong(sweep: Path, tmp_path: Path):
    def bad(change: dict, match: str, claims: list | None = None, top: dict | None = None):
        spec = {**CLAIMS, **(top or {})}
        spec["claims"] = claims or [{**CLAIMS["claims"][0], **change}]
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(spec))
        with pytest.raises(UserError, match=match):
            load_claims(path, sweep)

    bad({"a": "Nobody"}, "claim gain: a = 'Nobody' is not under methods")
    bad({"reference_kind": "median"}, "reference_kind 'median'")
    bad({"reference_kind": None}, "reference and reference_kind go together")
    bad({"sweep": "missing_arm"}, "sweep .*missing_arm does not exist")
    bad({"metric": "pass_rate"}, "metric 'pass_rate'")
    bad({"expect": "bigger"}, "claim gain: expect = 'bigger' is not one of greater, less")
    bad({"expect": None}, "claim gain: expect = 'None'")
    bad({"reference_mazes": None}, "claim gain: reference_mazes goes with a `single run`")
    bad({"reference_mazes": 0}, "claim gain: reference_mazes = 0 must be above 0")
    bad({"margin": 0.5}, "claim gain: a convergence claim \\(margin\\) takes no family")
    bad({"colour": "red"}, "claim gain: unknown field 'colour'")
    bad({}, "`declared:` is computed from git now", top={"declared": "before"})
    bad({}, "claim gain: has a reference, and the file declares no reference_setting",
        top={"reference_setting": ""})  # fmt: skip
    # a double: the same test in two families, or with a and b the other way round
    twice = [{**CLAIMS["claims"][0], "id": "one"},
             {**CLAIMS["claims"][0], "id": "two", "family": "g", "a": "GRPO", "b": "New",
              "reference": None, "reference_kind": None, "reference_mazes": None}]  # fmt: skip
    bad({}, "claim two: the same test as claim one \\(family f\\)", claims=twice)
    # a gap: a family against the base model must list every method (GRPO left out)
    gap = [{"id": "new-base", "family": "cov", "a": "New", "b": "base model", "expect": "less"}]
    bad({}, "claim new-base: family cov compares every method with base model but leaves out "
        "GRPO at N = 8", claims=gap)  # fmt: skip
    (sweep / "study.yaml").write_text("claims: ../nowhere.yaml\n")
    with pytest.raises(UserError, match=r"claims file \.\./nowhere\.yaml not found"):
        study_claims(sweep)


def git(folder: Path, *args: str, day: int = 1) -> str:
    """`git ARGS` in `folder`, committing (if it does) on 2026-01-DAY."""
    date = f"2026-01-{day:02d}T12:00:00+00:00"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "HOME": str(folder)}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder, capture_output=True, text=True, check=True, env={**os.environ, **env},
    )  # fmt: skip
    return done.stdout.strip()


def test_declared_before_during_or_after_the_runs_from_git(tmp_path: Path):
    """A repository where commit 1 has code, commit 2 adds the claims file, commit 3 more code:
    runs of commit 1 ran before the claims existed, runs of 2 or 3 after."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "code.py").write_text("1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "code", day=1)
    c1 = git(repo, "rev-parse", "HEAD")
    (repo / "claims.yaml").write_text("claims: []\n")
    git(repo, "add", "claims.yaml")
    git(repo, "commit", "-q", "-m", "claims", day=2)
    c2 = git(repo, "rev-parse", "HEAD")
    (repo / "code.py").write_text("2\n")
    git(repo, "commit", "-q", "-am", "more", day=3)
    c3 = git(repo, "rev-parse", "HEAD")
    claims, runs = repo / "claims.yaml", [repo]
    assert declared_line(claims, [c2, c3, c3], runs).startswith(
        f"Declared **before the runs**: the claims file was first committed in {c2[:7]}"
    )
    assert "3 of the 3 finished runs ran code that contains it" in declared_line(
        claims, [c2, c3, c3], runs
    )
    assert declared_line(claims, [c1, c1], runs).startswith("Declared **after the runs**")
    line = declared_line(claims, [c1, c3], runs)
    assert line.startswith("Declared **during the runs**") and "1 of the 2 finished" in line
    assert f"the earliest run's code: {c1[:7]}, 2026-01-01T12:00:00+00:00" in line
    assert "no run records the code it ran" in declared_line(claims, [], runs)
    assert "is not in this history" in declared_line(claims, ["f" * 40], runs)
    outside = tmp_path / "loose.yaml"
    outside.write_text("claims: []\n")
    assert declared_line(outside, [c1], runs) == (
        "Declared: not computed here (no git history beside the claims file)."
    )
    (repo / "new.yaml").write_text("claims: []\n")
    assert "not committed" in declared_line(repo / "new.yaml", [c1], runs)


# --- the committed claims.csv of every study ------------------------------------------------


def committed() -> list[dict[str, str]]:
    return read_claims_csv(DECISIVE / "claims.csv")


@pytest.mark.parametrize("sweep", STUDIES, ids=lambda p: p.name)
def test_the_committed_claims_are_the_claims_file_s_and_follow_the_rule(sweep: Path):
    path = study_claims(sweep)
    if not any(run.finished for run in find_runs(sweep)):  # a study declared, not yet run
        load_claims(path, sweep)
        assert not (sweep / "claims.csv").exists()
        return
    rows = read_claims_csv(sweep / "claims.csv")
    spec = yaml.safe_load(path.read_text())
    assert [r["claim"] for r in rows] == [c["id"] for c in spec["claims"]]
    with open(sweep / "claims.csv", newline="") as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    assert path == ROOT / "experiments" / "studies" / sweep.name / "claims.yaml"
    pending = [r for r in rows if TOO_FEW in (r["direction"], r["convergence"])]
    for r in pending:  # a study part-way through its runs: counted units, no number, no word
        assert int(r["units"].split()[0]) < 2
        numbers = ("estimate", "lo", "hi", "df", "p", "p_units", "p_adjusted", "pi_lo", "slope")
        assert all(r[c] == "" for c in numbers) and r["magnitude"] == ""
    compared = [r for r in rows if not r["margin"] and r not in pending]
    for r in compared:
        p, adj = float(r["p"]), float(r["p_adjusted"])
        rule_p = max(p, float(r["p_units"])) if r["p_units"] else p
        assert bool(r["p_units"]) == (int(r["units"].split()[0]) < 5)
        assert rule_p <= adj <= float(r["p_adjusted_study"]) <= 1
        sign = float(r["estimate"]) > 0
        want = "supported" if sign == (r["expect"] == "greater") else "contradicted"
        assert r["direction"] == (want if adj < ALPHA else "not shown")
        lo, hi = (
            (r["pi_lo"], r["pi_hi"]) if r["reference_kind"] == "single run" else (r["lo"], r["hi"])
        )
        if r["reference"]:
            ref, lo, hi = float(r["reference"]), float(lo), float(hi)
            want = "below" if hi < ref else "above" if lo > ref else (
                "uninformative" if lo <= 0 <= hi else "consistent"
            )  # fmt: skip
            assert r["magnitude"] == want
        else:
            assert r["magnitude"] == "" and r["reference_kind"] == ""
    for r in rows:
        if r["margin"] and r not in pending:
            lo, hi, m = float(r["slope_lo"]), float(r["slope_hi"]), float(r["margin"])
            want = "converged" if -m < lo and hi < m else (
                "still rising" if lo > 0 else "still falling" if hi < 0 else "undetermined"
            )  # fmt: skip
            assert r["convergence"] == want and r["direction"] == "" and r["family"] == ""
    for family in {r["family"] for r in compared}:
        fam = sorted(
            (max(float(r["p"]), float(r["p_units"] or 0)), float(r["p_adjusted"]))
            for r in compared if r["family"] == family
        )  # fmt: skip
        assert all(a[1] <= b[1] for a, b in itertools.pairwise(fam))  # monotone
        # Holm's 1st, over the declared family: a pending claim counts as p = 1
        m = len([r for r in rows if r["family"] == family])
        assert fam[0][1] == pytest.approx(min(1.0, m * fam[0][0]), rel=2e-3)
    if not compared:
        return
    study = sorted(max(float(r["p"]), float(r["p_units"] or 0)) for r in compared)
    first = min(float(r["p_adjusted_study"]) for r in compared)
    m = len([r for r in rows if not r["margin"]])
    assert first == pytest.approx(min(1.0, m * study[0]), rel=2e-3)


@pytest.mark.parametrize("sweep", RAN, ids=lambda p: p.name)
def test_every_one_run_interval_contains_the_mean_s_interval(sweep: Path):
    for r in read_claims_csv(sweep / "claims.csv"):
        if r["reference_kind"] == "single run" and r["direction"] != TOO_FEW:
            assert float(r["pi_lo"]) <= float(r["lo"]) and float(r["hi"]) <= float(r["pi_hi"])


@functools.cache
def recomputed(sweep: Path) -> tuple[list[dict[str, str]], str]:
    """The study's rows and declaration, recomputed from the runs' per-maze files."""
    _, rows, declared = recompute_claims(sweep)
    return rows, declared


def differing(rows: list[dict[str, str]], again: list[dict[str, str]]) -> list[str]:
    """`claim.column` of every value of `rows` (claims.csv as committed) that `again`
    (recomputed) does not repeat exactly."""
    assert [r["claim"] for r in rows] == [r["claim"] for r in again]
    return [f"{r['claim']}.{c}" for r, x in zip(rows, again, strict=True) for c in COLUMNS
            if r[c] != x[c]]  # fmt: skip


@pytest.mark.parametrize("sweep", RAN, ids=lambda p: p.name)
def test_every_committed_row_recomputes_from_the_per_maze_files(sweep: Path):
    """Every column of every row of the committed claims.csv, and claims.md, equal what the
    claims file and the committed runs give now (`mazerl-summarize SWEEP --claims-only`)."""
    rows, declared = recomputed(sweep)
    assert not differing(read_claims_csv(sweep / "claims.csv"), rows), (
        f"{sweep.name}: claims.csv differs from its recomputation: "
        f"mazerl-summarize {sweep.relative_to(ROOT)} --claims-only"
    )
    if "not computed here" not in declared:  # a clone without history cannot date the file
        assert declared in (sweep / "claims.md").read_text()


def test_a_forged_row_fails_the_recomputation():
    """One p of the committed decisive claims.csv changed (0.041 -> 0.01, issue 57's forgery):
    the comparison names that cell."""
    rows = committed()
    forged = [dict(r) for r in rows]
    i = next(i for i, r in enumerate(forged) if r["claim"] == "n8-gamma1-grpo")
    assert forged[i]["p"] == "0.04117"
    forged[i]["p"] = "0.01"
    again, _ = recomputed(DECISIVE)
    assert differing(rows, again) == []
    assert differing(forged, again) == ["n8-gamma1-grpo.p"]


def test_the_leaderboard_rare_references_are_maxrl_s_table():
    """Each single-run reference of the study fixed before its runs is a difference of two
    rows of MaxRL's maze table (SELF - GRPO at pass@1: 46.1 - 39.6 = 6.5); the unlikeliness
    reward, which the table lacks, has none."""
    table = load_module(ROOT / "experiments" / "studies" / "leaderboard_rare" / "maxrl_table.py")
    spec = yaml.safe_load(study_claims(RUNS / "leaderboard_rare").read_text())
    assert table.maxrl_gain("SELF", "GRPO", 1) == 6.5
    assert table.maxrl_gain("Differential Smoothing", "MaxRL", 1) == -34.4
    assert table.maxrl_gain("SELF", "GRPO", 256) == 44.5
    for c in spec["claims"]:
        gain = table.maxrl_gain(c["a"], c["b"], c["k"])
        assert c.get("reference") == gain, c["id"]
        if gain is not None:
            assert c["reference_kind"] == "single run" and c["reference_mazes"] == 256
    assert "MaxRL's maze table" in spec["reference_setting"]


TABLE4_STUDIES = [
    s for s in STUDIES if "F-GRPO Table 4" in yaml.safe_load(study_claims(s).read_text())
    .get("reference_setting", "F-GRPO Table 4")
]  # fmt: skip


@pytest.mark.parametrize("sweep", TABLE4_STUDIES, ids=lambda p: p.name)
def test_the_references_are_the_paper_s_table_4_gains(sweep: Path):
    spec = yaml.safe_load(study_claims(sweep).read_text())
    preset_gamma = {"fgrpo05": 0.5, "fgrpo1": 1.0}
    for c in spec["claims"]:
        if "reference" in c:
            sel = spec["methods"][c["a"]]
            gamma = sel["gamma"] if "gamma" in sel else preset_gamma[sel["method"]]
            assert c["b"] == "GRPO" and c["reference_kind"] == "single run"
            assert c["reference_mazes"] == 256  # the paper's held-out test mazes
            k = c.get("k", spec["defaults"]["k"])
            assert c["reference"] == table4_gain(c["n"], gamma, k)
            assert "17x17" in spec["reference_setting"]


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


def one_run_interval(d: np.ndarray, mazes: int) -> tuple[float, float]:
    """The one-run interval of docs/concepts/verdicts.md from `d[u, m]` (points), written out
    from the variance components: s2_a (1 + 1/U) + s2_b (1/M + 1/R) + s2_e (1/(U M) + 1/R),
    Satterthwaite's df over the three mean squares."""
    u, m = d.shape
    unit, maze, grand = d.mean(1), d.mean(0), d.mean()
    ms_u = m * np.sum((unit - grand) ** 2) / (u - 1)
    ms_m = u * np.sum((maze - grand) ** 2) / (m - 1)
    ms_r = np.sum((d - unit[:, None] - maze[None, :] + grand) ** 2) / ((u - 1) * (m - 1))
    s2_a, s2_b, s2_e = (ms_u - ms_r) / m, (ms_m - ms_r) / u, ms_r
    var = s2_a * (1 + 1 / u) + s2_b * (1 / m + 1 / mazes) + s2_e * (1 / (u * m) + 1 / mazes)
    parts = [((u + 1) / (u * m) * ms_u, u - 1), ((1 / m + 1 / mazes) / u * ms_m, m - 1),
             (((u - 1) / (u * mazes) - 1 / m - 1 / (u * m)) * ms_r, (u - 1) * (m - 1))]  # fmt: skip
    assert sum(x for x, _ in parts) == pytest.approx(var)
    df = var**2 / sum(x**2 / f for x, f in parts)
    half = stats.t.ppf(0.975, df) * math.sqrt(var)
    return grand - half, grand + half


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
    assert len(d) == 13 and row["units"] == "13 bank models"
    assert float(row["estimate"]) == pytest.approx(d.mean(), abs=6e-4)
    lo, hi = one_run_interval(d, 256)
    assert (float(row["pi_lo"]), float(row["pi_hi"])) == pytest.approx((lo, hi), abs=6e-4)
    diff = paired_difference(d / 100)
    lo, hi = diff.interval()
    assert (float(row["lo"]), float(row["hi"])) == pytest.approx((100 * lo, 100 * hi), abs=6e-4)
    assert float(row["df"]) == pytest.approx(diff.df, abs=0.05)
    assert row["p_units"] == ""  # 13 units


def test_the_issue_s_figures():
    """Issue 57: with the maze term and the paper's own 256 mazes, maze_group_sweep's
    n32-gamma1-grpo-at256 one-run interval is [+9.99, +19.26] and n64's [+10.57, +20.22], both
    holding the paper's value; decisive N = 8 MaxRL >= PKPO reads contradicted, N = 8 gamma 0.5
    uninformative (its interval holds 0 and +11.2); issue 51's N = 32 gamma 0.5 numbers stay."""
    sweep = {r["claim"]: r for r in read_claims_csv(RUNS / "maze_group_sweep" / "claims.csv")}
    for claim, want in [("n32-gamma1-grpo-at256", (9.99, 19.26)),
                        ("n64-gamma1-grpo-at256", (10.57, 20.22))]:  # fmt: skip
        r = sweep[claim]
        assert (round(float(r["pi_lo"]), 2), round(float(r["pi_hi"]), 2)) == want
        assert r["magnitude"] == "consistent"
    rows = {r["claim"]: r for r in committed()}
    assert rows["n8-maxrl-pkpo"]["direction"] == "contradicted"
    assert rows["n8-gamma05-grpo"]["magnitude"] == "uninformative"
    row = rows["n32-gamma05-grpo"]
    # issue 51: +3.3 [+1.0, +5.5], p = 0.0075
    assert [round(float(row[c]), 1) for c in ("estimate", "lo", "hi")] == [3.3, 1.0, 5.5]
    assert float(row["p"]) == pytest.approx(0.0075, abs=1e-4)


def per_seed(folder: Path, algo: str, gamma: float, n: int, step: int, k: int) -> dict:
    """seed -> `[M]` exact ID pass@k (fractions) of the runs of `folder` with this algo, gamma
    and group size at `step`, read here from each run's overrides and eval/step_*.json."""
    out = {}
    for run in folder.iterdir():
        over = run / ".hydra" / "overrides.yaml"
        if not over.is_file():
            continue
        given = {"algo": "grpo", **dict(o.split("=", 1) for o in yaml.safe_load(over.read_text()))}
        if (given["algo"], float(given["focal.gamma"]), int(given["train.group_size"])) != (
            algo, gamma, n,
        ):  # fmt: skip
            continue
        ev = json.loads((run / "eval" / f"step_{step:07d}.json").read_text())
        q = np.array(ev["id"]["per_maze"]["exact_p"])
        out[int(given["seed"])] = 1 - (1 - q) ** k
    return out


@pytest.mark.parametrize(
    ("sweep", "claim", "a", "b", "n", "step", "k"),
    [
        ("maze_long", "n32-gamma1-grpo", ("maze_long", "grpo", 1.0), ("maze_long", "grpo", 0.0),
         32, 20000, 1),
        ("maze_group_sweep", "n64-gamma1-grpo-at256", ("maze_group_sweep", "grpo", 1.0),
         ("maze_group_sweep", "grpo", 0.0), 64, 3000, 256),
        ("rare_routes", "n16-gamma05-grpo", ("rare_routes", "grpo", 0.5),
         ("rare_routes", "grpo", 0.0), 16, 3000, 1),
        ("methods", "n32-maxrl-grpo", ("methods", "maxrl", 0.0), ("maze_long", "grpo", 0.0),
         32, 15000, 1),  # GRPO: maze_long's runs read at step 15,000
        ("methods", "n8-maxrl-passk-at256", ("methods", "maxrl", 0.0), ("methods", "passk", 0.0),
         8, 15000, 256),
    ],
)  # fmt: skip
def test_earlier_studies_claims_recompute_from_the_per_maze_files(sweep, claim, a, b, n, step, k):
    row = next(r for r in read_claims_csv(RUNS / sweep / "claims.csv") if r["claim"] == claim)
    by_a = per_seed(RUNS / a[0], *a[1:], n, step, k)
    by_b = per_seed(RUNS / b[0], *b[1:], n, step, k)
    assert sorted(by_a) == sorted(by_b) == [0, 1, 2] and row["units"] == "3 seeds"
    d = np.stack([by_a[s] - by_b[s] for s in (0, 1, 2)])  # [3, M]
    diff = paired_difference(d)
    lo, hi = diff.interval()
    assert float(row["estimate"]) == pytest.approx(100 * d.mean(), abs=6e-4)
    assert (float(row["lo"]), float(row["hi"])) == pytest.approx((100 * lo, 100 * hi), abs=6e-4)
    assert float(row["df"]) == pytest.approx(diff.df, abs=0.05)
    assert float(row["p"]) == pytest.approx(
        2 * stats.t.sf(abs(diff.mean / diff.se), diff.df), rel=2e-3
    )
    means = 100 * d.mean(1)  # 3 units: the t over the seeds' means on 2 df
    assert float(row["p_units"]) == pytest.approx(stats.ttest_1samp(means, 0).pvalue, rel=2e-3)
    if row["reference_kind"] == "single run":
        lo, hi = one_run_interval(100 * d, 256)
        assert float(row["pi_lo"]) == pytest.approx(min(lo, 100 * diff.interval()[0]), abs=6e-4)


def test_maze_long_s_gamma_1_gain_is_the_write_up_s_old_number_and_not_shown():
    """maze-long.md quoted +16.8 [+1.3, +32.4] at N = 32 before the rule (the interval above
    zero); Holm over the four pass@1 claims, on the larger of p and p over the 3 seeds' means,
    gives not shown."""
    rows = {r["claim"]: r for r in read_claims_csv(RUNS / "maze_long" / "claims.csv")}
    row = rows["n32-gamma1-grpo"]
    assert [round(float(row[c]), 1) for c in ("estimate", "lo", "hi")] == [16.8, 1.3, 32.4]
    paper = sorted(max(float(r["p"]), float(r["p_units"])) for r in rows.values()
                   if r["family"] == "paper")  # fmt: skip
    rule = max(float(row["p"]), float(row["p_units"]))
    assert paper.index(rule) == 0  # the smallest of four: times 4
    assert float(row["p_adjusted"]) == pytest.approx(4 * rule, rel=2e-3)
    assert row["direction"] == "not shown"


def test_a_claim_reads_several_sweeps_and_selects_by_experiment(tmp_path: Path):
    """`sweep:` a list of folders beside the summarized one, read together; `experiment:`
    picks one of two runs of a seed; without it, two runs of one seed is an error."""
    main, other = tmp_path / "main", tmp_path / "other"
    for seed, g in enumerate(GAINS):
        fake_run(main, "new", seed, 8, np.add(GRPO_P, g))
        fake_run(other, "grpo", seed, 8, GRPO_P)
        fake_run(main, "grpo", seed, 8, [0.0] * 4)  # the same seeds, another experiment
    for run in [*main.iterdir(), *other.iterdir()]:
        hydra = run / ".hydra" / "hydra.yaml"
        spec = yaml.safe_load(hydra.read_text())
        spec["hydra"]["runtime"]["choices"]["experiment"] = run.parent.name
        hydra.write_text(yaml.safe_dump(spec))
    spec = {
        **CLAIMS,
        "methods": {"GRPO": {"method": "grpo", "experiment": "other"}, "New": {"method": "new"}},
        "defaults": {**CLAIMS["defaults"], "sweep": ["main", "other"]},
        "claims": [CLAIMS["claims"][0]],
    }
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    (main / "study.yaml").write_text("claims: ../claims.yaml\n")
    out = tmp_path / "out"
    out.mkdir()
    (gain,) = summarize_claims(main, out)
    assert float(gain["estimate"]) == pytest.approx(10.0, abs=1e-3)  # seed means 15, 5, 10
    spec["methods"]["GRPO"] = {"method": "grpo"}
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(UserError, match="GRPO selects two runs of seed 0"):
        summarize_claims(main, out)


# --- the write-ups ------------------------------------------------------------------------


WRITE_UPS = sorted(FILL.WRITE_UPS.items())


@pytest.mark.parametrize(("doc", "claims"), WRITE_UPS, ids=lambda p: str(p))
def test_each_write_up_s_blocks_match_its_claims_and_show_every_claim(doc, claims):
    text = (ROOT / doc).read_text()
    if not (ROOT / claims).exists():  # a study declared, no run finished: empty blocks
        assert RUNS / Path(claims).parent.name not in RAN
        assert [m["body"] for m in BLOCK.finditer(text)] == [""] * len(BLOCK.findall(text))
        return
    rows = read_claims_csv(ROOT / claims)
    assert fill_blocks(text, rows) == text, (
        f"{doc}'s claims blocks differ from {claims}: python experiments/fill_claims.py"
    )
    blocks = "".join(m["body"] for m in BLOCK.finditer(text))
    missing = [r["claim"] for r in rows if f"`{r['claim']}`" not in blocks
               and f"| {r['claim']} |" not in blocks]  # fmt: skip
    assert not missing, f"{doc} shows no generated verdict for {missing}"


def test_every_study_with_claims_has_a_write_up():
    """Every study with a finished run has a write-up; a write-up may come before its study's
    first finished run (its blocks then empty), never for a study without claims."""
    written = sorted(RUNS / p.parent.name for p in FILL.WRITE_UPS.values())
    assert set(RAN) <= set(written) <= set(STUDIES)


@pytest.mark.parametrize(("doc", "sources"), sorted(FILL.EXAMPLES.items()), ids=str)
def test_the_worked_examples_match_their_claims(doc, sources):
    """docs/concepts/verdicts.md's examples name claims of several studies (`study/claim-id`)."""
    text = (ROOT / doc).read_text()
    assert BLOCK.search(text)
    assert fill_blocks(text, FILL.qualified_rows(sources)) == text, (
        f"{doc}'s claims blocks differ from {sources}: python experiments/fill_claims.py"
    )


@pytest.mark.parametrize(("doc", "claims"), WRITE_UPS, ids=lambda p: str(p))
def test_a_write_up_whose_verdict_disagrees_with_its_claims_fails(doc, claims):
    """Flip one generated verdict in the committed write-up: the check above sees it."""
    if not (ROOT / claims).exists():
        pytest.skip(f"{claims}: no finished run yet")
    text = (ROOT / doc).read_text()
    words = ("not shown", "supported", "contradicted", TOO_FEW)
    first = next(m for m in BLOCK.finditer(text) if any(w in m["body"] for w in words))
    body = first["body"]
    word = next(w for w in words if w in body)
    flipped = body.replace(word, "supported" if word == "contradicted" else "contradicted", 1)
    tampered = text[: first.start("body")] + flipped + text[first.end("body") :]
    assert tampered != text
    assert fill_blocks(tampered, read_claims_csv(ROOT / claims)) == text


@pytest.mark.parametrize("doc", sorted(FILL.WRITE_UPS), ids=str)
def test_each_write_up_s_run_counts_and_summary_copies_match_the_committed_files(doc):
    """A write-up's `runs:` blocks (how many runs finished) and `summary:` blocks (a section of
    a committed summary.md) equal what experiments/fill_claims.py writes from the files."""
    text = (ROOT / doc).read_text()
    assert FILL.fill_summary(FILL.fill_runs(text)) == text, (
        f"{doc}'s runs or summary blocks differ from the committed files: "
        "python experiments/fill_claims.py"
    )


def test_run_counts_of_a_study_part_way_through(tmp_path: Path):
    """A launch of 3 algos x 2 cells x 13 seeds (its multirun.yaml: 78 runs); 3 finished:
    New at N = 8 seeds 0 and 1, GRPO at N = 8 seed 0; one started, not finished."""
    from mazerl.analysis.runs import launched_runs, progress_lines

    sweep = tmp_path / "sweep"
    for method, seed in [("new", 0), ("new", 1), ("grpo", 0), ("grpo", 1)]:
        config = fake_run(sweep, method, seed, 8, GRPO_P) / ".hydra" / "config.yaml"
        config.write_text(yaml.safe_dump(yaml.safe_load(config.read_text()) | {
            "algo": {"name": method, "label": method.upper()}}))  # fmt: skip
    started = sweep / "grpo_N8_s1"
    (started / "metrics.json").unlink()
    assert launched_runs(sweep) is None
    assert progress_lines(sweep)[0] == "`sweep`: **3 runs finished** (no multirun.yaml)."
    sweeper = {"params": {"cell": "n32,n8", "seed": "range(0,13)"}}
    multirun = {"hydra": {"overrides": {"task": ["x=1", "algo=a,b,c"]}, "sweeper": sweeper}}
    (sweep / "multirun.yaml").write_text(yaml.safe_dump(multirun))
    assert launched_runs(sweep) == 3 * 2 * 13
    lines = progress_lines(sweep)
    assert lines[0] == "`sweep`: **3 runs finished** of the 78 runs its launch asked for."
    assert lines[2:] == ["| method | N = 8 |", "|---|---|", "| GRPO | 1 |", "| NEW | 2 |"]


def test_a_summary_block_copies_one_section(tmp_path: Path):
    summary = tmp_path / "summary.md"
    summary.write_text(
        "# S\n\n## Other\n\nno\n\n## Beside X (percent)\n\n### a\n\n| 1 |\n\n## Next\n"
    )
    assert FILL.summary_section(summary, "Beside X") == ["", "### a", "", "| 1 |", ""]
    assert FILL.summary_section(summary, "Missing") == []
    assert FILL.summary_section(tmp_path / "none.md", "Beside X") == []


# --- README's findings ----------------------------------------------------------------------


def test_findings_rows_carry_the_decisive_claims_verdicts_and_numbers():
    lines = FILL.findings_rows(committed())
    assert lines[0] == "| the paper's claim | at N = 32 | at N = 8 |"
    table = [line for line in lines if line.startswith("| [")]
    assert len(table) == len(FILL.FINDINGS)
    gamma05 = table[0]
    # issue 51: +3.3 [+1.0, +5.5]; its p 0.0076 is the 5th smallest of the paper family's
    # nine, so Holm multiplies it by 5: 0.038 < 0.05, the sign the claim expects
    assert "(paper: +10.6, +11.2)" in gamma05
    assert "direction **supported**, magnitude **uninformative**: F-GRPO gamma 0.5 - GRPO +3.3" in (
        gamma05
    )
    assert "AdamW's zero-gradient steps skipped: direction **not shown**" in gamma05
    maxrl = next(line for line in table if line.startswith("| [MaxRL"))
    # issue 51: N = 32 MaxRL >= PKPO, p 0.017 -> 0.067 after Holm: not shown; N = 8: negative
    # with Holm p 0.0005: against the claim
    assert "(MaxRL's table) | direction **not shown**: MaxRL - PKPO +3.7" in maxrl
    assert "direction **contradicted**: MaxRL - PKPO -9.1 [-12.9, -5.3]" in maxrl
    assert lines[-1].startswith("Magnitude compares settings that differ. The reference's: F-GRPO")


def test_fill_findings_rewrites_only_between_its_markers():
    rows = committed()
    stale = (
        "intro\n<!-- findings:start decisive -->\n| old | Refuted |\n<!-- findings:end -->\n"
        "mid\n<!-- findings:start other -->\nold\n<!-- findings:end -->\nrest\n"
    )
    studies = []

    def lines_of(study: str) -> list[str]:
        studies.append(study)
        return FILL.findings_rows(rows) if study == "decisive" else ["new"]

    out = FILL.fill_findings(stale, lines_of)
    assert studies == ["decisive", "other"]
    assert "Refuted" not in out and out.startswith("intro\n") and out.endswith("rest\n")
    decisive = "\n".join(FILL.findings_rows(rows)) + "\n"
    assert out == stale.replace("| old | Refuted |\n", decisive).replace("\nold\n", "\nnew\n")
    assert FILL.fill_findings("no markers\n", lines_of) == "no markers\n"
    with pytest.raises(SystemExit, match="no findings table for study 'other'"):
        FILL.fill_findings(stale)


def test_rare_findings_wait_for_every_run_then_give_each_claim_with_its_sense():
    """The leaderboard_rare block: while runs are missing one line says how many; with all in,
    a row per method, each cell its three claims (the sense each expects, its direction and
    numbers) at that N, read from claims.csv."""
    rows = read_claims_csv(RUNS / "leaderboard_rare" / "claims.csv")
    (waiting,) = FILL.rare_findings_rows(rows, 15, 78, "before the runs")
    assert "(claims declared before the runs): 15 of 78 runs finished;" in waiting
    fake = [
        r | {"direction": "contradicted", "estimate": "-2.3", "lo": "-4.5", "hi": "-0.1"}
        if r["claim"] == "n8-unlikely-grpo-at256"
        else r
        for r in rows
    ]
    lines = FILL.rare_findings_rows(fake, 78, 78, "")
    assert lines[0].startswith("| leaderboard_rare (")
    assert "claims.md does not date the claims): exact id, a - b in points" in lines[0]
    table = [line for line in lines if line.startswith("| [")]
    assert [line.split("]")[0] for line in table] == [
        "| [SELF",
        "| [Differential Smoothing",
        "| [Unlikeliness reward",
    ]
    unlikely_n8 = table[2].split(" | ")[2]
    assert unlikely_n8.startswith("pass@1 < GRPO: **")  # its claim expects less at pass@1
    assert "pass@256 > GRPO: **contradicted**, -2.3 [-4.5, -0.1]" in unlikely_n8
    dropped = [r for r in rows if r["claim"] not in ("n8-self-maxrl", "n32-unlikely-grpo")]
    with pytest.raises(SystemExit, match=r"lacks the claims .*: n8-self-maxrl, n32-unlikely-grpo$"):
        FILL.rare_findings_rows(dropped, 78, 78, "")


def test_readme_s_findings_match_the_studies_claims():
    text = (ROOT / FILL.README).read_text()
    assert "<!-- findings:start decisive -->" in text
    assert "<!-- findings:start leaderboard_rare -->" in text
    assert FILL.fill_findings(text) == text, (
        "README's findings differ from the studies' claims.csv: python experiments/fill_claims.py"
    )


def test_fill_blocks_rewrites_a_stale_block():
    row = dict.fromkeys(COLUMNS, "") | {
        "claim": "x", "family": "f", "a": "A", "b": "B", "expect": "greater", "n": "8",
        "set": "id", "metric": "exact_pass", "k": "1", "step": "100", "units": "3 seeds",
        "estimate": "3.263", "lo": "1.039", "hi": "5.487", "df": "12.3", "p": "0.00758",
        "p_units": "0.02", "p_adjusted": "0.0379", "p_adjusted_study": "0.0379",
        "pi_lo": "-5.029", "pi_hi": "11.555", "reference": "10.600",
        "reference_kind": "single run", "reference_mazes": "256",
        "reference_setting": "theirs", "setting": "ours", "direction": "supported",
        "magnitude": "uninformative",
    }  # fmt: skip
    flat = dict.fromkeys(COLUMNS, "") | {
        "claim": "x-flat", "a": "A", "b": "B", "n": "8", "set": "id", "metric": "exact_pass",
        "k": "1", "step": "100", "units": "3 seeds", "margin": "0.500", "slope": "0.300",
        "slope_lo": "0.052", "slope_hi": "0.548", "convergence": "still rising",
    }  # fmt: skip
    rows = [row, flat]
    stale = "before\n<!-- claims:start bullets x x-* -->\n- refuted\n<!-- claims:end -->\nafter\n"
    out = fill_blocks(stale, rows)
    assert "refuted" not in out and out.startswith("before\n") and out.endswith("after\n")
    assert (
        "- `x`, A - B (N = 8, exact id pass@1, step 100, 3 seeds; expects a - b greater than 0): "
        "**+3.3 [+1.0, +5.5]** (12.3 df), p = 0.0076, over the units 0.020, Holm-adjusted 0.038 "
        "(f family): direction **supported**" in out
    )
    assert "one run [-5.0, +11.6]: **uninformative**" in out
    assert "Magnitude compares settings that differ. The reference's: theirs. Ours: ours." in out
    assert "**+0.3 [+0.1, +0.5]** points per 1,000 steps, margin ±0.5: **still rising**" in out
    assert fill_blocks(out, rows) == out
    table = fill_blocks("<!-- claims:start table x x-flat -->\n<!-- claims:end -->", rows)
    assert "| supported | uninformative |" in table and "| ±0.5 | still rising |" in table
    with pytest.raises(UserError, match="'y' is no claim id or family"):
        fill_blocks("<!-- claims:start table y -->\n<!-- claims:end -->", rows)


def test_summarize_claims_only_writes_the_two_files(sweep: Path, tmp_path: Path, capsys):
    from mazerl.apps.summarize import main

    out = tmp_path / "only"
    main([str(sweep), "--claims-only", "--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["claims.csv", "claims.md"]
    assert [r["claim"] for r in read_claims_csv(out / "claims.csv")] == ["gain", "over-base"]
    (sweep / "study.yaml").write_text("sections: []\n")
    with pytest.raises(SystemExit) as e:
        main([str(sweep), "--claims-only", "--out", str(out)])
    assert e.value.code == 2
    assert "its study.yaml names no claims file" in capsys.readouterr().err


def test_a_partner_study_s_runs_do_not_date_the_claims(tmp_path):
    """Only the study's own sweeps (and arms without a study of their own) date its claims:
    the decisive study's runs, paired with a leaderboard entry's, were declared for decisive."""
    from mazerl.analysis.claims import own_folders

    ours, theirs = tmp_path / "ours.yaml", tmp_path / "theirs.yaml"
    for f in (ours, theirs):
        f.write_text("methods: {}\nclaims: []\n")
    folders = {name: tmp_path / name for name in ("entry", "decisive", "arm")}
    for folder in folders.values():
        folder.mkdir()
    (folders["entry"] / "study.yaml").write_text("claims: ../ours.yaml\n")
    (folders["decisive"] / "study.yaml").write_text("claims: ../theirs.yaml\n")
    own = own_folders(ours, set(folders.values()))
    assert own == {folders["entry"].resolve(), folders["arm"].resolve()}
    assert own_folders(theirs, set(folders.values())) == {
        folders["decisive"].resolve(),
        folders["arm"].resolve(),
    }
