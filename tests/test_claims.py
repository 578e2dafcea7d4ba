"""Claims as data (mazerl.analysis.claims): a claims file read and judged on a fabricated
sweep against hand computations; every study's committed claims.csv checked against its
claims file, the verdict rule and the paper's table, and claims recomputed here from the
per-maze files; every write-up's generated blocks against its committed claims.csv
(experiments/fill_claims.py's WRITE_UPS), and README's findings rows."""

import csv
import itertools
import json
import math
import re
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
    study_claims,
    summarize_claims,
)
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import load_module
from mazerl.analysis.verdicts import ALPHA
from mazerl.core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "experiments" / "runs"
DECISIVE = RUNS / "decisive"
CLAIMS_YAML = ROOT / "experiments" / "studies" / "decisive" / "claims.yaml"
WRITE_UP = ROOT / "docs" / "results" / "decisive.md"
table4_gain = load_module(ROOT / "experiments" / "studies" / "paper" / "sections.py").table4_gain
STUDIES = sorted(p.parent for p in RUNS.glob("*/study.yaml") if study_claims(p.parent))
FILL = load_module(ROOT / "experiments" / "fill_claims.py")  # experiments/ is no package


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


@pytest.mark.parametrize("sweep", STUDIES, ids=lambda p: p.name)
def test_the_committed_claims_are_the_claims_file_s_and_follow_the_rule(sweep: Path):
    rows = read_claims_csv(sweep / "claims.csv")
    path = study_claims(sweep)
    spec = yaml.safe_load(path.read_text())
    assert [r["claim"] for r in rows] == [c["id"] for c in spec["claims"]]
    with open(sweep / "claims.csv", newline="") as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    assert path == ROOT / "experiments" / "studies" / sweep.name / "claims.yaml"
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
        assert fam[0][1] == pytest.approx(min(1.0, len(fam) * fam[0][0]), rel=2e-3)  # Holm's 1st


@pytest.mark.parametrize("sweep", STUDIES, ids=lambda p: p.name)
def test_each_claims_file_says_when_it_was_declared(sweep: Path):
    """The header and `declared:` say whether the claims came before or after the runs, with a
    date and a commit."""
    text = study_claims(sweep).read_text()
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    assert re.search(r"DECLARED (AFTER|BEFORE) THE RUNS \(2026-\d\d-\d\d", header)
    assert re.search(r"\b[0-9a-f]{7}\b", header), "the header names no commit"
    declared = yaml.safe_load(text)["declared"]
    assert re.search(r"(after|before) the runs, on 2026-\d\d-\d\d", declared)


@pytest.mark.parametrize("sweep", STUDIES, ids=lambda p: p.name)
def test_the_references_are_the_paper_s_table_4_gains(sweep: Path):
    spec = yaml.safe_load(study_claims(sweep).read_text())
    preset_gamma = {"fgrpo05": 0.5, "fgrpo1": 1.0}
    for c in spec["claims"]:
        if "reference" in c:
            sel = spec["methods"][c["a"]]
            gamma = sel["gamma"] if "gamma" in sel else preset_gamma[sel["method"]]
            assert c["b"] == "GRPO" and c["reference_kind"] == "single run"
            k = c.get("k", spec["defaults"]["k"])
            assert c["reference"] == table4_gain(c["n"], gamma, k)


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
        ("methods", "n8-passk-maxrl-at256", ("methods", "passk", 0.0), ("methods", "maxrl", 0.0),
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
    if row["reference_kind"] == "single run":
        per_unit = 100 * d.mean(1)
        half = stats.t.ppf(0.975, 2) * per_unit.std(ddof=1) * math.sqrt(4 / 3)
        assert float(row["pi_lo"]) == pytest.approx(per_unit.mean() - half, abs=6e-4)


def test_maze_long_s_gamma_1_gain_is_the_write_up_s_old_number_and_no_longer_shown():
    """maze-long.md quoted +16.8 [+1.3, +32.4] at N = 32 before the rule (a gain, the interval
    excluding zero); Holm over the four pass@1 claims makes it not shown."""
    rows = {r["claim"]: r for r in read_claims_csv(RUNS / "maze_long" / "claims.csv")}
    row = rows["n32-gamma1-grpo"]
    assert [round(float(row[c]), 1) for c in ("estimate", "lo", "hi")] == [16.8, 1.3, 32.4]
    paper = sorted(float(r["p"]) for r in rows.values() if r["family"] == "paper")
    assert paper.index(float(row["p"])) == 0  # the smallest of four: times 4
    assert float(row["p_adjusted"]) == pytest.approx(4 * float(row["p"]), rel=2e-3)
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
    rows = read_claims_csv(ROOT / claims)
    assert fill_blocks(text, rows) == text, (
        f"{doc}'s claims blocks differ from {claims}: python experiments/fill_claims.py"
    )
    blocks = "".join(m["body"] for m in BLOCK.finditer(text))
    missing = [r["claim"] for r in rows if f"`{r['claim']}`" not in blocks
               and f"| {r['claim']} |" not in blocks]  # fmt: skip
    assert not missing, f"{doc} shows no generated verdict for {missing}"


def test_every_study_with_claims_has_a_write_up():
    assert sorted(RUNS / p.parent.name for p in FILL.WRITE_UPS.values()) == STUDIES


@pytest.mark.parametrize(("doc", "claims"), WRITE_UPS, ids=lambda p: str(p))
def test_a_write_up_whose_verdict_disagrees_with_its_claims_fails(doc, claims):
    """Flip one generated verdict in the committed write-up: the check above sees it."""
    text = (ROOT / doc).read_text()
    first = next(BLOCK.finditer(text))
    body = first["body"]
    flipped = (
        body.replace("not shown", "SHOWN", 1)
        if "not shown" in body
        else body.replace("shown", "not shown", 1)
    )
    tampered = text[: first.start("body")] + flipped + text[first.end("body") :]
    assert tampered != text
    assert fill_blocks(tampered, read_claims_csv(ROOT / claims)) == text


# --- README's findings ----------------------------------------------------------------------


def test_findings_rows_carry_the_decisive_claims_verdicts_and_numbers():
    lines = FILL.findings_rows(committed())
    assert lines[0] == "| the paper's claim | at N = 32 | at N = 8 |"
    assert len(lines) == 2 + len(FILL.FINDINGS)
    gamma05 = lines[2]
    # issue 51: +3.3 [+1.0, +5.5], one run [-5.0, +11.6]; its p 0.0076 is the 5th smallest of
    # the paper family's nine, so Holm multiplies it by 5: 0.038 < 0.05, shown
    assert "(paper: +10.6, +11.2)" in gamma05
    assert (
        "direction **shown**, magnitude **consistent**: F-GRPO gamma 0.5 - GRPO +3.3 "
        "[+1.0, +5.5], one run [-5.0, +11.6]" in gamma05
    )
    assert "AdamW's zero-gradient steps skipped: direction **not shown**" in gamma05
    maxrl = next(line for line in lines if line.startswith("| [MaxRL"))
    # issue 51: N = 32 MaxRL >= PKPO, p 0.017 -> 0.067 after Holm: not shown
    assert "(MaxRL's table) | direction **not shown**: MaxRL - PKPO +3.7" in maxrl


def test_fill_findings_rewrites_only_between_its_markers():
    rows = committed()
    stale = "intro\n<!-- findings:start -->\n| old | Refuted |\n<!-- findings:end -->\nrest\n"
    out = FILL.fill_findings(stale, rows)
    assert "Refuted" not in out and out.startswith("intro\n") and out.endswith("rest\n")
    assert out == stale.replace("| old | Refuted |\n", "\n".join(FILL.findings_rows(rows)) + "\n")
    assert FILL.fill_findings("no markers\n", rows) == "no markers\n"


def test_readme_s_findings_match_the_decisive_claims_where_it_has_them():
    text = (ROOT / FILL.README).read_text()
    if "<!-- findings:start -->" not in text:
        pytest.skip("README has no findings markers on this branch")
    assert FILL.fill_findings(text, committed()) == text, (
        "README's findings differ from experiments/runs/decisive/claims.csv: "
        "python experiments/fill_claims.py"
    )


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
