"""`mazerl-maze` as a user runs it."""

import subprocess
import sys
from dataclasses import fields

import gymnasium as gym

import mazerl
from mazerl.apps.maze import describe
from mazerl.envs.generators import GENERATORS
from mazerl.envs.spec import MazeSpec


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "mazerl.apps.maze", *args], capture_output=True, text=True
    )


def test_show_prints_maze_and_solution():
    out = run("show", "--generator", "prim", "--size", "8", "--seed", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("prim-8x8: 17x17 grid")
    assert len([ln for ln in lines if ln.startswith("#")]) == 17
    moves = lines[-1].removeprefix("solution: ").split()
    assert set(moves) <= {"UP", "DOWN", "LEFT", "RIGHT"}
    assert f"shortest {len(moves)} moves" in lines[0]


def test_check_accepts_and_rejects(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("#####\n#S..#\n###.#\n#G..#\n#####\n")
    out = run("check", str(good))
    assert out.returncode == 0 and out.stdout.startswith("ok: ")
    bad = tmp_path / "bad.txt"
    bad.write_text("#####\n#S..#\n#.#.#\n#..G#\n#####\n")
    out = run("check", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"error: {bad}:4:4: at least 2 simple paths from start to goal, expected exactly 1"
    )
    assert "Traceback" not in out.stderr


def test_unknown_generator_is_one_line():
    out = run("show", "--generator", "nope")
    assert out.returncode == 2
    known = ", ".join(GENERATORS.names())
    assert out.stderr == f"error: unknown generator 'nope'; known: {known}\n"


def test_show_takes_every_maze_spec_field_and_draws_what_the_env_draws():
    help_text = run("show", "--help").stdout
    for f in fields(MazeSpec):
        assert f"--{f.name.replace('_', '-')}" in help_text, f.name
    spec = MazeSpec(height=3, width=6, generator="kruskal", start_goal="random", routes=2)
    out = run(
        "show", "--height", "3", "--width", "6", "--generator", "kruskal",
        "--start-goal", "random", "--routes", "2", "--seed", "3",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    env = gym.make(mazerl.ENV_ID, maze_spec=spec)
    env.reset(seed=3)
    assert out.stdout == describe(env.unwrapped.maze) + "\n"
    assert "7x13 grid" in out.stdout and "2 simple path(s)" in out.stdout
