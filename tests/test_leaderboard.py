"""The methods leaderboard (mazerl.analysis.leaderboard) on tiny fabricated sweeps, against
hand computations, and the braid-maze preset beside it."""

import csv
import json
import math
import shutil

import matplotlib.pyplot as plt
import pytest
import yaml
from conftest import ROOT
from test_paired import fake_run

from mazerl.analysis import find_runs, summarize
from mazerl.analysis.leaderboard import board_rows, draw_frontier, frontier_points, measure
from mazerl.analysis.runs import at_step, evaluations, method_name
from mazerl.analysis.study import load_module
from mazerl.analysis.tables import aggregate
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import Metric

T2 = 4.302652729749462  # t(0.975) on 2 degrees of freedom
T1 = 12.706204736174694  # on 1
GRPO = {0: [0.2, 0.4], 1: [0.3, 0.3], 2: [0.1, 0.5]}  # exact p per seed and maze; pass@1 0.3
SHIFT = {"grpo": {0: 0.0, 1: 0.0, 2: 0.0}, "maxrl": {0: 0.1, 1: 0.2, 2: 0.3},
         "pkpo": {0: 0.05, 1: 0.05, 2: 0.05}}  # fmt: skip
BASE = {0: 0.1, 1: 0.2, 2: 0.3}  # the base model's every exact pass@k, per seed


def board_sweep(root, algos=("grpo", "maxrl", "pkpo"), seeds=(0, 1, 2), rise=None, grid=None):
    """Each algo at N = 8, gamma 0: GRPO's p shifted by the algo's per-seed SHIFT on every maze,
    flat over training (pkpo still rising where `rise`), the base model's values by seed;
    `grid`: a hydra.yaml declaring that sweep."""
    for algo in algos:
        for seed in seeds:
            p = [x + SHIFT[algo][seed] for x in GRPO[seed]]
            overrides = [f"algo={algo}", "focal.gamma=0", f"seed={seed}", "train.group_size=8"]
            run = fake_run(
                root, f"{algo}_N8_g0_s{seed}", overrides, p, tb=False,
                rise=rise if algo == "pkpo" and rise else 0.0,
            )  # fmt: skip
            metrics = json.loads((run / "metrics.json").read_text())
            metrics["base"] = {k: BASE[seed] for k in metrics["base"]}
            (run / "metrics.json").write_text(json.dumps(metrics))
            if grid:
                hydra = {"hydra": {"sweeper": {"params": grid}}}
                (run / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump(hydra))
    return root


def section(table: str, title: str) -> list[str]:
    return table.split(title)[1].split("\n#")[0].splitlines()


def line(lines: list[str], start: str) -> list[str]:
    return next(x for x in lines if x.startswith(start)).split(" | ")


def test_leaderboard_rows_and_paired_differences_by_hand(tmp_path):
    sweep = board_sweep(tmp_path / "sweep", rise=1e-5)
    table = summarize(sweep)
    rows = [x for x in section(table, "### Leaderboard, id") if x.startswith("| 8 |")]
    # sorted by pass@1: MaxRL 0.3 + 0.2, PKPO 0.3 + 0.05, GRPO 0.3, the base model 0.2
    assert [r.split(" | ")[1] for r in rows] == ["MaxRL", "PKPO", "GRPO", "base model"]
    maxrl = rows[0].split(" | ")
    # exact pass@256 = 1 - (1 - p)^256 = 1 to 1e-11 at every p >= 0.1
    assert maxrl[2:6] == ["3", "50.0", "100.0", "100.0"]
    # MaxRL - GRPO per seed 0.1, 0.2, 0.3 on both mazes: the paired t over seeds, mean 0.2,
    # sd 0.1, se 0.1 / sqrt(3); the interval includes 0 and sets the bound
    half = 100 * T2 * 0.1 / math.sqrt(3)
    assert maxrl[6] == f"+20.0 [{20 - half:+.1f}, {20 + half:+.1f}]"
    assert maxrl[8].startswith(f"pass@1: no gain shown: < {20 + half:+.1f}; pass@256: ")
    assert maxrl[9] == "no |"  # not still moving: flat, as GRPO and their difference
    pkpo = line(rows, "| 8 | PKPO")
    assert pkpo[6] == "+5.0 [+5.0, +5.0]" and pkpo[8].startswith("pass@1: gain +5.0 to +5.0")
    assert pkpo[9] == "yes |"  # still moving: rising 1e-5 per step, 1 point per 1,000 steps
    assert line(rows, "| 8 | GRPO")[6:10] == ["reference", "reference", "", "no |"]
    base = line(rows, "| 8 | base model")
    assert base[2:4] == ["3", "20.0"]  # one base model per seed: (10 + 20 + 30) / 3
    assert "4 intervals in this table" in table.split("### Leaderboard, id")[1]
    with open(sweep / "leaderboard.csv", newline="") as fh:
        by_key = {(r["method"], r["metric"]): r for r in csv.DictReader(fh)}
    row = by_key[("MaxRL", "eval/id/exact_pass@1")]
    assert float(row["mean"]) == pytest.approx(0.5) and row["seeds"] == "3"
    assert float(row["diff_vs_grpo"]) == pytest.approx(0.2)
    assert float(row["diff_hi"]) == pytest.approx(0.2 + T2 * 0.1 / math.sqrt(3))
    assert (row["paired_seeds"], row["mazes"], row["still_moving"]) == ("3", "2", "no")
    assert by_key[("PKPO", "eval/id/exact_pass@256")]["still_moving"] == "yes"  # per set
    assert by_key[("base model", "eval/id/exact_pass@1")]["still_moving"] == ""  # no slope screen


def test_focal_variants_are_compared_with_grpo_at_gamma_0(tmp_path):
    sweep = board_sweep(tmp_path / "sweep")
    for algo, gamma, shift in (("grpo", 0.5, 0.3), ("maxrl", 0.5, 0.1), ("grpo", 1.0, 0.2)):
        for seed in (0, 1, 2):  # F-GRPO at 0.5 and 1.0, MaxRL + focal
            overrides = [f"algo={algo}", f"focal.gamma={gamma}", f"seed={seed}",
                         "train.group_size=8"]  # fmt: skip
            p = [x + shift for x in GRPO[seed]]
            fake_run(sweep, f"{algo}_N8_g{gamma}_s{seed}", overrides, p, tb=False, rise=0.0)
    rows = section(summarize(sweep), "### Leaderboard, id")
    # +10 points over GRPO at gamma 0 on every seed and maze (-20 against F-GRPO)
    assert line(rows, "| 8 | MaxRL + focal γ 0.5")[6] == "+10.0 [+10.0, +10.0]"
    assert line(rows, "| 8 | F-GRPO γ 0.5")[6] == "+30.0 [+30.0, +30.0]"
    runs = find_runs(sweep)
    rows = measure(board_rows(runs), aggregate(runs)[0])
    points = frontier_points(
        rows, Metric.of("eval/id/exact_pass@256"), Metric.of("eval/id/exact_pass@1")
    )
    fig, axes = draw_frontier(points, "pass@256", "pass@1")
    colour = {c.get_label(): c.lines[0].get_color() for c in axes[0][0].containers}
    face = {c.get_label(): c.lines[0].get_markerfacecolor() for c in axes[0][0].containers}
    assert colour["MaxRL + focal γ 0.5"] == colour["MaxRL"] != colour["F-GRPO γ 0.5"]
    assert face["MaxRL + focal γ 0.5"] == "none" and face["MaxRL"] == colour["MaxRL"]
    shape = {c.get_label(): c.lines[0].get_marker() for c in axes[0][0].containers}
    assert shape["MaxRL"] == "o" and shape["F-GRPO γ 0.5"] == shape["MaxRL + focal γ 0.5"] == "D"
    assert shape["F-GRPO γ 1"] == "v" and colour["F-GRPO γ 1"] == colour["F-GRPO γ 0.5"]
    plt.close(fig)


def test_a_partial_sweep_shows_what_finished_and_names_what_is_missing(tmp_path):
    grid = {"algo": "grpo,maxrl,pkpo", "focal.gamma": 0, "seed": "0,1,2",
            "train.group_size": "8,32"}  # fmt: skip
    sweep = board_sweep(tmp_path / "sweep", grid=grid)
    (sweep / "maxrl_N8_g0_s2" / "metrics.json").unlink()  # still running
    shutil.rmtree(sweep / "pkpo_N8_g0_s1")  # never started
    table = summarize(sweep)
    rows = section(table, "### Leaderboard, id")
    # MaxRL on seeds 0 and 1: differences 0.1, 0.2; mean 0.15, se 0.05 on 1 df
    maxrl = line(rows, "| 8 | MaxRL")
    assert maxrl[2:4] == ["2", "45.0"]  # (0.3 + 0.1 + 0.3 + 0.2) / 2
    assert maxrl[6] == f"+15.0 [{15 - 100 * T1 * 0.05:+.1f}, {15 + 100 * T1 * 0.05:+.1f}]"
    missing = table.split("Not on the board yet:")[1].split("\n\n#")[0]
    assert missing.startswith(" 11 runs (the sweep declares 18:")
    assert "- N = 8, MaxRL: seed 2 unfinished (no checkpoint)" in missing
    assert "- N = 8, PKPO: seed 1 not started" in missing
    assert "- N = 32: none of its 9 runs finished (0 started)" in missing


def test_methods_without_a_grpo_partner_say_so(tmp_path):
    sweep = board_sweep(tmp_path / "sweep", seeds=(0, 1))
    (sweep / "grpo_N8_g0_s1" / "metrics.json").unlink()
    rows = section(summarize(sweep), "### Leaderboard, id")
    maxrl = line(rows, "| 8 | MaxRL")  # paired on seed 0 only: shift 0.1, no interval
    assert maxrl[2] == "2 (1 paired)" and maxrl[6:9] == [
        "+10.0 (n/a)", "+0.0 (n/a)", "one paired seed: no interval"
    ]  # fmt: skip
    (sweep / "grpo_N8_g0_s0" / "metrics.json").unlink()
    rows = section(summarize(sweep), "### Leaderboard, id")
    assert line(rows, "| 8 | MaxRL")[6:9] == ["-", "-", "no GRPO run of its seeds finished"]


def test_only_sweeps_of_three_or_more_methods_get_a_leaderboard(tmp_path):
    sweep = board_sweep(tmp_path / "two", algos=("grpo", "maxrl"))
    table = summarize(sweep)
    assert "## Leaderboard" not in table and "## Paired differences" in table
    assert not (sweep / "leaderboard.csv").exists() and not (sweep / "leaderboard.png").exists()


def test_the_frontier_has_one_point_per_method_with_the_paired_crosses(tmp_path):
    sweep = board_sweep(tmp_path / "sweep")
    summarize(sweep)
    assert (sweep / "leaderboard.png").stat().st_size > 10_000
    assert not (sweep / "leaderboard_routes.png").exists()  # no braid mazes
    runs = find_runs(sweep)
    rows = measure(board_rows(runs), aggregate(runs)[0])
    points = frontier_points(
        rows, Metric.of("eval/id/exact_pass@256"), Metric.of("eval/id/exact_pass@1")
    )
    assert list(points) == [8]
    by_name = {p.name: p for p in points[8]}
    assert set(by_name) == {"base model", "GRPO", "MaxRL", "PKPO"}
    assert by_name["MaxRL"].y == pytest.approx(0.5)
    assert by_name["base model"].y == pytest.approx(0.2)
    assert by_name["MaxRL"].dy == pytest.approx(T2 * 0.1 / math.sqrt(3))
    assert math.isnan(by_name["GRPO"].dy)  # the reference: no cross
    fig, axes = draw_frontier(points, "pass@256", "pass@1")
    ax = axes[0][0]
    assert sorted(c.get_label() for c in ax.containers) == ["MaxRL", "PKPO"]  # crosses
    marked = [x.get_label() for x in ax.get_lines() if not x.get_label().startswith("_")]
    assert sorted(marked) == ["GRPO", "base model"]
    plt.close(fig)


def route_run(run, masses, rare_mass):
    """Give a fabricated run braid mazes of 3 routes: `masses[m]` the exact masses of maze m's
    routes at every evaluation, and the final rare-route mass (none forgotten)."""
    for f in (run / "eval").glob("step_*.json"):
        ev = json.loads(f.read_text())
        ev["id"]["per_maze"] |= {"route_mass": masses, "route_valid": [[True] * 3] * len(masses)}
        f.write_text(json.dumps(ev))
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["final"] |= {"routes/id/rare_mass": rare_mass, "routes/id/forgotten": 0.0}
    (run / "metrics.json").write_text(json.dumps(metrics))
    config = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config | {"maze": {"routes": 3}}))


def test_routes_kept_on_braid_mazes_by_hand(tmp_path):
    sweep = board_sweep(tmp_path / "sweep")
    half_seen = 1 - 2 ** (-1 / 256)  # seen in 256 samples with probability 1 - (1 - q)^256 = 1/2
    # GRPO: 1 + 1/2 + 0 = 1.5 routes in 256 samples; MaxRL 2, 2.5, 3 by seed; PKPO as GRPO
    grpo = [[0.5, half_seen, 0.0]] * 2
    maxrl = {0: [[0.5, 0.5, 0.0]] * 2, 1: [[0.5, 0.5, half_seen]] * 2, 2: [[0.5, 0.5, 0.5]] * 2}
    for seed in (0, 1, 2):
        route_run(sweep / f"grpo_N8_g0_s{seed}", grpo, 0.01 * (seed + 1))
        route_run(sweep / f"pkpo_N8_g0_s{seed}", grpo, 0.01 * (seed + 1))
        route_run(sweep / f"maxrl_N8_g0_s{seed}", maxrl[seed], 0.05)
    table = summarize(sweep)
    rows = section(table, "#### id")
    maxrl_row = line(rows, "| 8 | MaxRL")
    assert maxrl_row[3:5] == ["2.50", "5.0"]
    # routes: +0.5, +1.0, +1.5 per seed on both mazes: mean 1, sd 0.5, se 0.5 / sqrt(3)
    h = T2 * 0.5 / math.sqrt(3)
    assert maxrl_row[5] == f"+1.00 [{1 - h:+.2f}, {1 + h:+.2f}]"
    # rare mass 5% against 1, 2, 3%: +4, +3, +2 points, mean 3, sd 1 (by seed only)
    h = T2 * 1 / math.sqrt(3)
    assert maxrl_row[6] == f"+3.0 [{3 - h:+.1f}, {3 + h:+.1f}]"
    assert maxrl_row[7] == f"routes: no gain shown: < {1 + T2 * 0.5 / math.sqrt(3):+.2f} routes; " \
        f"rare mass: gain {3 - h:+.1f} to {3 + h:+.1f} |"  # fmt: skip
    assert line(rows, "| 8 | GRPO")[3:7] == ["1.50", "2.0", "reference", "reference"]
    assert "4 intervals in this table." in table.split("#### id")[1]
    with open(sweep / "leaderboard.csv", newline="") as fh:
        by_key = {(r["method"], r["metric"]): r for r in csv.DictReader(fh)}
    row = by_key[("MaxRL", "routes/id/expected_distinct@256")]
    assert float(row["diff_vs_grpo"]) == pytest.approx(1.0) and row["mazes"] == "2"
    assert by_key[("MaxRL", "routes/id/rare_mass")]["mazes"] == "1"
    # leaderboard_routes.png: pass@1 against the routes kept, the crosses as in the table
    assert (sweep / "leaderboard_routes.png").stat().st_size > 10_000
    runs = find_runs(sweep)
    rows = measure(board_rows(runs), aggregate(runs)[0])
    points = frontier_points(
        rows, Metric.of("routes/id/expected_distinct@256"), Metric.of("eval/id/exact_pass@1")
    )
    by_name = {p.name: p for p in points[8]}
    assert set(by_name) == {"GRPO", "MaxRL", "PKPO"}  # the base model's routes are not kept
    assert (by_name["MaxRL"].x, by_name["GRPO"].x) == pytest.approx((2.5, 1.5))
    assert by_name["MaxRL"].dx == pytest.approx(T2 * 0.5 / math.sqrt(3))


def test_methods_routes_preset_is_rare_routes_for_every_method():
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from mazerl.apps.schema import register_configs, validate

    register_configs()
    preset = yaml.safe_load((CONF_DIR / "experiment" / "methods_routes.yaml").read_text())
    methods = yaml.safe_load((CONF_DIR / "experiment" / "methods.yaml").read_text())
    params = preset["hydra"]["sweeper"]["params"]
    assert params["algo"] == methods["hydra"]["sweeper"]["params"]["algo"]
    assert (params["train.group_size"], params["focal.gamma"], params["seed"]) == (8, 0, "0,1,2")
    job = ["algo=pkpo", "train.group_size=8", "focal.gamma=0", "seed=1"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", ["experiment=methods_routes", *job], return_hydra_config=True)
        rare = compose("config", ["experiment=rare_routes", *job], return_hydra_config=True)
    assert cfg.hydra.sweep.subdir == "pkpo_N8_g0.0_s1"  # as experiment=methods names its jobs
    mine, theirs = OmegaConf.to_container(cfg), OmegaConf.to_container(rare)
    mine.pop("hydra"), theirs.pop("hydra")
    assert mine == theirs  # rare_routes' braid mazes, length and evaluation
    assert cfg.maze.routes == 3 and cfg.train.iterations == 3000
    assert {s.name: s.num_mazes for s in cfg.eval.sets} == {"id": 1024, "ood_large": 512}
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        validate(compose("config", ["experiment=methods_routes", *job]))
    assert method_name("pkpo", 0.0, mine) == "PKPO (k = 4)"
    assert method_name("grpo", 0.5) == "F-GRPO γ 0.5"
    assert method_name("maxrl", 0.5) == "MaxRL + focal γ 0.5"


def test_at_step_reads_every_run_as_it_stood_then(tmp_path):
    sweep = board_sweep(tmp_path / "sweep", rise=0.01)  # PKPO 0.01 lower per step before 20
    run = at_step(next(r for r in find_runs(sweep) if r.path.name == "pkpo_N8_g0_s1"), 10)
    # seed 1: GRPO p (0.3, 0.3) + 0.05 - 0.01 * (20 - 10) = 0.25 on both mazes; base 0.2
    assert run.metrics["final"]["eval/id/exact_pass@1"] == pytest.approx(0.25)
    assert run.metrics["final"]["eval/id/delta_exact_pass@1_vs_base"] == pytest.approx(0.05)
    assert sorted(evaluations(run)) == [5, 10] and run.metrics["iterations"] == 10
    rows = section(summarize(sweep, step=10), "### Leaderboard, id")
    assert line(rows, "| 8 | PKPO")[6] == "-5.0 [-5.0, -5.0]"  # 0.05 - 0.01 * 10
    assert line(rows, "| 8 | MaxRL")[3] == "50.0"  # flat: as at the end
    gone = at_step(run, 12)
    assert gone.metrics is None and gone.problem == "no evaluation at step 12 (last: 10)"
    with pytest.raises(UserError, match="--at-step -1: must be a step >= 0"):
        summarize(sweep, step=-1)


def test_two_folders_holding_one_run_count_it_once(tmp_path):
    """The leaderboard's GRPO runs come from the long study: launched there with `algo` left
    at its default and twice as many steps, read at the leaderboard's length."""
    grid = {"algo": "grpo,maxrl,pkpo", "focal.gamma": 0, "seed": "0,1", "train.group_size": 8}
    board = board_sweep(tmp_path / "board", seeds=(0, 1), grid=grid)
    (board / "pkpo_N8_g0_s1" / "metrics.json").unlink()
    (board / "pkpo_N8_g0_s1" / "eval" / "step_0000020.json").unlink()  # still running
    for step in (15, 20):  # stopped at step 10: a prefix of the long study's run
        (board / "grpo_N8_g0_s1" / "eval" / f"step_{step:07d}.json").unlink()
    (board / "grpo_N8_g0_s1" / "metrics.json").unlink()
    long = tmp_path / "long"
    for seed in (0, 1, 2):
        overrides = ["experiment=long", "focal.gamma=0", f"seed={seed}", "train.group_size=8"]
        run = fake_run(long, f"grpo_s{seed}", overrides, GRPO[seed], 40, tb=False, rise=0.0)
        grid = {"focal.gamma": 0, "seed": "0,1,2", "train.group_size": 8}
        hydra = {"runtime": {"choices": {"algo": "grpo"}}, "sweeper": {"params": grid}}
        (run / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump({"hydra": hydra}))
    table = summarize(board, long, out=tmp_path / "out", step=20)
    once = table.split("Runs found in more than one folder:")[1].split("\n\n#")[0]
    assert (
        f"- {board / 'grpo_N8_g0_s0'} also ran as {long / 'grpo_s0'}: the same exact "
        + ("per-maze values at each of the 4 evaluations they share; counted once")
        in once
    )  # steps 5 to 20; a tie keeps the first folder's
    assert (
        f"- {long / 'grpo_s1'} also ran as {board / 'grpo_N8_g0_s1'}: the same exact "
        + ("per-maze values at each of the 2 evaluations they share; counted once")
        in once
    )  # the one read further is kept
    rows = section(table, "### Leaderboard, id")
    assert line(rows, "| 8 | GRPO")[2] == "3"  # seeds 0 and 1 once, seed 2 from the long study
    # the two grids name GRPO seeds 0 and 1 once: 3 x 2 + 1 runs declared, PKPO seed 1 missing
    assert "Not on the board yet: 1 runs (the sweep declares 7:" in table
    assert line(rows, "| 8 | MaxRL")[6] == f"+15.0 [{15 - 100 * T1 * 0.05:+.1f}, " + (
        f"{15 + 100 * T1 * 0.05:+.1f}]"
    )  # seeds 0, 1: shifts 0.1, 0.2 against GRPO, as in one folder
    assert (
        (tmp_path / "out" / "summary.md")
        .read_text()
        .startswith(
            f"Every run as it stood at step 20 (`mazerl-summarize {board} {long} --out "
            f"{tmp_path / 'out'} --at-step 20`)."
        )
    )
    # a run that differs where both evaluated is a different run: nothing is merged
    exact = json.loads((long / "grpo_s0" / "eval" / "step_0000010.json").read_text())
    exact["id"]["per_maze"]["exact_p"][0] += 1e-9
    (long / "grpo_s0" / "eval" / "step_0000010.json").write_text(json.dumps(exact))
    table = summarize(board, long, out=tmp_path / "out2", step=20)
    assert "more than one folder" not in table and f"folder={long}" in table


def with_code(run, commit: str | None, dirty: bool | None = False) -> None:
    """Record `code` in a fabricated run's metrics.json, as training does."""
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["code"] = {"version": "0.1.0", "commit": commit, "dirty": dirty}
    (run / "metrics.json").write_text(json.dumps(metrics))


def test_summary_names_the_code_each_run_ran_at_and_figures_the_summarizing_code(
    tmp_path, monkeypatch
):
    import mazerl.analysis.figures as figures
    import mazerl.analysis.leaderboard as leaderboard
    import mazerl.analysis.tables as tables
    from mazerl.core.provenance import code_identity, short_code

    sweep = board_sweep(tmp_path / "sweep")  # 9 runs
    assert summarize(sweep).splitlines()[:4] == [
        "9 runs, 9 finished; mean ± standard error over seeds.",
        "",
        "Code: 9 runs recorded none (older runs).",  # the committed studies' runs
        "",
    ]
    a, b = "a" * 40, "b" * 40
    for name in ("grpo_N8_g0_s0", "grpo_N8_g0_s1", "maxrl_N8_g0_s0", "pkpo_N8_g0_s2"):
        with_code(sweep / name, a)
    for name in ("maxrl_N8_g0_s1", "maxrl_N8_g0_s2"):
        with_code(sweep / name, b, dirty=True)
    with_code(sweep / "pkpo_N8_g0_s0", None, None)  # installed from a wheel: no commit
    real_footer, drawn = figures.footer, []
    for module in (figures, leaderboard):
        monkeypatch.setattr(module, "footer", lambda fig, dest: drawn.append(dest))
    table = summarize(sweep)
    assert table.splitlines()[2:4] == [
        "Code: 4 runs at aaaaaaaaaaaa, 2 at bbbbbbbbbbbb+dirty, 1 at mazerl 0.1.0; 2 runs "
        "recorded none (older runs).",
        "",
    ]
    assert (sweep / "summary.md").read_text() == table
    # every figure's footer: the command beside the code that drew it
    assert len(drawn) > 3 and {(d.command, d.code) for d in drawn} == {
        (f"mazerl-summarize {sweep}", short_code(code_identity()))
    }
    fig = plt.figure()
    real_footer(fig, drawn[0])
    assert [t.get_text() for t in fig.texts] == [
        f"mazerl-summarize {sweep}  (code {short_code(code_identity())})"
    ]
    plt.close(fig)
    # the two lines are all that is added: the rest reads as it did before
    monkeypatch.setattr(tables, "code_line", lambda runs: "")
    lines = table.splitlines()
    assert summarize(sweep).splitlines() == lines[:2] + lines[4:]
    monkeypatch.undo()
    # read at a step: a run still training has no metrics.json to record its code yet
    (sweep / "grpo_N8_g0_s0" / "metrics.json").unlink()
    assert summarize(sweep, step=10).splitlines()[4] == (
        "Code: 3 runs at aaaaaaaaaaaa, 2 at bbbbbbbbbbbb+dirty, 1 at mazerl 0.1.0; 2 runs "
        "recorded none (older runs); 1 still training (metrics.json, written last, records it)."
    )


BANK = {f"key{k}": {"name": f"m{k}", "seed": k, "key": f"key{k}", "sha256": f"sha{k}"}
        for k in range(3)}  # fmt: skip
PROTOCOL_FILE = ROOT / "experiments" / "studies" / "leaderboard" / "protocol.py"
protocol = load_module(PROTOCOL_FILE)  # the leaderboard study's pairing, as summarize loads it


def on_protocol(sweep, bank_of=None, grid=None):
    """Make `board_sweep`'s runs the leaderboard protocol's: each chose cell n8 and started
    from bank model `bank_of[run]` (default: its seed), as its metrics.json and config
    (base.bank=require, base.seed=${seed}) say, all on one machine; `grid`: the sweep's
    hydra.sweeper.params; its study.yaml names the protocol (`pairing`)."""
    (sweep / "study.yaml").write_text(f"pairing: {PROTOCOL_FILE}:PROTOCOL\n")
    for run in sorted(p for p in sweep.iterdir() if p.is_dir()):
        seed = int(run.name.rsplit("_s", 1)[1])
        k = (bank_of or {}).get(run.name, seed)
        hydra = {"runtime": {"choices": {"cell": "n8"}}, "sweeper": {"params": grid or {}}}
        (run / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump({"hydra": hydra}))
        config = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
        config["base"] = {"seed": "${seed}", "bank": "require"}
        (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
        metrics = json.loads((run / "metrics.json").read_text())
        metrics |= {"base_model": {"source": "bank", "key": f"key{k}", "sha256": f"sha{k}"},
                    "cpu": "AMD EPYC", "cpu_capability": "AVX2", "threads": 1}  # fmt: skip
        (run / "metrics.json").write_text(json.dumps(metrics))
    return sweep


def test_protocol_n_is_read_at_its_finished_runs_end_and_earlier_only_on_request(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(protocol, "bank_index", lambda: BANK)
    grid = {"algo": "grpo,maxrl,pkpo", "seed": "0,1,2", "cell": "n8,n32"}
    sweep = on_protocol(board_sweep(tmp_path / "sweep", rise=0.01), grid=grid)
    # PKPO on bank model 1 still trains: evaluated at steps 5 and 10, no metrics.json yet
    for name in ("metrics.json", "eval/step_0000015.json", "eval/step_0000020.json"):
        (sweep / "pkpo_N8_g0_s1" / name).unlink()
    table = summarize(sweep)
    # the 8 finished runs ended at step 20: N = 8 is read there, PKPO on 2 bank models
    assert table.startswith("9 runs, 8 finished; ")
    assert (
        "- N = 8: its 8 finished runs read at their end (step 20), 1 still training not on the "
        "board yet; `--at-step 10` reads all 9 at the latest evaluation they share"
    ) in table
    rows = section(table, "### Leaderboard, id")
    # PKPO ends at GRPO + 0.05 on every bank model and maze
    assert line(rows, "| 8 | PKPO")[2] == "2" and line(rows, "| 8 | PKPO")[6] == "+5.0 [+5.0, +5.0]"
    board = [x for x in rows if x.startswith("| 8 |")]
    assert board == [x for x in section(summarize(sweep, step=20), "### Leaderboard, id")
                     if x.startswith("| 8 |")]  # fmt: skip
    # the cell choice names N: the grid's N = 32 runs, none started
    assert "- N = 32: none of its 9 runs finished (0 started)" in table

    # --at-step 10, as the line says: all 9, the one still training counted apart
    table = summarize(sweep, step=10)
    assert "\n9 runs, 8 finished and 1 still training, read at an earlier step;" in table
    rows = section(table, "### Leaderboard, id")
    # PKPO rises 0.01 per step to GRPO + 0.05 at step 20: at step 10, 0.05 - 0.1 on every
    # bank model and maze; MaxRL flat: GRPO + 0.1, 0.2, 0.3 by bank model, as at the end
    assert line(rows, "| 8 | PKPO")[2:7] == ["3", "25.0", "100.0", "100.0", "-5.0 [-5.0, -5.0]"]
    half = 100 * T2 * 0.1 / math.sqrt(3)
    assert line(rows, "| 8 | MaxRL")[6] == f"+20.0 [{20 - half:+.1f}, {20 + half:+.1f}]"
    assert table.split("### Leaderboard, id")[0].count("bank models") >= 2  # paired by them

    # before any run of N = 8 finished, it is read at the latest evaluation all started share
    for run in sweep.iterdir():
        if run.is_dir():
            (run / "metrics.json").unlink(missing_ok=True)
            (run / "eval" / "step_0000020.json").unlink(missing_ok=True)
    table = summarize(sweep)
    assert (
        "- N = 8: read at step 10, the latest evaluation its 9 started runs share (9 still "
        "training; `--at-step STEP` reads another step)"
    ) in table
    assert line(section(table, "### Leaderboard, id"), "| 8 | PKPO")[6] == "-5.0 [-5.0, -5.0]"


def test_protocol_runs_of_different_lengths_are_read_at_the_step_they_share(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "bank_index", lambda: BANK)
    sweep = on_protocol(board_sweep(tmp_path / "sweep", rise=0.01))
    # PKPO ran to step 10 only (a reduced length), every other method to step 20
    for seed in (0, 1, 2):
        run = sweep / f"pkpo_N8_g0_s{seed}"
        for step in (15, 20):
            (run / "eval" / f"step_{step:07d}.json").unlink()
        metrics = json.loads((run / "metrics.json").read_text())
        (run / "metrics.json").write_text(json.dumps(metrics | {"iterations": 10}))
    table = summarize(sweep)
    assert (
        "- N = 8: read at step 10, the latest evaluation its 9 started runs share (0 still "
        "training; `--at-step STEP` reads another step)"
    ) in table
    rows = section(table, "### Leaderboard, id")
    # GRPO and MaxRL are read at step 10 too: PKPO at step 10 is GRPO + 0.05 - 0.1
    assert line(rows, "| 8 | PKPO")[2] == "3" and line(rows, "| 8 | PKPO")[6] == "-5.0 [-5.0, -5.0]"


def test_protocol_runs_pair_by_bank_model_not_seed_and_unplaced_runs_are_named(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(protocol, "bank_index", lambda: BANK)
    # MaxRL's seed 1 run started from bank model 2 and its seed 2 run from bank model 1
    swapped = {"maxrl_N8_g0_s1": 2, "maxrl_N8_g0_s2": 1}
    sweep = on_protocol(board_sweep(tmp_path / "sweep"), bank_of=swapped)
    overrides = ["algo=pkpo", "focal.gamma=0", "seed=3", "train.group_size=8"]
    old = fake_run(sweep, "pkpo_N8_g0_s3", overrides, [0.5, 0.5], tb=False)  # before the bank
    rows = section(summarize(sweep), "### Leaderboard, id")
    # against GRPO's run of the same bank model, per maze: bank model 0 (0.3, 0.5) - (0.2, 0.4),
    # 1: (0.4, 0.8) - (0.3, 0.3), 2: (0.5, 0.5) - (0.1, 0.5): d = [[.1, .1], [.1, .5], [.4, 0]]
    # mean 0.2; bank model means .1, .3, .2: MS_unit = 2 * 0.01 = 0.02; maze means .2, .2:
    # MS_maze = 0; residuals 0, 0, -.2, .2, .2, -.2: MS_res = 0.16 / 2 = 0.08. Both components
    # estimated below zero: variance MS_res / 6, on the bank models' 2 degrees of freedom
    half = 100 * T2 * math.sqrt(0.08 / 6)
    assert line(rows, "| 8 | MaxRL")[6] == f"+20.0 [{20 - half:+.1f}, {20 + half:+.1f}]"
    table = (tmp_path / "sweep" / "summary.md").read_text()
    assert (
        f"- {old}: left out: its metrics.json names no base model (a run from before the bank)"
    ) in table
    assert line(rows, "| 8 | PKPO")[2] == "3"  # bank models 0-2; the run from before left out


def test_runs_that_chose_a_cell_are_paired_by_seed_where_no_study_names_the_protocol(
    tmp_path, monkeypatch
):
    """The library holds no study's protocol: the same runs, their study.yaml gone, are a
    plain methods board paired by seed (MaxRL's seed 1 and 2 runs against GRPO's seed 1 and
    2 runs, not against the runs of their bank models)."""
    monkeypatch.setattr(protocol, "bank_index", lambda: BANK)
    swapped = {"maxrl_N8_g0_s1": 2, "maxrl_N8_g0_s2": 1}
    sweep = on_protocol(board_sweep(tmp_path / "sweep"), bank_of=swapped)
    by_bank = section(summarize(sweep), "### Leaderboard, id")
    (sweep / "study.yaml").unlink()
    table = summarize(sweep)
    by_seed = section(table, "### Leaderboard, id")
    assert "bank model" not in table.split("### Leaderboard, id")[0].split("## Leaderboard")[1]
    # by seed, MaxRL - GRPO is 0.1, 0.2, 0.3 on every maze: +20 with its seeds' spread
    half = 100 * T2 * 0.1 / math.sqrt(3)
    assert line(by_seed, "| 8 | MaxRL")[6] == f"+20.0 [{20 - half:+.1f}, {20 + half:+.1f}]"
    assert line(by_bank, "| 8 | MaxRL")[6] != line(by_seed, "| 8 | MaxRL")[6]


def test_a_protocol_board_without_a_placed_run_still_says_why():
    from mazerl.analysis.leaderboard import Placement, board_markdown

    why = "- runs/a: left out: its metrics.json names no base model (a run from before the bank)"
    placement = Placement({}, {}, {}, [why], protocol.PROTOCOL)
    assert board_markdown([], [Metric.of("eval/id/exact_pass@1")], placement) == [
        "## Leaderboard", "", "No run could be placed:", "", why, ""
    ]  # fmt: skip
    assert (
        board_markdown([], [Metric.of("eval/id/exact_pass@1")]) == []
    )  # off the protocol: no section
