"""The typed run record (mazerl.analysis.runs) and the typed metric (mazerl.eval.metric_names):
names parsed once and written back, a committed run read into its fields, a metric the
evaluation writes reaching the summary without an edit to the analysis, display names from
the methods' own configs, and a study's sections named by its study.yaml."""

import csv
import json
import re
from pathlib import Path

import pytest
import yaml
from test_paired import fake_run

from mazerl.analysis import find_runs, summarize
from mazerl.analysis.figures import method_order
from mazerl.analysis.runs import Method, method_name, method_of, read_run, shipped_label
from mazerl.analysis.tables import aggregate
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import FAMILIES, Family, Metric
from mazerl.train.bank import bank_index

ROOT = Path(__file__).parents[1]
DECISIVE = ROOT / "experiments" / "runs" / "decisive"


def test_metric_names_parse_into_their_parts_and_back():
    assert Metric.parse("eval/ood_large/exact_pass@2048") == Metric("exact_pass", "ood_large", 2048)
    assert Metric.parse("eval/id/pass@64_se") == Metric("pass", "id", 64, stat="se")
    delta = Metric.parse("eval/id/delta_exact_pass@1_vs_base")
    assert delta == Metric("exact_pass", "id", 1, stat="delta_vs_base") == delta.value.delta()
    assert Metric.parse("routes/id/mass_route_2") == Metric("mass_route", "id", 2, "routes")
    assert Metric.parse("routes/id/expected_distinct@256").k == 256
    assert Metric.parse("q_pos") == Metric("q_pos", "", None, "")
    assert Metric.parse("eval/id/coverage") == Metric("coverage", "id")
    assert Metric.parse("train/loss") is None and Metric.parse("eval/a/b/c") is None
    assert Metric("exact_pass", "id", 1).exact and not Metric("pass", "id", 1).exact
    with pytest.raises(ValueError, match="'sim/x/y' is not a metric name"):
        Metric.of("sim/x/y")


def test_every_name_a_committed_run_wrote_round_trips():
    run = DECISIVE / "grpo_N32_g0.5_s0"
    metrics = json.loads((run / "metrics.json").read_text())
    step = json.loads(sorted((run / "eval").glob("step_*.json"))[-1].read_text())
    names = [*metrics["final"], *metrics["base"]]
    names += [f"eval/{s}/{k}" for s, ev in step.items() for k in ev if k != "per_maze"]
    assert len(names) > 300
    for name in names:
        assert Metric.of(name).name == name


def test_a_committed_run_is_read_once_into_its_record():
    run = read_run(DECISIVE / "grpo_N32_g0.5_s3")
    config = yaml.safe_load((run.path / ".hydra" / "config.yaml").read_text())
    metrics = json.loads((run.path / "metrics.json").read_text())
    assert (run.n, run.gamma, run.seed) == (32, 0.5, "3")
    assert run.method.algo == "grpo" and run.method.name == "F-GRPO γ 0.5"
    assert run.origin.sha256 == metrics["base_model"]["sha256"]
    assert bank_index()[run.origin.key]["sha256"] == run.origin.sha256
    assert config["base"]["seed"] == "${seed}" and run.origin.seed == 3  # resolved
    assert run.machine == (metrics["cpu"], metrics["cpu_capability"], metrics["threads"])
    assert run.steps == metrics["iterations"] == 15_000
    assert run.sets == tuple(s["name"] for s in config["eval"]["sets"])
    col = Metric("exact_pass", "id", 256)
    assert run.final[col] == metrics["final"]["eval/id/exact_pass@256"]
    assert run.value("eval/id/exact_pass@256", "base") == metrics["base"]["eval/id/exact_pass@256"]


def with_extra_metric(run: Path, value: float) -> Path:
    """`run` (a `fake_run`) whose evaluation also wrote `eval/id/mean_length` = `value`."""
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["final"]["eval/id/mean_length"] = value
    (run / "metrics.json").write_text(json.dumps(metrics))
    for path in (run / "eval").glob("step_*.json"):
        ev = json.loads(path.read_text())
        ev["id"]["mean_length"] = value
        path.write_text(json.dumps(ev))
    return run


def test_a_metric_the_evaluation_writes_reaches_the_summary(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    lengths = {("0", 0): 10.0, ("0", 1): 12.0, ("0.5", 0): 13.0, ("0.5", 1): 16.0}
    for (gamma, seed), length in lengths.items():
        run = fake_run(sweep, f"g{gamma}_s{seed}", [f"focal.gamma={gamma}", f"seed={seed}"],
                       [0.3, 0.6], tb=False)  # fmt: skip
        with_extra_metric(run, length)
    assert "mean_length" not in FAMILIES  # nothing in the analysis names it
    text = summarize(sweep)
    with open(sweep / "summary.csv", newline="") as f:
        rows = {r["group"]: r for r in csv.DictReader(f)}
    assert float(rows["focal.gamma=0"]["eval/id/mean_length"]) == 11.0
    assert float(rows["focal.gamma=0.5"]["eval/id/mean_length"]) == 14.5
    assert float(rows["focal.gamma=0.5"]["eval/id/mean_length_se"]) == pytest.approx(
        1.5
    )  # sd 2.12 / sqrt 2
    # its paired difference: seed 0 +3, seed 1 +4 (set-level: no per-maze values)
    assert float(rows["focal.gamma=0.5"]["paired_focal.gamma/eval/id/mean_length"]) == 3.5
    head = next(x for x in text.splitlines() if x.startswith("| group | seeds | exact_pass@1"))
    assert head.endswith("| mean_length |")
    assert "Δmean_length" in text.split("## Paired differences")[1]
    # the evaluation's declaration decides: declared hidden, the column goes
    monkeypatch.setitem(FAMILIES, "mean_length", Family("mean_length", shown=False))
    summarize(sweep)
    assert "eval/id/mean_length" not in (sweep / "summary.csv").read_text()


def shipped_methods() -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / "algo").glob("*.yaml"))


def test_every_shipped_method_names_itself_in_its_config():
    methods = shipped_methods()
    assert len(methods) >= 15
    for algo in methods:
        label = yaml.safe_load((CONF_DIR / "algo" / f"{algo}.yaml").read_text())["label"]
        assert shipped_label(algo) == label
        plain, focal = method_name(algo, 0.0), method_name(algo, 0.5)
        assert not any(c in plain for c in "[]{}") and "γ 0.5" in focal and "γ" not in plain
        # the focal paper's rule: GRPO and its close relatives become F-<name>, others "+ focal"
        assert focal in (f"F-{plain} γ 0.5", f"{plain} + focal γ 0.5")
    assert method_name("grpo", 0.5) == "F-GRPO γ 0.5"
    assert method_name("drgrpo", 1.0) == "F-Dr. GRPO γ 1"
    assert method_name("maxrl", 0.5) == "MaxRL + focal γ 0.5"


def test_a_run_without_a_label_reads_the_shipped_one_with_its_own_settings():
    old = {"algo": {"name": "pkpo", "reward_transform_kwargs": {"k": 8}}, "focal": {"gamma": 0}}
    assert method_of(old).name == "PKPO (k = 8)"  # the run's k, the shipped label
    assert method_name("pkpo", 0.0) == "PKPO"  # no settings: the bracket left out
    mine = {"algo": {"name": "grpo", "label": "Mine[ focal {gamma}]"}, "focal": {"gamma": 2.0}}
    assert method_of(mine).name == "Mine focal 2"  # the run's own label wins
    assert method_of({"algo": {"name": "not_shipped"}}).name == "not_shipped"


def test_the_folder_name_does_not_name_the_method(tmp_path):
    run = fake_run(tmp_path / "sweep", "maxrl_N8_g0.5_s0", ["seed=0"], [0.5], tb=False)
    record = find_runs(tmp_path / "sweep")[0]
    assert record.path == run and record.method.algo == "grpo"  # fake_run's config: grpo
    assert (record.n, record.gamma) == (8, 0.5)


def test_a_study_yaml_names_sections_and_bad_entries_are_one_line(tmp_path):
    sweep = tmp_path / "sweep"
    for seed in (0, 1):
        fake_run(sweep, f"s{seed}", ["focal.gamma=0", f"seed={seed}"], [0.4, 0.8], tb=False)
    (tmp_path / "mine.py").write_text(
        "def runs_seen(summary):\n"
        "    return ['## Mine', '', f'{len(summary.runs)} runs, {len(summary.cols)} columns', '']\n"
    )
    (sweep / "study.yaml").write_text("sections:\n  - ../mine.py:runs_seen\n")
    text = summarize(sweep)
    cols = len(aggregate(find_runs(sweep))[0])
    assert f"## Mine\n\n2 runs, {cols} columns" in text
    for entry, why in (
        ("../mine.py:nothing", "../mine.py has no function nothing"),
        ("../absent.py:f", "no file"),
        ("no_colon", "is not 'file.py:NAME' or 'module:NAME'"),
        ("no_such_module_x:f", "cannot import no_such_module_x"),
    ):
        (sweep / "study.yaml").write_text(f"sections:\n  - {entry}\n")
        with pytest.raises(UserError, match=why) as e:
            summarize(sweep)
        assert str(sweep / "study.yaml") in str(e.value) and "\n" not in str(e.value)
    (sweep / "study.yaml").write_text("pairing: ../mine.py:nothing\n")  # a pairing, the same way
    with pytest.raises(UserError, match=r"pairing '\.\./mine\.py:nothing': .* has no nothing"):
        summarize(sweep)
    (sweep / "study.yaml").write_text("pairing: ../mine.py:runs_seen\n")  # a function
    with pytest.raises(UserError, match=r"pairing '\.\./mine\.py:runs_seen' is a function, not a"):
        summarize(sweep)
    (sweep / "study.yaml").write_text("section:\n  - ../mine.py:runs_seen\n")  # a typo
    known = r"unknown key 'section' \(known: claims, sections, pairing\)"
    with pytest.raises(UserError, match=known):
        summarize(sweep)


def test_the_library_holds_no_study():
    text = "\n".join(p.read_text() for p in (ROOT / "mazerl" / "analysis").glob("*.py"))
    folders = [p.name for p in (ROOT / "experiments" / "runs").iterdir() if p.is_dir()]
    folders += [p.name for p in (ROOT / "experiments" / "studies").iterdir() if p.is_dir()]
    studies = [name for name in folders if not name.isalpha()]  # maze_long, prompts64, ...
    assert len(studies) >= 8  # (plain words such as "methods" or "bank" say nothing)
    for word in ("table 4", "issue", "paper", "decisive", *studies):
        assert word.lower() not in text.lower(), word
    assert not re.search(r"#\d{2,}", text)  # no issue number


def test_only_the_record_reads_metric_names_and_configs():
    """Outside runs.py (the record) and mazerl/eval/metric_names.py (the names), no analysis
    module takes a metric name apart or reads a setting from a saved config."""
    takes_apart = re.compile(r"""split\(["'][/@]["']|partition\(["'][/@]["']|["']@["']""")
    reads_config = re.compile(r"""\.config\b|\[["']focal|["']focal\.gamma["']\)|["']gamma["']\)""")
    for path in sorted((ROOT / "mazerl" / "analysis").glob("*.py")):
        if path.name == "runs.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            assert not takes_apart.search(line), f"{path.name}:{i}: {line.strip()}"
            assert not reads_config.search(line), f"{path.name}:{i}: {line.strip()}"


def test_methods_are_ordered_by_their_focal_exponent_not_their_label_text():
    """Plain methods (gamma 0, the references) come before focal variants, then by name: a
    plain method whose label starts with "F-" stays among the plain ones, a focal variant whose
    label does not say "focal" among the focal ones."""
    methods = [
        Method("grpo", 0.5, "GRPO[ + focal γ {gamma}]"),
        Method("mine", 0.5, "Mine"),
        Method("fdiv", 0.0, "F-div PO"),
        Method("grpo", 0.0, "GRPO[ + focal γ {gamma}]"),
    ]
    ordered = [m.name for m in sorted(methods, key=method_order)]
    assert ordered == ["F-div PO", "GRPO", "GRPO + focal γ 0.5", "Mine"]
