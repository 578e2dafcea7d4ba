"""The maze object and exact path algorithms on its grid.

A maze is a `(H, W)` uint8 grid (1 = wall, 0 = open) with a start and a goal cell, given as
`(row, col)` grid coordinates. Moves are grid steps: UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3.
Stepping off the grid counts as entering a wall.

`simple_paths` enumerates the simple (no cell twice) start-to-goal paths exactly. It first
restricts the search to the biconnected blocks that the start-goal path crosses (Tarjan's
algorithm); cells outside those blocks cannot lie on any simple start-goal path. A perfect
maze's blocks along the path are all single edges (bridges), so uniqueness is decided in
O(cells) even on 41x41 grids.
"""

from collections import deque
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from mazerl.core.errors import ConfigError

UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
MOVE_NAMES = ("UP", "DOWN", "LEFT", "RIGHT")
DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))

# how an env step ended: MOVE continues the episode, every other event ends it (STOP is the
# batched stepper's stop action, the policy's DONE token)
EVENTS = ("move", "goal", "wall", "revisit", "stop")
MOVE, GOAL, WALL, REVISIT, STOP = range(len(EVENTS))

Cell = tuple[int, int]
Route = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Maze:
    """A maze with its exactly known correct answers.

    Attributes:
        grid: `(H, W)` uint8, 1 = wall (read-only).
        start: `(row, col)` grid coordinates of the start, an open cell.
        goal: `(row, col)` grid coordinates of the goal, an open cell.
        routes: every simple start-to-goal move sequence, sorted by (length, moves); the index
            is the route id. A perfect (single-solution) maze has exactly one.
        name: where it came from (generator and seed, or layout name), for display.
        key: bytes identifying the maze (shape, start, goal and grid): equal mazes, equal keys.
    """

    grid: np.ndarray
    start: Cell
    goal: Cell
    routes: tuple[Route, ...]
    name: str = ""
    key: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        grid = np.ascontiguousarray(self.grid, dtype=np.uint8)
        grid.setflags(write=False)
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "start", (int(self.start[0]), int(self.start[1])))
        object.__setattr__(self, "goal", (int(self.goal[0]), int(self.goal[1])))
        header = np.array([*grid.shape, *self.start, *self.goal], dtype=np.int32).tobytes()
        object.__setattr__(self, "key", header + grid.tobytes())

    @property
    def solution(self) -> Route:
        """The shortest correct move sequence (the unique one in a perfect maze)."""
        return self.routes[0]

    @property
    def shortest_path_length(self) -> int:
        return len(self.routes[0])

    @property
    def shape(self) -> tuple[int, int]:
        return self.grid.shape  # type: ignore[return-value]

    @property
    def num_open(self) -> int:
        return int((self.grid == 0).sum())


def default_max_steps(maze: Maze, allow_revisits: bool) -> int:
    """The step limit of an episode when `max_steps` is None.

    Args:
        maze: the maze.
        allow_revisits: whether entering a cell twice continues the episode.

    Returns:
        Open cells - 1 (the longest simple path) without revisits; 4x the open cells with.
    """
    return 4 * maze.num_open if allow_revisits else maze.num_open - 1


def check_max_steps(max_steps: int | None) -> int | None:
    """A checked step limit.

    Args:
        max_steps: a positive integer, or None (`default_max_steps`).

    Returns:
        `max_steps` itself, as an int or None.

    Raises:
        ConfigError: anything else (0 does not mean the default).
    """
    if max_steps is None:
        return None
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 1:
        raise ConfigError(
            f"max_steps must be a positive integer or None (the default: open cells - 1, or "
            f"4x the open cells with allow_revisits), got {max_steps!r}"
        )
    return int(max_steps)


def is_open(grid: np.ndarray, cell: Cell) -> bool:
    """Whether a cell is on the grid and open.

    Args:
        grid: `(H, W)` uint8, 1 = wall.
        cell: `(row, col)`, possibly off the grid.

    Returns:
        True for an open cell of the grid.
    """
    r, c = cell
    return 0 <= r < grid.shape[0] and 0 <= c < grid.shape[1] and grid[r, c] == 0


Adjacency = dict[Cell, list[tuple[int, Cell]]]


def _adjacency(grid: np.ndarray) -> Adjacency:
    """Every open cell's open 4-neighbours as `(move, cell)` pairs, in move order. Built once
    per search from a Python copy of the grid: indexing the numpy array cell by cell costs
    more than the searches themselves."""
    rows = grid.tolist()
    h, w = len(rows), len(rows[0])
    return {
        (r, c): [
            (move, (r + dr, c + dc))
            for move, (dr, dc) in enumerate(DELTAS)
            if 0 <= r + dr < h and 0 <= c + dc < w and rows[r + dr][c + dc] == 0
        ]
        for r in range(h)
        for c in range(w)
        if rows[r][c] == 0
    }


def _edge(a: Cell, b: Cell) -> tuple[Cell, Cell]:
    """An undirected edge's key: its two cells in sorted order."""
    return (a, b) if a < b else (b, a)


def shortest_path(grid: np.ndarray, start: Cell, goal: Cell) -> Route | None:
    """One shortest start-to-goal move sequence (BFS, moves tried in order).

    Args:
        grid: `(H, W)` uint8, 1 = wall.
        start: `(row, col)` of the start.
        goal: `(row, col)` of the goal.

    Returns:
        The moves (0 UP, 1 DOWN, 2 LEFT, 3 RIGHT), or None when the goal is unreachable.
    """
    return _shortest(_adjacency(grid), start, goal)


def _shortest(adj: Adjacency, start: Cell, goal: Cell) -> Route | None:
    parent: dict[Cell, tuple[Cell, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            moves = []
            while (link := parent[cell]) is not None:
                cell, move = link
                moves.append(move)
            return tuple(reversed(moves))
        for move, nxt in adj[cell]:
            if nxt not in parent:
                parent[nxt] = (cell, move)
                queue.append(nxt)
    return None


def replay(grid: np.ndarray, start: Cell, moves: Route) -> list[Cell]:
    """The cells that `moves` visits from `start`.

    Args:
        grid: `(H, W)` uint8, 1 = wall.
        start: `(row, col)` of the first cell.
        moves: actions, 0 UP, 1 DOWN, 2 LEFT, 3 RIGHT.

    Returns:
        The `(row, col)` cells from `start` (inclusive), stopping before any wall or at a
        non-move action (the policy's DONE).
    """
    cells = [start]
    for move in moves:
        if not 0 <= move < len(DELTAS):
            break
        dr, dc = DELTAS[move]
        nxt = (cells[-1][0] + dr, cells[-1][1] + dc)
        if not is_open(grid, nxt):
            break
        cells.append(nxt)
    return cells


def _path_blocks(adj: Adjacency, start: Cell, path_cells: list[Cell]) -> set[tuple[Cell, Cell]]:
    """Edges (`_edge` keys) of the biconnected blocks that contain an edge of the given
    start-goal path.

    Iterative Tarjan over the component of `start`. Every simple start-goal path crosses the
    same sequence of blocks, so these edges are the only ones any simple path can use.
    """
    disc: dict[Cell, int] = {start: 0}
    low: dict[Cell, int] = {start: 0}
    edge_stack: list[tuple[Cell, Cell]] = []
    block_of: dict[tuple[Cell, Cell], int] = {}
    blocks: list[list[tuple[Cell, Cell]]] = []
    stack = [(start, None, iter(adj[start]))]
    while stack:
        v, parent, it = stack[-1]
        for _, w in it:
            if w not in disc:
                disc[w] = low[w] = len(disc)
                edge_stack.append((v, w))
                stack.append((w, v, iter(adj[w])))
                break
            if w != parent and disc[w] < disc[v]:
                low[v] = min(low[v], disc[w])
                edge_stack.append((v, w))
        else:
            stack.pop()
            if stack:
                u = stack[-1][0]
                low[u] = min(low[u], low[v])
                if low[v] >= disc[u]:
                    block = []
                    while True:
                        edge = edge_stack.pop()
                        key = _edge(*edge)
                        block_of[key] = len(blocks)
                        block.append(key)
                        if edge == (u, v):
                            break
                    blocks.append(block)
    on_path = {block_of[_edge(a, b)] for a, b in pairwise(path_cells)}
    return {edge for b in on_path for edge in blocks[b]}


def simple_paths(grid: np.ndarray, start: Cell, goal: Cell, limit: int) -> list[Route]:
    """Simple start-to-goal move sequences, at most `limit` of them, sorted by (length, moves).

    Exact: when fewer than `limit` are returned, they are all of them. `len(...)` with
    `limit=2` decides the single-solution property.

    Args:
        grid: `(H, W)` uint8, 1 = wall.
        start: `(row, col)` of the start.
        goal: `(row, col)` of the goal.
        limit: the most routes returned.

    Returns:
        The routes, each a tuple of moves (0 UP, 1 DOWN, 2 LEFT, 3 RIGHT); empty when the
        goal is unreachable.
    """
    adj = _adjacency(grid)
    first = _shortest(adj, start, goal)
    if first is None:
        return []
    allowed = _path_blocks(adj, start, replay(grid, start, first))
    # [cell] -> its moves along block edges: the only ones a simple route can take
    moves_in = {a: [(m, b) for m, b in nbrs if _edge(a, b) in allowed] for a, nbrs in adj.items()}
    found: list[Route] = []
    path, moves, visited = [start], [], {start}
    branches = [iter(moves_in[start])]
    while branches:
        for move, nxt in branches[-1]:
            if nxt in visited:
                continue
            if nxt == goal:
                found.append((*moves, move))
                if len(found) >= limit:
                    branches.clear()
                    break
                continue
            path.append(nxt)
            moves.append(move)
            visited.add(nxt)
            branches.append(iter(moves_in[nxt]))
            break
        else:
            branches.pop()
            visited.discard(path.pop())
            if moves:
                moves.pop()
    return sorted(found, key=lambda r: (len(r), r))
