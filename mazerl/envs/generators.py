"""Perfect-maze generators, registered by name, and start/goal placement.

A generator takes `(height, width, rng)` in cells and returns the list of carved passages
between adjacent cells, which form a spanning tree of the `height x width` cell lattice, so
the maze has exactly one simple path between any two cells. Cell `(i, j)` sits at grid
coordinates `(2i+1, 2j+1)`; walls are the even lines. All randomness comes from the given
`numpy.random.Generator` (PCG64), so the same seed gives the same maze on every machine.

Adding a generator is one decorated function here or in a new module of `mazerl.envs` (the
registry finds it there, `mazerl.core.registry`), or in a plug-in.
"""

from collections.abc import Callable

import numpy as np

from mazerl.core.errors import ConfigError
from mazerl.core.registry import Registry
from mazerl.envs.maze import Cell, Maze, shortest_path

Passage = tuple[int, int]  # two flat cell indices i*width + j
Generator = Callable[[int, int, np.random.Generator], list[Passage]]

GENERATORS: Registry[Generator] = Registry("generator", "mazerl.envs", ("GENERATORS.register",))
PLACEMENTS: Registry[Callable[[int, int, list[Passage], np.random.Generator], tuple[int, int]]]
PLACEMENTS = Registry("start_goal placement", "mazerl.envs", ("PLACEMENTS.register",))

MIN_CELLS, MAX_CELLS = 2, 64


def _cell_neighbours(idx: int, height: int, width: int) -> list[int]:
    i, j = divmod(idx, width)
    out = []
    if i > 0:
        out.append(idx - width)
    if i < height - 1:
        out.append(idx + width)
    if j > 0:
        out.append(idx - 1)
    if j < width - 1:
        out.append(idx + 1)
    return out


@GENERATORS.register("dfs")
def dfs(height: int, width: int, rng: np.random.Generator) -> list[Passage]:
    """Recursive backtracker: long winding corridors, few dead ends.

    Args:
        height: rows of cells.
        width: columns of cells.
        rng: the only source of randomness.

    Returns:
        The passages of a spanning tree of the cells: `(a, b)` flat cell indices
        `i * width + j` of two neighbours, `height * width - 1` of them.
    """
    n = height * width
    current = int(rng.integers(n))
    seen = {current}
    stack = [current]
    passages = []
    while stack:
        current = stack[-1]
        fresh = [c for c in _cell_neighbours(current, height, width) if c not in seen]
        if not fresh:
            stack.pop()
            continue
        nxt = fresh[int(rng.integers(len(fresh)))]
        seen.add(nxt)
        passages.append((current, nxt))
        stack.append(nxt)
    return passages


@GENERATORS.register("prim")
def prim(height: int, width: int, rng: np.random.Generator) -> list[Passage]:
    """Randomized Prim: grows from one cell through a random frontier wall; many short dead
    ends.

    Args:
        height: rows of cells.
        width: columns of cells.
        rng: the only source of randomness.

    Returns:
        The passages of a spanning tree of the cells: `(a, b)` flat cell indices
        `i * width + j` of two neighbours, `height * width - 1` of them.
    """
    n = height * width
    first = int(rng.integers(n))
    inside = {first}
    frontier = [(first, c) for c in _cell_neighbours(first, height, width)]
    passages = []
    while frontier:
        k = int(rng.integers(len(frontier)))
        frontier[k], frontier[-1] = frontier[-1], frontier[k]
        a, b = frontier.pop()
        if b in inside:
            continue
        inside.add(b)
        passages.append((a, b))
        frontier.extend((b, c) for c in _cell_neighbours(b, height, width) if c not in inside)
    return passages


@GENERATORS.register("kruskal")
def kruskal(height: int, width: int, rng: np.random.Generator) -> list[Passage]:
    """Randomized Kruskal: join random walls between disjoint sets (union-find).

    Args:
        height: rows of cells.
        width: columns of cells.
        rng: the only source of randomness.

    Returns:
        The passages of a spanning tree of the cells: `(a, b)` flat cell indices
        `i * width + j` of two neighbours, `height * width - 1` of them.
    """
    n = height * width
    edges = [(a, b) for a in range(n) for b in _cell_neighbours(a, height, width) if a < b]
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    passages = []
    for k in rng.permutation(len(edges)):
        a, b = edges[k]
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            passages.append((a, b))
    return passages


@GENERATORS.register("wilson")
def wilson(height: int, width: int, rng: np.random.Generator) -> list[Passage]:
    """Wilson's algorithm: loop-erased random walks; a uniform sample of all spanning trees.

    Args:
        height: rows of cells.
        width: columns of cells.
        rng: the only source of randomness.

    Returns:
        The passages of a spanning tree of the cells: `(a, b)` flat cell indices
        `i * width + j` of two neighbours, `height * width - 1` of them.
    """
    n = height * width
    in_tree = [False] * n
    in_tree[int(rng.integers(n))] = True
    passages = []
    for start in rng.permutation(n):
        start = int(start)
        if in_tree[start]:
            continue
        nxt: dict[int, int] = {}
        cell = start
        while not in_tree[cell]:  # random walk, remembering only the last exit of each cell
            options = _cell_neighbours(cell, height, width)
            nxt[cell] = options[int(rng.integers(len(options)))]
            cell = nxt[cell]
        cell = start
        while not in_tree[cell]:  # the loop-erased path
            in_tree[cell] = True
            passages.append((cell, nxt[cell]))
            cell = nxt[cell]
    return passages


def _tree_distances(source: int, n: int, adjacency: list[list[int]]) -> list[int]:
    dist = [-1] * n
    dist[source] = 0
    queue = [source]
    for cell in queue:
        for nxt in adjacency[cell]:
            if dist[nxt] < 0:
                dist[nxt] = dist[cell] + 1
                queue.append(nxt)
    return dist


@PLACEMENTS.register("corners")
def corners(height, width, passages, rng) -> tuple[int, int]:
    """Start in the top-left cell, goal in the bottom-right cell.

    Args:
        height: rows of cells.
        width: columns of cells.
        passages: the maze's passages, as a generator returns them.
        rng: the only source of randomness.

    Returns:
        The flat cell indices `i * width + j` of the start and the goal.
    """
    return 0, height * width - 1


@PLACEMENTS.register("random")
def random_pair(height, width, passages, rng) -> tuple[int, int]:
    """Two distinct cells, uniformly at random.

    Args:
        height: rows of cells.
        width: columns of cells.
        passages: the maze's passages, as a generator returns them.
        rng: the only source of randomness.

    Returns:
        The flat cell indices `i * width + j` of the start and the goal.
    """
    start, goal = rng.choice(height * width, size=2, replace=False)
    return int(start), int(goal)


@PLACEMENTS.register("farthest")
def farthest(height, width, passages, rng) -> tuple[int, int]:
    """The two ends of the maze's longest path (tree diameter, found by two BFS passes).

    Args:
        height: rows of cells.
        width: columns of cells.
        passages: the maze's passages, as a generator returns them.
        rng: the only source of randomness.

    Returns:
        The flat cell indices `i * width + j` of the start and the goal.
    """
    n = height * width
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for a, b in passages:
        adjacency[a].append(b)
        adjacency[b].append(a)
    d0 = _tree_distances(0, n, adjacency)
    start = d0.index(max(d0))
    d1 = _tree_distances(start, n, adjacency)
    return start, d1.index(max(d1))


def carve(height: int, width: int, passages: list[Passage]) -> np.ndarray:
    """The grid of a cell lattice with some walls opened.

    Args:
        height: rows of cells.
        width: columns of cells.
        passages: `(a, b)` flat indices of neighbouring cells whose wall is opened.

    Returns:
        The `(2 * height + 1, 2 * width + 1)` uint8 grid, 1 = wall.
    """
    grid = np.ones((2 * height + 1, 2 * width + 1), dtype=np.uint8)
    grid[1::2, 1::2] = 0
    for a, b in passages:
        (ia, ja), (ib, jb) = divmod(a, width), divmod(b, width)
        grid[ia + ib + 1, ja + jb + 1] = 0
    return grid


def cell_to_grid(idx: int, width: int) -> Cell:
    """Where a cell of the lattice sits on the grid.

    Args:
        idx: the flat cell index `i * width + j`.
        width: columns of cells.

    Returns:
        The grid coordinates `(2i + 1, 2j + 1)`.
    """
    i, j = divmod(idx, width)
    return 2 * i + 1, 2 * j + 1


def check_size(height: int, width: int) -> None:
    """Check a lattice size.

    Args:
        height: rows of cells.
        width: columns of cells.

    Raises:
        ConfigError: a side that is not an integer in [MIN_CELLS, MAX_CELLS] = [2, 64].
    """
    for key, value in (("height", height), ("width", width)):
        if not isinstance(value, int) or not MIN_CELLS <= value <= MAX_CELLS:
            raise ConfigError(
                f"maze {key} must be an integer number of cells in [{MIN_CELLS}, {MAX_CELLS}], "
                f"got {value!r}"
            )


def generate(
    generator: str,
    height: int,
    width: int,
    rng: np.random.Generator,
    start_goal: str = "corners",
    name: str = "",
) -> Maze:
    """A perfect maze of `height x width` cells from the named generator and placement.

    Args:
        generator: a name of `GENERATORS` (`dfs`, `prim`, `kruskal`, `wilson`, ...).
        height: rows of cells, in [MIN_CELLS, MAX_CELLS] = [2, 64].
        width: columns of cells, in [2, 64].
        rng: the only source of randomness (PCG64: the same seed, the same maze everywhere).
        start_goal: a name of `PLACEMENTS` (`corners`, `random`, `farthest`).
        name: shown with the maze; "": `GENERATOR-HxW`.

    Returns:
        The maze: a `(2 * height + 1, 2 * width + 1)` grid with its one route.

    Raises:
        ConfigError: a size out of range, or a name that is not registered.
    """
    check_size(height, width)
    passages = GENERATORS.get(generator)(height, width, rng)
    s, g = PLACEMENTS.get(start_goal)(height, width, passages, rng)
    grid = carve(height, width, passages)
    start, goal = cell_to_grid(s, width), cell_to_grid(g, width)
    solution = shortest_path(grid, start, goal)
    assert solution is not None, "a spanning tree connects every pair of cells"
    return Maze(grid, start, goal, (solution,), name=name or f"{generator}-{height}x{width}")
