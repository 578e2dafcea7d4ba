"""Maze layouts from text: `#` wall, `.` open, `S` start, `G` goal, one grid row per line.

A layout file holds one maze, or a collection of mazes separated by blank lines. A maze may
start with a header line `routes: K` declaring its number of simple start-to-goal paths
(default: the caller's `routes`, 1 unless asked otherwise: the single-solution promise).

A collection is a collection file, a single-maze file, a directory (its `*.txt` files in name
order) or a glob; the `*.txt` files in `mazerl/envs/layouts/` are addressable by file stem.
Every maze is validated: rectangular, known characters only, exactly one `S` and one `G`, the
goal reachable, exactly the declared number of simple paths. A rejection is a `LayoutError`
(a `ValueError`) whose message starts with `file:line:col:` and, in a file of several mazes,
names the maze (`maze 3:`). Mazes of one collection may differ in size: they are padded
explicitly with walls at the bottom and right to the collection's largest grid, so each maze
has one prompt shape whatever batch it is in.
"""

import functools
import glob
import re
from importlib import resources
from pathlib import Path

import numpy as np

from mazerl.core.errors import LayoutError
from mazerl.envs.maze import Maze, simple_paths

WALL, OPEN, START, GOAL = "#", ".", "S", "G"
MAX_SIDE = 129
MAX_ROUTES = 8
PARSED_FILES = 4096  # file versions whose parse `parsed_file` keeps (a large collection once)
ROUTES_HEADER = re.compile(r"routes:\s*(\S*)\s*$")


def shipped_layouts() -> dict[str, Path]:
    """The layouts and collections shipped in the package.

    Returns:
        Name (file stem) -> path of each.
    """
    folder = resources.files("mazerl.envs") / "layouts"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".txt")}


def resolve(name_or_path: str) -> Path:
    """The file behind a shipped layout name or a path.

    Args:
        name_or_path: a file path (`~` expanded) or a shipped layout's name.

    Returns:
        The file.

    Raises:
        LayoutError: neither a file nor a shipped name (the shipped names listed).
    """
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    shipped = shipped_layouts()
    if name_or_path in shipped:
        return shipped[name_or_path]
    known = ", ".join(sorted(shipped))
    raise LayoutError(name_or_path, 0, 0, f"no such file, and not a shipped layout ({known})")


def files(name_or_path: str) -> list[Path]:
    """The layout files of a collection.

    Args:
        name_or_path: a directory, a glob, a file path or a shipped name.

    Returns:
        A directory's `*.txt` files, a glob's matches (both in name order), or the one file
        behind a path or shipped name.

    Raises:
        LayoutError: an empty directory, a glob without matches, or no such file.
    """
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.glob("*.txt") if p.is_file())
        if not found:
            raise LayoutError(name_or_path, 0, 0, "directory holds no *.txt layout files")
        return found
    if not path.exists() and glob.has_magic(name_or_path):
        found = sorted(Path(p) for p in glob.glob(str(path)) if Path(p).is_file())
        if not found:
            raise LayoutError(name_or_path, 0, 0, "no file matches this pattern")
        return found
    return [resolve(name_or_path)]


def parse(text: str, source: str = "<string>", routes: int = 1) -> Maze:
    """Parse and validate one layout.

    Args:
        text: the layout, one grid row per line; `routes: K` as the first line declares its
            number of simple paths.
        source: where the text came from, for the error messages.
        routes: the exact number of simple start-goal paths required, unless the text
            declares its own.

    Returns:
        The maze with all its routes.

    Raises:
        LayoutError: the text is not a valid layout (`source:line:col: problem`).
    """
    return _parse_lines(text.splitlines(), source, routes, first_line=1, name=Path(source).stem)


def _parse_lines(lines: list[str], source: str, routes: int, first_line: int, name: str) -> Maze:
    """One maze from its lines, numbered from `first_line` in `source` for error messages."""
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
        first_line += 1
    if lines and (header := ROUTES_HEADER.match(lines[0])):
        value = header.group(1)
        if not value.isdigit() or not 1 <= int(value) <= MAX_ROUTES:
            col = header.start(1) + 1
            raise LayoutError(
                source, first_line, col, f"routes must be in [1, {MAX_ROUTES}], got {value!r}"
            )
        routes = int(value)
        lines.pop(0)
        first_line += 1
    if not lines:
        raise LayoutError(source, 0, 0, "empty layout")

    def error(r: int, c: int, problem: str) -> LayoutError:  # r, c: 0-based in `lines`
        return LayoutError(source, first_line + r, c + 1, problem)

    width = len(lines[0])
    if len(lines) > MAX_SIDE or width > MAX_SIDE:
        raise error(0, 0, f"layout is {len(lines)}x{width}; at most {MAX_SIDE}x{MAX_SIDE}")
    found: dict[str, list[tuple[int, int]]] = {START: [], GOAL: []}
    grid = np.ones((len(lines), width), dtype=np.uint8)
    for r, line in enumerate(lines):
        if len(line) != width:
            raise error(
                r, min(len(line), width), f"ragged row: {len(line)} columns, expected {width}"
            )
        for c, ch in enumerate(line):
            if ch == WALL:
                continue
            if ch not in (OPEN, START, GOAL):
                raise error(r, c, f"unknown character {ch!r} (use '#', '.', 'S', 'G')")
            grid[r, c] = 0
            if ch in found:
                found[ch].append((r, c))
    for ch, where in found.items():
        if not where:
            raise LayoutError(source, 0, 0, f"no '{ch}' cell, expected exactly one")
        if len(where) > 1:
            raise error(*where[1], f"{len(where)} '{ch}' cells, expected exactly one")
    start, goal = found[START][0], found[GOAL][0]
    paths = simple_paths(grid, start, goal, limit=routes + 1)
    if not paths:
        raise error(*goal, "goal unreachable from start")
    if len(paths) != routes:
        many = f"at least {len(paths)}" if len(paths) > routes else f"{len(paths)}"
        raise error(*goal, f"{many} simple paths from start to goal, expected exactly {routes}")
    return Maze(grid, start, goal, tuple(paths), name=name)


def blocks(text: str) -> list[tuple[int, list[str]]]:
    """The mazes of a collection text.

    Args:
        text: a layout file's text.

    Returns:
        `(first line number, lines)` per blank-line-separated block, line numbers 1-based.
    """
    out: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                out.append((number, current))
            current.append(line)
        else:
            current = []
    return out


def read_file(path: Path, routes: int = 1) -> list[Maze | LayoutError]:
    """Every maze of one layout file, each parsed or its rejection. In a file of several mazes
    the rejection names the maze (1-based) and the mazes are named `<stem>:<k>`. The parse is
    `parsed_file`'s, kept per file version: a file read again unchanged (by the validation,
    the training mazes, the evaluation sets, the base model) is parsed once; an edited one
    is parsed again.

    Args:
        path: as in `parse_file`.
        routes: as in `parse_file`.

    Returns:
        `parse_file`'s entries, as a list.
    """
    try:
        stat = path.stat()
    except OSError as e:
        return [LayoutError(str(path), 0, 0, f"cannot read: {e}")]
    return list(parsed_file(path, path.resolve(), routes, (stat.st_mtime_ns, stat.st_size)))


@functools.lru_cache(maxsize=PARSED_FILES)
def parsed_file(
    path: Path, resolved: Path, routes: int, version: tuple[int, int]
) -> tuple[Maze | LayoutError, ...]:
    """`parse_file(path, routes)` of one version of a file, a pure function of its arguments
    and so kept by `functools.lru_cache` (the `PARSED_FILES` latest; `parsed_file.cache_info()`
    counts the reads it saved): the same file unchanged is the same call, an edited file
    (another `version`) or the same name from another folder (another `resolved`) another.

    Args:
        path: the layout file, named as given in messages.
        resolved: the absolute file (`path.resolve()`).
        routes: as in `parse_file`.
        version: `(st_mtime_ns, st_size)` of the file: its modification time in nanoseconds
            and its size in bytes.

    Returns:
        `parse_file`'s entries, the same objects for every caller of one version.
    """
    return parse_file(path, routes)


def parse_file(path: Path, routes: int) -> tuple[Maze | LayoutError, ...]:
    """One layout file's mazes, each parsed or its rejection (`parsed_file` keeps it).

    Args:
        path: the layout file, named as given in messages.
        routes: the exact number of simple start-goal paths required of a maze whose block
            declares none (`maze.routes`).

    Returns:
        One entry per maze block of the file, in order: the `Maze`, or the `LayoutError`
        that rejects it (an unreadable file: one error).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return (LayoutError(str(path), 0, 0, f"cannot read: {e}"),)
    parts = blocks(text)
    if len(parts) <= 1:
        return (_try(lambda: parse(text, str(path), routes)),)
    out: list[Maze | LayoutError] = []
    for k, (first, lines) in enumerate(parts, start=1):
        name = f"{path.stem}:{k}"
        maze = _try(lambda f=first, ls=lines, n=name: _parse_lines(ls, str(path), routes, f, n))
        if isinstance(maze, LayoutError):
            line, col = maze.line or first, maze.col or 1
            maze = LayoutError(maze.source, line, col, f"maze {k}: {maze.problem}")
        out.append(maze)
    return tuple(out)


def _try(fn) -> Maze | LayoutError:
    try:
        return fn()
    except LayoutError as e:
        return e


def read_collection(name_or_path: str, routes: int = 1) -> list[Maze | LayoutError]:
    """Every maze of a collection, each parsed or its rejection.

    Args:
        name_or_path: a collection (see `files`).
        routes: the exact number of simple start-goal paths a maze must have, unless it
            declares its own (`routes: K`).

    Returns:
        A `Maze` or a `LayoutError` per maze, unpadded, in file order.

    Raises:
        LayoutError: the collection names no file.
    """
    return [m for path in files(name_or_path) for m in read_file(path, routes)]


def load_collection(name_or_path: str, routes: int = 1) -> tuple[Maze, ...]:
    """The validated mazes of a collection.

    Args:
        name_or_path: a collection (see `files`).
        routes: the exact number of simple start-goal paths a maze must have, unless it
            declares its own (`routes: K`).

    Returns:
        The mazes, padded with walls to the collection's largest grid.

    Raises:
        LayoutError: the first rejection (with the number of further ones).
    """
    read = read_collection(name_or_path, routes)
    bad = [m for m in read if isinstance(m, LayoutError)]
    if bad:
        if len(bad) == 1:
            raise bad[0]
        more = f" (and {len(bad) - 1} more; `mazerl-maze check {name_or_path}` lists all)"
        raise LayoutError(bad[0].source, bad[0].line, bad[0].col, bad[0].problem + more)
    mazes = [m for m in read if isinstance(m, Maze)]
    shape = (max(m.shape[0] for m in mazes), max(m.shape[1] for m in mazes))
    return tuple(pad(m, shape) for m in mazes)


def load(name_or_path: str, routes: int = 1) -> Maze:
    """Load and validate a single-maze layout.

    Args:
        name_or_path: a shipped layout name or a file path.
        routes: the exact number of simple start-goal paths a maze must have, unless it
            declares its own (`routes: K`).

    Returns:
        The maze.

    Raises:
        LayoutError: the layout is invalid or holds more than one maze.
    """
    mazes = load_collection(name_or_path, routes)
    if len(mazes) != 1:
        raise LayoutError(name_or_path, 0, 0, f"{len(mazes)} mazes, expected one")
    return mazes[0]


def pad(maze: Maze, shape: tuple[int, int]) -> Maze:
    """A maze padded with walls.

    Args:
        maze: the maze.
        shape: the grid shape `(H, W)` wanted, at least the maze's.

    Returns:
        `maze` with wall rows/columns added at the bottom/right up to `shape` (same routes).
    """
    if maze.shape == shape:
        return maze
    grid = np.ones(shape, dtype=np.uint8)
    grid[: maze.shape[0], : maze.shape[1]] = maze.grid
    return Maze(grid, maze.start, maze.goal, maze.routes, name=maze.name)


def to_text(maze: Maze) -> str:
    """The layout text of a maze (inverse of `parse`).

    Args:
        maze: the maze.

    Returns:
        One grid row per line, with a `routes: K` header when K > 1.
    """
    chars = np.where(maze.grid == 1, WALL, OPEN).astype("<U1")
    chars[maze.start] = START
    chars[maze.goal] = GOAL
    header = f"routes: {len(maze.routes)}\n" if len(maze.routes) > 1 else ""
    return header + "\n".join("".join(row) for row in chars) + "\n"


def collection_text(mazes) -> str:
    """A collection file's text.

    Args:
        mazes: the mazes.

    Returns:
        Their layouts (`to_text`) separated by blank lines.
    """
    return "\n".join(to_text(m) for m in mazes)
