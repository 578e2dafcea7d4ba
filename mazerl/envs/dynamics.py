"""The maze dynamics, once: the cell layout both steppers use and the rule that turns a move
into an event.

`MazeEnv` (one maze, Python ints) and `MazeBatch` (B mazes, tensors) hold the same state: a
maze padded with a one-cell wall border and flattened, so a move is `flat + offset` with no
bounds check, and `visited[cell]`, -1 for a wall, else the episode number at which the cell
was last entered. `event` then classifies a move by looking up `EVENT_TABLE` with operators
only (`<`, `==`, `&`, `|`, `<<`), so the same function runs on Python ints for one maze and
on `[B]` tensors for a batch; `outcome` derives terminated/truncated the same way.
"""

import numpy as np

from mazerl.envs.maze import GOAL, MOVE, REVISIT, STOP, WALL

STOP_ACTION = 4  # the batched stepper's stop action (the policy's DONE token); moves are 0-3


def _rule(blocked: bool, revisit: bool, goal: bool, stop: bool) -> int:
    """The event of one move, the rules in order of precedence: the stop action; a wall (or
    the grid's edge: the agent stays put); the goal (the agent moves in, reward 1); a cell
    entered before in this episode (the agent moves in); else a plain move."""
    if stop:
        return STOP
    if blocked:
        return WALL
    if goal:
        return GOAL
    if revisit:
        return REVISIT
    return MOVE


# EVENT_TABLE[allow_revisits][code], code = blocked + 2 revisit + 4 stop + 8 goal
EVENT_TABLE = {
    allow: tuple(
        _rule(bool(c & 1), bool(c & 2) and not allow, bool(c & 8), bool(c & 4)) for c in range(16)
    )
    for allow in (False, True)
}


def event(action, here, at_goal, episode, table):
    """The event of `action`s (0-3, or `STOP_ACTION`) into cells whose `visited` stamp is
    `here` (ints, or `[B]` tensors; `at_goal` a bool or bool tensor; `table` is
    `EVENT_TABLE[allow_revisits]`, a tuple for ints, indexable by a long tensor for tensors).
    A stop's target cell does not matter (the rule puts stop first)."""
    return table[action & STOP_ACTION | (here < 0) | (here == episode) << 1 | at_goal << 3]


def outcome(event, steps, max_steps):
    """`(terminated, truncated)` of steps that ended with `event` after `steps` moves."""
    return event > MOVE, (event == MOVE) & (steps >= max_steps)


def padded(grid: np.ndarray, h: int, w: int) -> np.ndarray:
    """`(h + 2, w + 2)` bool, True for a wall: `grid` padded with walls to `(h, w)` plus a
    one-cell wall border."""
    out = np.ones((h + 2, w + 2), dtype=bool)
    out[1 : grid.shape[0] + 1, 1 : grid.shape[1] + 1] = grid == 1
    return out


def offsets(stride: int) -> tuple[int, int, int, int]:
    """Flat offsets of UP, DOWN, LEFT, RIGHT in a padded grid `stride` cells wide."""
    return (-stride, stride, -1, 1)
