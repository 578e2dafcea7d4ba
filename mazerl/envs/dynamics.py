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
    """The event of actions into their target cells, for one env (ints) or a batch (`[B]`
    tensors).

    A stop's target cell does not matter (the rule puts stop first).

    Args:
        action: 0-3 moves, or `STOP_ACTION`.
        here: the target cell's `visited` stamp: < 0 a wall, `episode` entered in this
            episode, else free.
        at_goal: a bool (or bool tensor): the target is the goal.
        episode: the current episode's number (the stamp of a revisit).
        table: `EVENT_TABLE[allow_revisits]`: a tuple for ints, a long tensor for tensors.

    Returns:
        The event code (`MOVE`, `GOAL`, `WALL`, `REVISIT`, `STOP`), an int or a `[B]` long
        tensor.
    """
    return table[action & STOP_ACTION | (here < 0) | (here == episode) << 1 | at_goal << 3]


def outcome(event, steps, max_steps):
    """Whether steps end their episodes.

    Args:
        event: the steps' event codes (ints or `[B]` tensors).
        steps: the moves taken so far, this step included.
        max_steps: the step limit.

    Returns:
        `(terminated, truncated)`: any event but `MOVE` terminates; a `MOVE` at the step
        limit truncates.
    """
    return event > MOVE, (event == MOVE) & (steps >= max_steps)


def padded(grid: np.ndarray, h: int, w: int) -> np.ndarray:
    """A grid padded for border-free stepping.

    Args:
        grid: `(H, W)` uint8, 1 = wall.
        h: rows to pad to, >= H.
        w: columns to pad to, >= W.

    Returns:
        `(h + 2, w + 2)` bool, True for a wall: `grid` padded with walls to `(h, w)` plus a
        one-cell wall border.
    """
    out = np.ones((h + 2, w + 2), dtype=bool)
    out[1 : grid.shape[0] + 1, 1 : grid.shape[1] + 1] = grid == 1
    return out


def offsets(stride: int) -> tuple[int, int, int, int]:
    """The moves as flat index offsets.

    Args:
        stride: the padded grid's width in cells.

    Returns:
        The offsets of UP, DOWN, LEFT, RIGHT.
    """
    return (-stride, stride, -1, 1)
