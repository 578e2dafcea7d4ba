"""Pictures of a maze: text (`ansi`) and an RGB array (`rgb_array`, TensorBoard images)."""

from collections.abc import Sequence

import numpy as np

from mazerl.envs.maze import Cell, Maze

COLOURS = {
    "wall": (40, 40, 48),
    "open": (245, 245, 240),
    "start": (60, 170, 80),
    "goal": (215, 60, 50),
    "path": (120, 170, 235),
    "agent": (30, 70, 200),
}


def render_ansi(maze: Maze, path: Sequence[Cell] = ()) -> str:
    """Text picture: `#` wall, `S` start, `G` goal, `*` visited, `@` the agent (last path cell,
    unless it stands on S or G)."""
    chars = np.where(maze.grid == 1, "#", " ").astype("<U1")
    for cell in path:
        chars[cell] = "*"
    if len(path) > 1:
        chars[path[-1]] = "@"
    chars[maze.start] = "S"
    chars[maze.goal] = "G"
    return "\n".join("".join(row) for row in chars) + "\n"


def render_rgb(maze: Maze, paths: Sequence[Sequence[Cell]] = (), cell_px: int = 8) -> np.ndarray:
    """`(H * cell_px, W * cell_px, 3)` uint8 image; each path is drawn in blue, later on top,
    and the last cell of the last path is the agent."""
    h, w = maze.shape
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = COLOURS["open"]
    img[maze.grid == 1] = COLOURS["wall"]
    for path in paths:
        for cell in path:
            img[cell] = COLOURS["path"]
    img[maze.start] = COLOURS["start"]
    img[maze.goal] = COLOURS["goal"]
    if paths and len(paths[-1]) > 1:
        img[paths[-1][-1]] = COLOURS["agent"]
    return np.repeat(np.repeat(img, cell_px, axis=0), cell_px, axis=1)
