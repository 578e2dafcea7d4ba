"""Maze model, exact path counting and the generators."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mazerl.core.errors import ConfigError
from mazerl.envs import generators, layouts
from mazerl.envs.maze import DELTAS, is_open, replay, simple_paths


def brute_force_count(grid, start, goal) -> int:
    """Count simple paths by plain DFS, no pruning: the reference for `simple_paths`."""
    count = 0
    visited = {start}

    def walk(cell):
        nonlocal count
        if cell == goal:
            count += 1
            return
        for dr, dc in DELTAS:
            nxt = (cell[0] + dr, cell[1] + dc)
            if is_open(grid, nxt) and nxt not in visited:
                visited.add(nxt)
                walk(nxt)
                visited.discard(nxt)

    walk(start)
    return count


@settings(max_examples=150, deadline=None)
@given(
    h=st.integers(2, 5),
    w=st.integers(2, 5),
    wall_p=st.floats(0.0, 0.6),
    seed=st.integers(0, 2**32 - 1),
)
def test_simple_path_count_matches_brute_force(h, w, wall_p, seed):
    rng = np.random.default_rng(seed)
    grid = (rng.random((h, w)) < wall_p).astype(np.uint8)
    grid[0, 0] = grid[h - 1, w - 1] = 0
    expected = brute_force_count(grid, (0, 0), (h - 1, w - 1))
    paths = simple_paths(grid, (0, 0), (h - 1, w - 1), limit=10**6)
    assert len(paths) == expected
    assert len(set(paths)) == len(paths)
    for route in paths:  # every returned route is a real simple path ending at the goal
        cells = replay(grid, (0, 0), route)
        assert len(cells) == len(route) + 1 and cells[-1] == (h - 1, w - 1)
        assert len(set(cells)) == len(cells)
    assert paths == sorted(paths, key=lambda r: (len(r), r))
    if expected >= 3:  # the limit stops early and still reports exactly `limit`
        assert len(simple_paths(grid, (0, 0), (h - 1, w - 1), limit=2)) == 2


def test_open_room_has_many_paths_and_cut_branches_are_ignored():
    room = np.zeros((3, 3), dtype=np.uint8)  # 3x3 open room: 12 simple corner-to-corner paths
    assert len(simple_paths(room, (0, 0), (2, 2), limit=100)) == brute_force_count(
        room, (0, 0), (2, 2)
    )
    # a corridor with a big open room hanging off it: still exactly one simple path
    grid = np.ones((9, 9), dtype=np.uint8)
    grid[1, 1:8] = 0  # the corridor
    grid[3:8, 2:8] = 0  # a 5x6 open room ...
    grid[2, 5] = 0  # ... joined to the corridor through one cell
    assert len(simple_paths(grid, (1, 1), (1, 7), limit=2)) == 1


@pytest.mark.parametrize("name", generators.GENERATORS.names())
@settings(max_examples=25, deadline=None)
@given(
    h=st.integers(2, 9),
    w=st.integers(2, 9),
    placement=st.sampled_from(generators.PLACEMENTS.names()),
    seed=st.integers(0, 2**32 - 1),
)
def test_generated_mazes_have_exactly_one_simple_path(name, h, w, placement, seed):
    maze = generators.generate(name, h, w, np.random.default_rng(seed), placement)
    assert maze.shape == (2 * h + 1, 2 * w + 1)
    open_cells = int((maze.grid == 0).sum())
    assert open_cells == h * w + (h * w - 1)  # cells plus one opened wall per tree edge
    assert maze.start != maze.goal
    assert len(simple_paths(maze.grid, maze.start, maze.goal, limit=2)) == 1
    cells = replay(maze.grid, maze.start, maze.solution)
    assert cells[-1] == maze.goal and len(cells) == maze.shortest_path_length + 1
    # a spanning tree: every other cell is reachable by exactly one simple path too
    other = (1, 1) if maze.start != (1, 1) else (2 * h - 1, 2 * w - 1)
    assert len(simple_paths(maze.grid, maze.start, other, limit=2)) == 1


def test_corners_and_farthest_placement():
    rng = np.random.default_rng(0)
    maze = generators.generate("dfs", 6, 4, rng, "corners")
    assert maze.start == (1, 1) and maze.goal == (11, 7)
    far = generators.generate("prim", 6, 6, np.random.default_rng(5), "farthest")
    # no pair of cells is farther apart than the farthest pair
    cells = [(2 * i + 1, 2 * j + 1) for i in range(6) for j in range(6)]
    longest = max(
        len(simple_paths(far.grid, far.start, c, limit=1)[0]) for c in cells if c != far.start
    )
    assert far.shortest_path_length == longest


@pytest.mark.parametrize("name", generators.GENERATORS.names())
def test_same_seed_same_maze_across_processes(name):
    """Same seed, same maze, whatever the process's hash seed (no set-order dependence)."""
    code = (
        "import numpy as np, sys; from mazerl.envs.generators import generate; "
        f"m = generate('{name}', 7, 5, np.random.default_rng(42), 'random'); "
        "sys.stdout.write(m.key.hex())"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": str(h)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for h in (0, 1, 2)
    }
    here = generators.generate(name, 7, 5, np.random.default_rng(42), "random").key.hex()
    assert keys == {here}
    other = generators.generate(name, 7, 5, np.random.default_rng(43), "random")
    assert other.key.hex() != here


def test_wilson_is_uniform_over_spanning_trees():
    """A 2x3 lattice has 15 spanning trees; Wilson's algorithm samples each with prob 1/15."""
    rng = np.random.default_rng(0)
    counts: dict[frozenset, int] = {}
    n = 6000
    for _ in range(n):
        tree = frozenset(frozenset(p) for p in generators.wilson(2, 3, rng))
        counts[tree] = counts.get(tree, 0) + 1
    assert len(counts) == 15
    expected = n / 15
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 36.1  # 99.9th percentile of chi-square with 14 degrees of freedom


@pytest.mark.parametrize(("h", "w"), [(1, 5), (5, 65), (0, 0)])
def test_size_limits(h, w):
    with pytest.raises(ConfigError, match="cells in"):
        generators.generate("prim", h, w, np.random.default_rng(0))


def test_shipped_layouts_are_single_solution():
    shipped = layouts.shipped_layouts()
    assert {"tiny", "spiral", "large"} <= set(shipped)
    for name in shipped:
        for maze in layouts.load_collection(name):
            assert len(maze.routes) == 1
            assert replay(maze.grid, maze.start, maze.solution)[-1] == maze.goal
