"""Layout collections end to end: files, directories, globs, route headers, padding, the
evaluation sets and training pool they make, `mazerl-maze check/export/show`, and runs."""

from pathlib import Path

import numpy as np
import pytest
from conftest import FAST, metrics, run_app, scalars
from omegaconf import OmegaConf

from mazerl.core.errors import ConfigError, LayoutError
from mazerl.envs import layouts
from mazerl.envs.spec import MazeSpec, MazeTask, sample_mazes
from mazerl.eval.evaluate import build_sets
from mazerl.train.collect import TrainingMazes

ONE = "#####\n#S..#\n###.#\n#G..#\n#####\n"  # one route: RIGHT RIGHT DOWN DOWN LEFT LEFT
TWO = "#####\n#S..#\n#.#.#\n#..G#\n#####\n"  # two routes of 4 moves
WIDE = "#######\n#S....#\n#####.#\n#G....#\n#######\n"  # 5x7, one route of 10 moves


def test_collection_file_mazes_names_and_declared_routes(tmp_path):
    path = tmp_path / "set.txt"
    path.write_text(ONE + "\n" + "routes: 2\n" + TWO + "\n\n" + WIDE)
    mazes = layouts.load_collection(str(path))
    assert [m.name for m in mazes] == ["set:1", "set:2", "set:3"]
    assert [len(m.routes) for m in mazes] == [1, 2, 1]
    # route ids as for braid mazes: sorted by (length, moves); DOWN=1 before RIGHT=3
    assert mazes[1].routes == ((1, 1, 3, 3), (3, 3, 1, 1))
    # padded explicitly to the largest grid (5x7): walls on the right, routes unchanged
    assert {m.shape for m in mazes} == {(5, 7)}
    assert mazes[0].grid[:, 5:].all() and mazes[0].solution == (3, 3, 1, 1, 2, 2)
    unpadded = layouts.read_collection(str(path))
    assert layouts.collection_text(unpadded) == ONE + "\n" + "routes: 2\n" + TWO + "\n" + WIDE


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        (ONE + "\n" + TWO, ":10:4: maze 2: ", "at least 2 simple paths, expected exactly 1"),
        (ONE + "\nroutes: 9\n" + ONE, ":7:9: maze 2: ", "routes must be in [1, 8], got '9'"),
        (ONE + "\nroutes: 3\n" + TWO, ":11:4: maze 2: ", "2 simple paths, expected exactly 3"),
        (TWO + "\n" + ONE + "\n" + TWO, ":4:4: maze 1: ", "(and 1 more; `mazerl-maze check"),
        (ONE + "\n#####\n#S..#\n#####\n", ":7:1: maze 2: ", "no 'G' cell"),
    ],
)
def test_a_collection_with_a_bad_maze_is_rejected_naming_it(tmp_path, text, where, problem):
    path = tmp_path / "set.txt"
    path.write_text(text)
    with pytest.raises(LayoutError) as err:
        layouts.load_collection(str(path))
    message = str(err.value).replace("simple paths from start to goal", "simple paths")
    assert message.startswith(f"{path}{where}"), message
    assert problem in message


def test_directory_glob_and_shipped_collection(tmp_path):
    (tmp_path / "b.txt").write_text(WIDE)
    (tmp_path / "a.txt").write_text(ONE + "\n" + ONE.replace("G", "x", 0))
    (tmp_path / "notes.md").write_text("not a layout")
    by_dir = layouts.load_collection(str(tmp_path))
    assert [m.name for m in by_dir] == ["a:1", "a:2", "b"]
    assert [m.name for m in layouts.load_collection(str(tmp_path / "b*.txt"))] == ["b"]
    with pytest.raises(LayoutError, match="no file matches"):
        layouts.load_collection(str(tmp_path / "z*.txt"))
    shipped = layouts.load_collection("prim5-20")
    assert len(shipped) == 20 and {m.shape for m in shipped} == {(11, 11)}
    assert len({m.key for m in shipped}) == 20


def test_spec_draws_uniformly_from_a_collection():
    import numpy as np

    spec = MazeSpec(layout="prim5-20")
    counts = np.bincount(
        [spec.collection.index(spec.sample(np.random.default_rng(i))) for i in range(2000)],
        minlength=20,
    )
    assert counts.min() > 60 and counts.max() < 140  # expected 100 each, sd about 10
    assert spec.fixed is None and MazeSpec(layout="tiny").fixed.shape == (5, 5)


def _sets(*sets, seed=1234):
    full = [
        {"size_delta": 0, "generator": None, "start_goal": None, "num_mazes": 3} | s for s in sets
    ]
    return OmegaConf.create({"sets": [{"layout": None} | s for s in full], "seed": seed})


def test_evaluation_sets_from_collections_and_layout_runs(tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("######\n#S..G#\n######\n")  # 3x6: no generator makes this grid
    sets = build_sets(MazeSpec(), _sets({"name": "mine", "layout": "prim5-20"}, {"name": "id"}))
    assert [(s.name, len(s.mazes)) for s in sets] == [("mine", 20), ("id", 3)]
    # a layout run: `id` is the training collection; variants are generated at its cell size
    run = MazeSpec(layout="prim5-20")
    sets = build_sets(run, _sets({"name": "id"}, {"name": "big", "size_delta": 2}))
    assert [m.key for m in sets[0].mazes] == [m.key for m in MazeSpec(layout="prim5-20").collection]
    assert {m.shape for m in sets[1].mazes} == {(15, 15)}
    notes = []
    sets = build_sets(
        MazeSpec(layout=str(odd)),
        _sets({"name": "id"}, {"name": "big", "size_delta": 2}),
        notes.append,
    )
    assert [s.name for s in sets] == ["id"] and "big skipped" in notes[0]


def test_training_pool_from_a_collection_and_a_too_small_space():
    spec = MazeSpec(layout="prim5-20")
    notes = []
    shared = {spec.collection[3].key, spec.collection[7].key}
    mazes = TrainingMazes(MazeTask(spec), shared, seed=0, log=notes.append)
    assert notes == [
        "note: evaluation is (partly) on training mazes: 2 of the 20 mazes of "
        "maze.layout=prim5-20 are evaluation mazes"
    ]
    drawn = mazes.draw(8, it=0, rounds=0)
    assert len({m.key for m in drawn}) == 8 and all(m in spec.collection for m in drawn)
    with pytest.raises(ConfigError, match=r"maze\.pool_size must be 0 with maze\.layout"):
        TrainingMazes(MazeTask(spec, pool_size=5), set(), seed=0)
    tiny = MazeSpec(size=2)  # 2x2 cells, corners: 4 distinct mazes
    every = {m.key for m in sample_mazes(tiny, 200, set(), 0, 99)}
    assert len(every) == 4
    with pytest.raises(
        ConfigError, match=r"gave 4 distinct mazes, 4 of them evaluation.*maze\.size"
    ):
        TrainingMazes(MazeTask(tiny), every, seed=0)


def _maze_cli(*args, cwd):
    return run_app("mazerl.apps.maze", *args, cwd=cwd)


def test_cli_export_check_show(tmp_path):
    out = _maze_cli("export", "set.txt", "--count", "5", "--size", "4", "--seed", "7", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wrote set.txt: 5 prim mazes of 4x4 cells")
    again = _maze_cli("export", "set.txt", "--count", "5", cwd=tmp_path)
    assert again.returncode == 2 and "exists; pass --force" in again.stderr
    # maze 2 of the export is `show --seed 8`
    shown = _maze_cli("show", "--layout", "set.txt", "--index", "2", cwd=tmp_path).stdout
    seeded = _maze_cli("show", "--size", "4", "--seed", "8", cwd=tmp_path).stdout
    assert shown.splitlines()[1:] == seeded.splitlines()[1:]
    # hand-edit maze 3 into two routes: check reports every maze and exits 2
    text = (tmp_path / "set.txt").read_text().split("\n\n")
    lines = ["#########", "#S......#", "#.#####.#", "#......G#", "#########"]
    text[2] = "\n".join(lines) + "\n"
    (tmp_path / "set.txt").write_text("\n\n".join(text))
    out = _maze_cli("check", "set.txt", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("error: set.txt:") and ": maze 3: at least 2 simple" in out.stderr
    assert out.stdout.splitlines()[-1] == "set.txt: 5 mazes, 4 ok, 1 rejected"
    assert _maze_cli("check", "set.txt", "--routes", "2", cwd=tmp_path).stdout.count("ok: ") == 1


def test_run_trains_on_a_20_maze_collection_and_evaluates_on_another(train, tmp_path):
    other = tmp_path / "other.txt"
    _maze_cli("export", str(other), "--count", "20", "--size", "5", "--seed", "100", cwd=tmp_path)
    out, run_dir = train(
        "maze.layout=prim5-20",
        "maze.size=5",
        f"eval.sets=[{{name: other, layout: {other}}}, {{name: pool}}]",
        "train.iterations=2",
        "base.steps=20",
    )
    assert "evaluation is (partly) on training mazes: 20 of the 20" in out.stdout
    final = metrics(run_dir)["final"]
    assert {"eval/other/pass@1", "eval/pool/pass@1"} <= set(final)
    assert scalars(run_dir)["train/reward_mean"][-1][0] == 2


def test_single_layout_run_trains_and_evaluates(train):
    out, run_dir = train("maze.layout=tiny", "train.iterations=2", "base.steps=20")
    assert out.stdout.count("evaluation is (partly) on training mazes: 1 of the 1") == 1
    assert "eval/id/pass@1" in metrics(run_dir)["final"]


COUNT_PARSES = """
import sys
from mazerl.envs import layouts

parse, parsed = layouts.parse_file, []


def counting(path, routes):
    parsed.append(str(path))
    return parse(path, routes)


layouts.parse_file = counting
from mazerl.apps.train import main

try:
    main()
finally:
    print(*(f"parsed {p}" for p in parsed), sep="\\n")
"""


def test_a_run_on_a_collection_parses_its_file_once(tmp_path, base_cache):
    """Validation, the training pool, the evaluation sets (one of them the same file again),
    the held-out mazes and the base model all read one parse of the layout file."""
    path = tmp_path / "six.txt"
    spec = MazeSpec(size=4)
    mazes = [spec.sample(np.random.default_rng(i)) for i in range(6)]
    path.write_text(layouts.collection_text(mazes))
    script = tmp_path / "count_parses.py"
    script.write_text(COUNT_PARSES)
    out = run_app(
        "count_parses", *FAST, f"hydra.run.dir={tmp_path / 'run'}",
        f"base.cache_dir={base_cache}", f"maze.layout={path}", "train.iterations=1",
        "base.steps=20", f"eval.sets=[{{name: id}}, {{name: again, layout: {path}}}]",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert metrics(tmp_path / "run")["iterations"] == 1
    lines = out.stdout.splitlines()
    parsed = [Path(line.removeprefix("parsed ")) for line in lines if line.startswith("parsed ")]
    assert [p.resolve() for p in parsed] == [path.resolve()]
