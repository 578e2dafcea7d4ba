"""What TensorBoard shows of a real run, read back with TensorBoard's own loaders: the
custom-scalars layout (headline first), the headline tags, HParams, behaviour images."""

import io
import json
import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import FAST, ROOT, metrics, run_app, scalars
from matplotlib.image import imread
from tensorboard import context
from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins import base_plugin
from tensorboard.plugins.custom_scalar.custom_scalars_plugin import CustomScalarsPlugin
from tensorboard.plugins.hparams import backend_context
from tensorboard.plugins.hparams import metadata as hparams_metadata

from mazerl.analysis.figures import Output, final_pictures, plot_behaviour
from mazerl.analysis.runs import find_runs, swept_keys
from mazerl.envs.maze import Maze
from mazerl.envs.render import END_MARKS, render_behaviour, visit_fraction
from mazerl.eval.dashboard import headline_ks, train_layout
from mazerl.eval.evaluate import SetResult
from mazerl.eval.metric_names import Metric
from mazerl.eval.runner import log_eval, read_saved


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One smoke run (3x3 mazes, 10 iterations, eval every 5, n = 32, 2 images per set) with a
    cache of its own: it evaluates the base model itself, so its pictures exist at step 0."""
    run_dir = tmp_path_factory.mktemp("tb") / "run"
    out = run_app(
        "mazerl.apps.train",
        *FAST,
        f"hydra.run.dir={run_dir}",
        f"base.cache_dir={run_dir.parent / 'cache'}",
        cwd=run_dir.parent,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return run_dir, out.stdout


def read_layout(tb_dir) -> dict:
    """The merged layout as the Custom Scalars tab loads it."""
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(tb_dir))
    mux.Reload()
    ctx = base_plugin.TBContext(
        logdir=str(tb_dir),
        multiplexer=mux,
        data_provider=data_provider.MultiplexerDataProvider(mux, str(tb_dir)),
    )
    return json.loads(CustomScalarsPlugin(ctx).layout_impl(context.RequestContext(), ""))


def test_layout_puts_the_headline_first_and_every_headline_chart_has_data(run):
    run_dir, _ = run
    layout = read_layout(run_dir / "tb")
    titles = [c["title"] for c in layout["category"]]
    assert titles[:2] == ["headline", "headline: sampled pass@k and other k"]
    tags = set(scalars(run_dir))
    headline = {c["title"]: c["multiline"]["tag"] for c in layout["category"][0]["chart"]}
    # one chart per metric, exact pass@1 and pass@n of each set first (n = 32 here)
    assert list(headline)[:6] == [
        f"{s}: exact pass@{k}" for s in ("id", "ood_large", "ood_dfs") for k in (1, 32)
    ]
    below = {c["title"]: c["multiline"]["tag"] for c in layout["category"][1]["chart"]}
    assert "id: pass@8 (sampled)" in below and "id: exact pass@8" in below
    for title, patterns in [*headline.items(), *below.items()]:  # one tag each, with data
        assert len([t for t in tags if any(re.search(p, t) for p in patterns)]) == 1, title
    vs_base = {c["title"]: c["multiline"]["tag"] for c in layout["category"][2]["chart"]}
    shown = {t for t in tags if any(re.search(p, t) for p in vs_base["ood_dfs"])}
    assert shown == {"eval/ood_dfs/pass@1", "eval/ood_dfs/pass@32"} | {
        "eval_base/ood_dfs/pass@1",
        "eval_base/ood_dfs/pass@32",
    }


def test_sections_base_lines_and_no_single_point_final_charts(run):
    run_dir, _ = run
    tags, m = scalars(run_dir), metrics(run_dir)
    assert not [t for t in tags if t.startswith("final/")]
    assert not [t for t in tags if t.startswith("eval/") and ("_se" in t or "delta_" in t)]
    # the differences and standard errors sit in their own sections, same numbers
    delta = tags["eval_vs_base/id/delta_pass@1"]
    assert [s for s, _ in delta] == [0, 5, 10]
    assert delta[-1][1] == pytest.approx(m["final"]["eval/id/delta_pass@1_vs_base"])
    assert tags["eval_se/id/pass@32_se"][-1][1] == pytest.approx(m["final"]["eval/id/pass@32_se"])
    # the base model's pass@1 is a flat reference line at every evaluation
    base_line = tags["eval_base/id/pass@1"]
    assert [s for s, _ in base_line] == [0, 5, 10]
    assert [v for _, v in base_line] == [pytest.approx(m["base"]["eval/id/pass@1"])] * 3


def test_hparams_tab_reads_the_last_value_of_logged_tags(run):
    run_dir, _ = run
    acc = EventAccumulator(str(run_dir / "tb"))
    acc.Reload()
    content = acc.PluginTagToContent(hparams_metadata.PLUGIN_NAME)
    experiment = hparams_metadata.parse_experiment_plugin_data(
        content[hparams_metadata.EXPERIMENT_TAG]
    )
    start = hparams_metadata.parse_session_start_info_plugin_data(
        content[hparams_metadata.SESSION_START_INFO_TAG]
    )
    assert start.hparams["algo"].string_value == "grpo"
    assert start.hparams["gamma"].number_value == 0.5
    assert start.hparams["group_size"].number_value == 8
    metric_tags = [mi.name.tag for mi in experiment.metric_infos]
    assert metric_tags == [
        *(f"eval/{s}/exact_pass@{k}" for s in ("id", "ood_large", "ood_dfs") for k in (1, 32)),
        "train/reward_mean",
    ]
    tags, final = scalars(run_dir), metrics(run_dir)["final"]
    for tag in metric_tags:  # every metric is a logged scalar whose last value is final
        assert tag in tags, tag
        if tag in final:
            assert tags[tag][-1] == (10, pytest.approx(final[tag]))


def test_behaviour_images_are_large_and_logged_at_every_evaluation(run):
    run_dir, _ = run
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"images": 0})
    acc.Reload()
    images = acc.Tags()["images"]
    assert sorted(images) == sorted(f"images/{s}/{j}" for s in ("id", "ood_large", "ood_dfs")
                                    for j in (0, 1))  # fmt: skip
    events = acc.Images("images/id/0")
    assert [e.step for e in events] == [0, 5, 10]
    picture = imread(io.BytesIO(events[-1].encoded_image_string), format="png")
    assert max(picture.shape[:2]) >= 256


def test_images_every_draws_pictures_only_at_its_steps_and_at_the_end(train):
    # evaluations at 0 (base), 2, 4, 6 and the final 7; pictures every 4 steps: 4 and 7
    _, run_dir = train(
        "train.iterations=7", "train.eval_every=2", "eval.images=1", "eval.images_every=4"
    )
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"images": 0})
    acc.Reload()
    steps = [e.step for e in acc.Images("images/id/0")]
    assert [s for s in steps if s > 0] == [4, 7]
    evals = [s for s, _ in scalars(run_dir)["eval/id/pass@1"]]
    assert evals == [0, 2, 4, 6, 7]


def test_train_log_holds_what_the_console_showed(run):
    run_dir, stdout = run
    log = (run_dir / "train.log").read_text()
    for line in stdout.splitlines():
        assert line in log, line
    assert re.search(r"run .*: grpo, focal gamma 0.5, 16 mazes x 8 rollouts", log)
    assert "base model:" in log and "iteration 10/10" in log
    final = metrics(run_dir)["final"]["eval/id/pass@1"]
    assert f"-> {final:.3f}" in log.split("final pass@k")[1]


def test_the_run_ends_naming_its_folder_and_the_tensorboard_command(run):
    """The last two console lines (what `make demo` ends with) name the run folder, relative
    to where the command ran, and a `tensorboard --logdir` that finds the run's events."""
    run_dir, stdout = run
    last = stdout.splitlines()[-2:]
    assert last == [
        "run folder: run (metrics.json, train.log, TensorBoard events in tb/)",
        "open it in TensorBoard: tensorboard --logdir run",
    ]
    logdir = run_dir.parent / last[1].split("--logdir ")[1]
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(logdir))
    mux.Reload()
    assert list(mux.Runs()) == ["tb"]  # the run's events, read as the server reads them
    assert "eval/id/pass@1" in mux.GetAccumulator("tb").Tags()["tensors"]


def test_where_to_look_keeps_a_path_outside_the_working_directory_whole(tmp_path, monkeypatch):
    from mazerl.train.progress import where_to_look

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep").mkdir()
    outside = tmp_path.parent / "a run"
    lines = where_to_look(outside, tmp_path / "sweep")
    assert lines[0].startswith(f"run folder: '{outside}' (")  # quoted: it holds a space
    assert lines[1] == "open it in TensorBoard: tensorboard --logdir sweep"


def corridor() -> Maze:
    """#####
    #S.G#
    #####   start (1, 1), goal (1, 3)"""
    grid = np.ones((3, 5), dtype=np.int8)
    grid[1, 1:4] = 0
    return Maze(grid, (1, 1), (1, 3), routes=((3, 3),), name="corridor")


def test_visit_fraction_counts_samples_not_steps():
    maze = corridor()
    right, left = 3, 2
    # to the goal; into the wall at once; right then back (a revisit): the start cell counts
    # once per sample, the middle cell is visited by 2 of 3 samples (twice by the third)
    visits = visit_fraction(maze, [(right, right), (left,), (right, left)])
    assert visits[1, 1] == 1.0
    assert visits[1, 2] == pytest.approx(2 / 3)
    assert visits[1, 3] == pytest.approx(1 / 3)
    assert visits[0].sum() == 0


def test_render_behaviour_title_and_size():
    maze = corridor()
    picture = render_behaviour(
        maze, [(3, 3), (2,), (3, 2), (4,)], ["goal", "wall", "revisit", "stop"]
    )
    assert picture.dtype == np.uint8 and max(picture.shape[:2]) >= 256
    assert set(END_MARKS) == {"goal", "wall", "revisit", "stop", "move"}


def test_metric_names_and_tags_are_the_strings_committed_studies_hold():
    assert Metric("pass", "id", 1).name == Metric("pass", "id", 1).tag == "eval/id/pass@1"
    se = Metric("pass", "id", 8).se()
    assert (se.name, se.tag) == ("eval/id/pass@8_se", "eval_se/id/pass@8_se")
    delta = Metric("exact_pass", "ood_dfs", 64).delta()
    assert (delta.name, delta.tag) == (
        "eval/ood_dfs/delta_exact_pass@64_vs_base",
        "eval_vs_base/ood_dfs/delta_exact_pass@64",
    )
    assert Metric("pass", "id", 256).base_tag == "eval_base/id/pass@256"
    assert Metric("rare_mass", "id", source="routes").tag == "routes/id/rare_mass"
    assert Metric("mass_route", "id", 0, "routes").name == "routes/id/mass_route_0"
    assert headline_ks(256) == [1, 8, 64, 256] and headline_ks(32) == [1, 8, 32]
    assert next(iter(train_layout(["id"], 256, [1, 256], [1, 256]))) == "headline"
    assert "routes and tail misses" in train_layout(["id"], 256, [1, 256], [1, 256], routes=True)


class Tags:
    """A stand-in for `SummaryWriter`: the last value written under each scalar tag."""

    def __init__(self) -> None:
        self.scalars: dict[str, float] = {}

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars[tag] = value

    def add_image(self, *args, **kwargs) -> None:
        pass


def test_log_eval_writes_a_committed_runs_metric_names_and_values():
    """A committed run's last evaluation (`eval/step_*.json`) against its base model's values
    (`metrics.json`'s `base`) gives back, name for name and value for value, its
    `metrics.json` `final`, but for what needs the base model's per-maze values (the rare and
    common split, the route metrics: not committed); the tags are the TensorBoard sections."""
    run = ROOT / "experiments" / "runs" / "methods_routes" / "clip_cov_N8_g0.0_s0"
    committed = json.loads((run / "metrics.json").read_text())
    last = read_saved(json.loads(max((run / "eval").glob("step_*.json")).read_text()))
    base: dict = {}
    for name, value in committed["base"].items():
        metric = Metric.of(name)
        base.setdefault(metric.set, SetResult({})).values[replace(metric, set="")] = value
    writer = Tags()
    flat = log_eval(writer, last, base, 3000, 0)
    per_maze = {"rare_success_mazes", "success_on_rare", "success_on_common"}
    expected = {
        k: v
        for k, v in committed["final"].items()
        if Metric.of(k).source == "eval" and Metric.of(k).family not in per_maze
    }
    assert flat == expected
    assert len(flat) == 100
    assert writer.scalars["eval_se/id/pass@8_se"] == flat["eval/id/pass@8_se"]
    assert (
        writer.scalars["eval_vs_base/ood_large/delta_exact_pass@256"]
        == (flat["eval/ood_large/delta_exact_pass@256_vs_base"])
    )
    assert writer.scalars["eval_base/id/pass@256"] == committed["base"]["eval/id/pass@256"]
    assert {t for t in writer.scalars if t.startswith("eval_base/")} == {
        "eval_base/id/pass@1",
        "eval_base/id/pass@256",
        "eval_base/ood_large/pass@1",
        "eval_base/ood_large/pass@256",
    }


def test_maze_show_png(tmp_path):
    out = run_app("mazerl.apps.maze", "show", "--layout", "spiral", "--png", "s.png", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert max(imread(tmp_path / "s.png").shape[:2]) >= 256
    out = run_app("mazerl.apps.maze", "show", "--png", "no/such/dir/s.png", cwd=tmp_path)
    assert (
        out.returncode == 2 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr
    )


def test_summary_shows_the_final_behaviour_pictures(run):
    run_dir, _ = run
    runs = find_runs(run_dir.parent)
    pictures = final_pictures(runs[0])
    assert sorted(pictures) == ["id", "ood_dfs", "ood_large"]
    assert all(p.shape[2] >= 3 and max(p.shape[:2]) >= 256 for p in pictures.values())
    path = plot_behaviour(Output(run_dir.parent, "test"), runs, swept_keys(runs))
    assert path == run_dir.parent / "behaviour.png" and path.stat().st_size > 10_000


def test_a_sweep_in_tensorboard_one_line_per_run_short_names_swept_hparams(tmp_path, base_cache):
    """A tiny 2-run sweep opened as TensorBoard opens it: run names from the swept keys, the
    headline one chart per metric (one line per run), HParams with the swept keys and the
    seed first and the headline metrics only."""
    sweep = tmp_path / "sweep"
    out = run_app(
        "mazerl.apps.train", "-m", *FAST, f"hydra.sweep.dir={sweep}",
        f"base.cache_dir={base_cache}", "train.iterations=2", "train.group_size=4",
        "focal.gamma=0,0.5", "seed=0", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(sweep))
    mux.Reload()
    assert sorted(mux.Runs()) == ["N4_g0.5_iterations2_s0/tb", "N4_g0_iterations2_s0/tb"]
    ctx = base_plugin.TBContext(
        logdir=str(sweep),
        multiplexer=mux,
        data_provider=data_provider.MultiplexerDataProvider(mux, str(sweep)),
    )
    request = context.RequestContext()
    layout = json.loads(CustomScalarsPlugin(ctx).layout_impl(request, ""))
    runs = ctx.data_provider.list_scalars(request, experiment_id="", plugin_name="scalars")
    assert len(runs) == 2
    for chart in layout["category"][0]["chart"]:  # each chart: one tag, in each run
        for run, tags in runs.items():
            hits = [t for t in tags if any(re.search(p, t) for p in chart["multiline"]["tag"])]
            assert len(hits) == 1, (chart["title"], run, hits)
    hparams = backend_context.Context(ctx)
    experiment = hparams.experiment_from_metadata(
        request, "", True, hparams.hparams_metadata(request, ""),
        hparams.hparams_from_data_provider(request, "", None),
    )  # fmt: skip
    infos = [(h.name, h.differs) for h in experiment.hparam_infos]
    assert infos[:4] == [
        ("gamma", True), ("group_size", True), ("seed", True), ("train.iterations", True),
    ]  # fmt: skip
    assert ("algo", False) in infos
    assert [m.name.tag for m in experiment.metric_infos][:2] == [
        "eval/id/exact_pass@1",
        "eval/id/exact_pass@32",
    ]


def test_each_evaluation_chart_shows_exactly_its_metrics_tags():
    """The layout's evaluation charts are their metrics' tags, each matched whole: no other
    k, set or statistic (a set name with a regex character included)."""
    layout = train_layout(["id", "a.b"], 32, [1, 4, 32], [1, 32, 256], routes=True)
    candidates = [
        f"{section}/{s}/{name}"
        for section in ("eval", "eval_base", "eval_vs_base", "eval_se", "routes")
        for s in ("id", "a.b", "axb", "id2")
        for name in [
            *(
                f"{p}pass@{k}{e}"
                for p in ("", "delta_", "delta_exact_", "exact_")
                for k in range(1, 300)
                for e in ("", "_se")
            ),
            "success_on_rare",
            "success_on_common",
            "success_rate",
            "rare_mass",
            "common_mass",
            "forgotten",
            "mass_route_0",
        ]
    ]

    def shown(chart) -> set:
        return {t for t in candidates if any(re.search(p, t) for p in chart[1])}

    assert shown(layout["pass@k, every k"]["a.b"]) == {
        "eval/a.b/pass@1",
        "eval/a.b/pass@4",
        "eval/a.b/pass@32",
    }
    assert shown(layout["pass@1 and pass@n against the base model"]["id"]) == {
        "eval/id/pass@1",
        "eval/id/pass@32",
        "eval_base/id/pass@1",
        "eval_base/id/pass@32",
    }
    assert shown(layout["pass@k against the base model (difference)"]["id"]) == {
        "eval_vs_base/id/delta_pass@1",
        "eval_vs_base/id/delta_pass@4",
        "eval_vs_base/id/delta_pass@32",
        "eval_vs_base/id/delta_exact_pass@1",
        "eval_vs_base/id/delta_exact_pass@32",
        "eval_vs_base/id/delta_exact_pass@256",
    }
    assert shown(layout["rare and common mazes (base success < 0.1 or not)"]["id"]) == {
        "eval/id/success_on_rare",
        "eval/id/success_on_common",
    }
    routes = layout["routes and tail misses"]
    assert shown(routes["eval: rare and common route mass"]) == {
        "routes/id/rare_mass",
        "routes/id/common_mass",
        "routes/a.b/rare_mass",
        "routes/a.b/common_mass",
    }
    assert shown(routes["eval: forgotten routes per maze"]) == {
        "routes/id/forgotten",
        "routes/a.b/forgotten",
    }
    assert shown(layout["headline"]["a.b: exact pass@32"]) == {"eval/a.b/exact_pass@32"}
