"""Braid mazes: a perfect maze with walls opened until exactly K simple start-goal routes exist.

Walls between two cells are tried in random order; an opening is kept only if it raises the
exact route count (`simple_paths`) without passing K and the routes keep the requested length
profile:

- `equal`: every route has the same length;
- `short_common`: route 0 is the unique shortest and every other route is at least
  `MIN_EXTRA` moves longer, so a policy that learnt shortest paths finds it often and the
  others rarely.
"""

import numpy as np

from mazerl.envs.maze import Maze, simple_paths

MIN_EXTRA = 4
LENGTH_PROFILES = ("equal", "short_common")


def _profile_ok(paths, profile: str) -> bool:
    lengths = sorted(len(p) for p in paths)
    if profile == "equal":
        return lengths[0] == lengths[-1]
    return len(lengths) == 1 or lengths[1] >= lengths[0] + MIN_EXTRA


def braid(maze: Maze, routes: int, profile: str, rng: np.random.Generator) -> Maze | None:
    """The maze with walls opened to give exactly `routes` simple routes.

    Args:
        maze: a perfect maze (one route).
        routes: K, the number of simple start-goal routes wanted.
        profile: the routes' length profile, one of `LENGTH_PROFILES` (module docstring).
        rng: orders the walls tried.

    Returns:
        The braid maze, its `routes` sorted by (length, moves), or None if the greedy search
        over this maze's walls cannot reach K routes.
    """
    grid = maze.grid.copy()
    h, w = grid.shape
    walls = [
        (r, c)
        for r in range(1, h - 1)
        for c in range(1, w - 1)
        if grid[r, c] == 1 and (r % 2) != (c % 2)  # between two cells, not a pillar
    ]
    count = 1
    for k in rng.permutation(len(walls)):
        wall = walls[k]
        grid[wall] = 0
        paths = simple_paths(grid, maze.start, maze.goal, limit=routes + 1)
        if count < len(paths) <= routes and _profile_ok(paths, profile):
            count = len(paths)
            if count == routes:
                return Maze(
                    grid, maze.start, maze.goal, tuple(paths), name=f"{maze.name}-braid{routes}"
                )
        else:
            grid[wall] = 1
    return None
