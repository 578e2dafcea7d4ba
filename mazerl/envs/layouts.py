"""Maze layouts from text: `#` wall, `.` open, `S` start, `G` goal, one grid row per line.

Shipped layouts are the `*.txt` files in `mazerl/envs/layouts/`, addressed by file stem; any
path works too. Every layout is validated: rectangular, known characters only, exactly one
`S` and one `G`, the goal reachable, and exactly `routes` simple start-to-goal paths (1 by
default: the single-solution promise). A rejection is a `LayoutError` (a `ValueError`) whose
message starts with `file:line:col:`.
"""

from importlib import resources
from pathlib import Path

import numpy as np

from mazerl.core.errors import LayoutError
from mazerl.envs.maze import Maze, simple_paths

WALL, OPEN, START, GOAL = "#", ".", "S", "G"
MAX_SIDE = 129


def shipped_layouts() -> dict[str, Path]:
    """Name -> path of every layout shipped in the package."""
    folder = resources.files("mazerl.envs") / "layouts"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".txt")}


def resolve(name_or_path: str) -> Path:
    """The file behind a shipped layout name or a path."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    shipped = shipped_layouts()
    if name_or_path in shipped:
        return shipped[name_or_path]
    known = ", ".join(sorted(shipped))
    raise LayoutError(name_or_path, 0, 0, f"no such file, and not a shipped layout ({known})")


def parse(text: str, source: str = "<string>", routes: int = 1) -> Maze:
    """Parse and validate a layout. `routes` is the exact number of simple paths required."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise LayoutError(source, 0, 0, "empty layout")
    width = len(lines[0])
    if width == 0:
        raise LayoutError(source, 1, 1, "empty first row")
    if len(lines) > MAX_SIDE or width > MAX_SIDE:
        raise LayoutError(
            source, 1, 1, f"layout is {len(lines)}x{width}; at most {MAX_SIDE}x{MAX_SIDE}"
        )
    found: dict[str, list[tuple[int, int]]] = {START: [], GOAL: []}
    grid = np.ones((len(lines), width), dtype=np.uint8)
    for r, line in enumerate(lines):
        if len(line) != width:
            col = min(len(line), width) + 1
            raise LayoutError(
                source, r + 1, col, f"ragged row: {len(line)} columns, expected {width}"
            )
        for c, ch in enumerate(line):
            if ch == WALL:
                continue
            if ch not in (OPEN, START, GOAL):
                raise LayoutError(
                    source, r + 1, c + 1, f"unknown character {ch!r} (use '#', '.', 'S', 'G')"
                )
            grid[r, c] = 0
            if ch in found:
                found[ch].append((r, c))
    for ch, where in found.items():
        if not where:
            raise LayoutError(source, 0, 0, f"no '{ch}' cell, expected exactly one")
        if len(where) > 1:
            r, c = where[1]
            raise LayoutError(
                source, r + 1, c + 1, f"{len(where)} '{ch}' cells, expected exactly one"
            )
    start, goal = found[START][0], found[GOAL][0]
    paths = simple_paths(grid, start, goal, limit=routes + 1)
    gr, gc = goal[0] + 1, goal[1] + 1
    if not paths:
        raise LayoutError(source, gr, gc, "goal unreachable from start")
    if len(paths) != routes:
        many = f"at least {len(paths)}" if len(paths) > routes else f"{len(paths)}"
        raise LayoutError(
            source, gr, gc, f"{many} simple paths from start to goal, expected exactly {routes}"
        )
    return Maze(grid, start, goal, tuple(paths), name=Path(source).stem)


def load(name_or_path: str, routes: int = 1) -> Maze:
    """Load and validate a shipped layout (by name) or a layout file (by path)."""
    path = resolve(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LayoutError(str(path), 0, 0, f"cannot read: {e}") from None
    return parse(text, source=str(path), routes=routes)


def to_text(maze: Maze) -> str:
    """The layout text of a maze (inverse of `parse`)."""
    chars = np.where(maze.grid == 1, WALL, OPEN).astype("<U1")
    chars[maze.start] = START
    chars[maze.goal] = GOAL
    return "\n".join("".join(row) for row in chars) + "\n"
