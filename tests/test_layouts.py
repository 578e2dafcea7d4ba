"""Layout parsing and every rejection, with file:line:col in the message."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mazerl.core.errors import LayoutError
from mazerl.envs import layouts

GOOD = "#####\n#S..#\n###.#\n#G..#\n#####\n"


def test_parse_round_trip():
    maze = layouts.parse(GOOD, "good.txt")
    assert maze.start == (1, 1) and maze.goal == (3, 1)
    assert maze.solution == (3, 3, 1, 1, 2, 2)  # RIGHT RIGHT DOWN DOWN LEFT LEFT
    assert layouts.to_text(maze) == GOOD


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("", "bad.txt", "empty layout"),
        ("#####\n#S..#\n###.\n#G..#\n#####\n", "bad.txt:3:5", "ragged row: 4 columns, expected 5"),
        ("#####\n#S..#\n###.##\n#G..#\n", "bad.txt:3:6", "ragged row: 6 columns, expected 5"),
        ("#####\n#S.x#\n#G..#\n#####\n", "bad.txt:2:4", "unknown character 'x'"),
        ("#####\n#...#\n#G..#\n#####\n", "bad.txt", "no 'S' cell"),
        ("#####\n#S.S#\n#G..#\n#####\n", "bad.txt:2:4", "2 'S' cells"),
        ("#####\n#S..#\n#G.G#\n#####\n", "bad.txt:3:4", "2 'G' cells"),
        ("#####\n#S..#\n#####\n#G..#\n#####\n", "bad.txt:4:2", "goal unreachable"),
        ("#####\n#S..#\n#.#.#\n#..G#\n#####\n", "bad.txt:4:4", "at least 2 simple paths"),
    ],
)
def test_rejections_name_file_line_column_and_problem(text, where, problem):
    with pytest.raises(LayoutError) as err:
        layouts.parse(text, "bad.txt")
    assert str(err.value).startswith(where + ": ")
    assert problem in str(err.value)
    assert isinstance(err.value, ValueError)


def test_load_by_name_and_path(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text(GOOD)
    assert layouts.load(str(path)).solution == layouts.parse(GOOD).solution
    assert layouts.load("tiny").shape == (5, 5)
    with pytest.raises(LayoutError, match="not a shipped layout"):
        layouts.load(str(tmp_path / "missing.txt"))
    path.write_bytes(b"\xff\xfe#")
    with pytest.raises(LayoutError, match="cannot read"):
        layouts.load(str(path))


def test_exact_route_count_option():
    two = "#####\n#S..#\n#.#.#\n#..G#\n#####\n"
    assert len(layouts.parse(two, routes=2).routes) == 2
    with pytest.raises(LayoutError, match="expected exactly 3"):
        layouts.parse(two, routes=3)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="#.SG\nx ", max_size=80))
def test_random_text_is_accepted_or_rejected_cleanly(text):
    try:
        maze = layouts.parse(text, "fuzz.txt")
    except LayoutError as e:
        assert str(e).startswith("fuzz.txt")
    else:
        assert len(maze.routes) == 1


def test_a_layout_declares_its_route_count():
    two = "routes: 2\n#####\n#S..#\n#.#.#\n#..G#\n#####\n"
    assert len(layouts.parse(two, "two.txt").routes) == 2  # the header wins over routes=1
    with pytest.raises(LayoutError, match=r"^two\.txt:5:4: 2 simple paths.*exactly 3"):
        layouts.parse(two.replace("2", "3", 1), "two.txt")
    assert layouts.to_text(layouts.parse(two)) == two


def test_a_layout_file_is_parsed_once_per_version_and_the_latest_versions_kept(
    tmp_path, monkeypatch
):
    """`parsed_file` keeps one parse per file version: read again unchanged, the file is not
    parsed again; edited, the new maze is read; and only the `PARSED_FILES` latest versions
    are kept, so a process that reads many files does not keep them all."""
    parses, parse_file = [], layouts.parse_file

    def counting(path, routes):
        parses.append(path.name)
        return parse_file(path, routes)

    monkeypatch.setattr(layouts, "parse_file", counting)
    path = tmp_path / "m.txt"
    path.write_text("S.#\n#.#\n#.G\n")
    assert [m.shape for m in layouts.load_collection(str(path))] == [(3, 3)]
    assert [m.shape for m in layouts.load_collection(str(path))] == [(3, 3)]
    assert parses == ["m.txt"]
    path.write_text("S.#\n#.#\n#.#\n#.G\n")  # edited between two runs of one process
    assert [m.shape for m in layouts.load_collection(str(path))] == [(4, 3)]
    assert parses == ["m.txt", "m.txt"]
    for i in range(layouts.PARSED_FILES):  # as many other files: m.txt's parse is dropped
        other = tmp_path / f"other{i}.txt"
        other.write_text("S.G\n")
        layouts.read_file(other)
    layouts.read_file(path)
    assert parses[-1] == "m.txt" and len(parses) == 3 + layouts.PARSED_FILES
