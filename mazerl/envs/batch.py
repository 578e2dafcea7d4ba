"""Batched maze stepping with tensor operations (CPU or CUDA), and the Gymnasium VectorEnv
built on it.

`MazeBatch` holds B mazes padded with walls to a common `(H, W)` and steps all of them with a
handful of tensor ops: no Python loop over mazes. It produces exactly the transitions of
`MazeEnv`: both apply the rules of `mazerl.envs.dynamics` (and are tested step for step).
Action 4 (`STOP_ACTION`, the policy's DONE token) ends an episode with reward 0.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mazerl.core.errors import ConfigError
from mazerl.envs import dynamics
from mazerl.envs.maze import EVENTS, GOAL, MOVE, Maze, check_max_steps, default_max_steps
from mazerl.envs.maze_env import MazeEnv
from mazerl.envs.render import render_ansi, render_rgb

STOP_ACTION = dynamics.STOP_ACTION
DONE_ALREADY = -1  # event code of rows that had already ended
EVENT_NAMES = np.array(EVENTS, dtype=object)  # event code -> the vector env's info["event"]


class _Table:
    """A 1-D tensor indexed by a `[B]` long tensor with `index_select` (faster than `t[i]`)."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def __getitem__(self, index: torch.Tensor) -> torch.Tensor:
        return self.values.index_select(0, index)


@dataclass
class Step:
    """One batched transition.

    Attributes:
        reward: `[B]` float32, 1 on reaching the goal, else 0.
        terminated: `[B]` bool, the episode ended by the rules (`MazeEnv`'s Episode End).
        truncated: `[B]` bool, the episode reached `max_steps`.
        event: `[B]` long, an index into `EVENTS`; `DONE_ALREADY` for rows that had ended.
        route: `[B]` long, the route id on success, else -1.
    """

    reward: torch.Tensor  # float32, 1 on reaching the goal
    terminated: torch.Tensor  # bool
    truncated: torch.Tensor  # bool
    event: torch.Tensor  # long, index into EVENTS, DONE_ALREADY for ended rows
    route: torch.Tensor  # long, route id on success, else -1


class MazeBatch:
    """B mazes stepped together.

    Each grid is padded to the batch's common `(H, W)` plus a one-cell wall border, flattened,
    and given one extra always-blocked cell (`stop_cell`); a move is then one gather, with no
    bounds checks, and `mazerl.envs.dynamics.event` (the rules `MazeEnv` applies too) names
    its event. `visited` keeps, per cell, the episode number at which it was last entered, so
    that one gather tells wall, revisit or free, and a reset increments `episode` instead of
    clearing the grid.

    Args:
        mazes: the B mazes (shapes may differ: smaller ones are padded with walls).
        allow_revisits: whether entering a cell twice continues the episode.
        max_steps: a positive step limit; None: `default_max_steps` of each maze.
        device: where the state lives.

    Attributes:
        flat: `[B]` long, the padded flat cell of each row (`pos` gives `(row, col)`).
        steps: `[B]` long, the steps taken in the current episode.
        done: `[B]` bool, the episode has ended.
        event: `[B]` long, how each episode ended (an index into `EVENTS`).
        route: `[B]` long, by which route it reached the goal, else -1.
        visited: `[B, cells]` int32: -1 for a wall, else the episode number (`episode`, `[B]`)
            at which the cell was last entered.
    """

    def __init__(
        self,
        mazes: Sequence[Maze],
        allow_revisits: bool = False,
        max_steps: int | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        self.device = torch.device(device)
        self.allow_revisits = allow_revisits
        self.max_steps_arg = check_max_steps(max_steps)
        self.event_table = _Table(self._t(dynamics.EVENT_TABLE[allow_revisits]).long())
        self.load(mazes)

    def _t(self, a) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), device=self.device)

    def load(self, mazes: Sequence[Maze]) -> None:
        """Replace all mazes and reset every row.

        Args:
            mazes: the new B mazes (shapes may differ: smaller ones are padded with walls).
        """
        self.mazes = list(mazes)
        # a group repeats each maze G times: build every array once per distinct maze, then
        # index it out to the rows
        by_id = {id(m): m for m in self.mazes}
        number = {key: i for i, key in enumerate(by_id)}
        row_of = np.fromiter((number[id(m)] for m in self.mazes), np.int64, len(self.mazes))
        distinct = list(by_id.values())
        self.H = max(m.shape[0] for m in distinct)
        self.W = max(m.shape[1] for m in distinct)
        self.stride = self.W + 2
        cells = (self.H + 2) * self.stride
        self.stop_cell = cells  # the extra blocked cell
        # flat offsets of UP, DOWN, LEFT, RIGHT, and 0 for stop (the rules make it STOP)
        self.offsets = self._t([*dynamics.offsets(self.stride), 0])
        r = max(len(m.routes) for m in distinct)
        length = max(len(route) for m in distinct for route in m.routes)
        blocked = np.ones((len(distinct), cells + 1), dtype=bool)
        routes = np.full((len(distinct), r, max(length, 1)), -1, dtype=np.int64)
        route_len = np.full((len(distinct), r), -1, dtype=np.int64)
        for i, m in enumerate(distinct):
            blocked[i, :cells] = self._padded(m).reshape(-1)
            for k, route in enumerate(m.routes):
                routes[i, k, : len(route)] = route
                route_len[i, k] = len(route)
        rows = self._t(row_of).long()
        self.blocked = self._t(blocked)[rows]
        self.start = self._t([m.start for m in distinct]).long()[rows]
        self.start_flat = self._flat(self.start)
        self.goal = self._t([m.goal for m in distinct]).long()[rows]
        self.goal_flat = self._flat(self.goal)
        self.routes, self.route_len = self._t(routes)[rows], self._t(route_len)[rows]
        self.track_routes = r > 1 or self.allow_revisits
        limits = [self.max_steps_arg or default_max_steps(m, self.allow_revisits) for m in distinct]
        self.max_steps = self._t(limits).long()[rows]
        self.reset()

    def _padded(self, maze: Maze) -> np.ndarray:
        return dynamics.padded(maze.grid, self.H, self.W)

    @property
    def pos(self) -> torch.Tensor:
        """`[B, 2]` current `(row, col)` of every row, derived from the flat index."""
        return torch.stack([self.flat // self.stride - 1, self.flat % self.stride - 1], 1)

    @property
    def success(self) -> torch.Tensor:
        """`[B]` bool, whether each row's episode ended at the goal."""
        return self.event == GOAL

    @property
    def walls(self) -> torch.Tensor:
        """`[B, H, W]` bool, the grids without the border (padding beyond a maze is wall)."""
        grid = self.blocked[:, : self.stop_cell].reshape(len(self.mazes), self.H + 2, -1)
        return grid[:, 1:-1, 1:-1]

    def _flat(self, pos: torch.Tensor) -> torch.Tensor:
        return (pos[:, 0] + 1) * self.stride + pos[:, 1] + 1

    def load_one(self, i: int, maze: Maze) -> None:
        """Replace one maze by one of the same grid shape and reset its row.

        Args:
            i: the row.
            maze: the new maze, of the batch's grid shape `(H, W)`.
        """
        assert maze.shape == (self.H, self.W), "load_one needs the batch's grid shape"
        grow_r = max(0, len(maze.routes) - self.routes.shape[1])
        grow_l = max(0, max(map(len, maze.routes)) - self.routes.shape[2])
        if grow_r or grow_l:
            self.routes = torch.nn.functional.pad(self.routes, (0, grow_l, 0, grow_r), value=-1)
            self.route_len = torch.nn.functional.pad(self.route_len, (0, grow_r), value=-1)
            self.on_route = torch.nn.functional.pad(self.on_route, (0, grow_r), value=False)
        self.track_routes = self.track_routes or len(maze.routes) > 1
        self.mazes[i] = maze
        self.blocked[i, : self.stop_cell] = self._t(self._padded(maze).reshape(-1))
        self.visited[i] = -self.blocked[i].to(torch.int32)
        self.start[i] = self._t(maze.start)
        self.start_flat[i] = self._flat(self.start[i : i + 1])[0]
        self.goal[i] = self._t(maze.goal)
        self.goal_flat[i] = self._flat(self.goal[i : i + 1])[0]
        self.routes[i] = -1
        self.route_len[i] = -1
        for k, route in enumerate(maze.routes):
            self.routes[i, k, : len(route)] = self._t(route)
            self.route_len[i, k] = len(route)
        self.max_steps[i] = self.max_steps_arg or default_max_steps(maze, self.allow_revisits)
        self.reset(torch.arange(len(self.mazes), device=self.device) == i)

    def reset(self, mask: torch.Tensor | None = None) -> None:
        """Put rows back at their start, for a new episode.

        Args:
            mask: `[B]` bool, the rows reset; None: all.
        """
        b = len(self.mazes)
        start = self.start_flat[:, None]
        if mask is None:
            self.flat = self.start_flat.clone()
            self.episode = torch.ones(b, dtype=torch.int32, device=self.device)
            self.visited = -self.blocked.to(torch.int32)
            self.visited.scatter_(1, start, self.episode[:, None])
            self.steps = torch.zeros(b, dtype=torch.long, device=self.device)
            self.done = torch.zeros(b, dtype=torch.bool, device=self.device)
            self.event = torch.full((b,), MOVE, dtype=torch.long, device=self.device)
            self.route = torch.full((b,), -1, dtype=torch.long, device=self.device)
            self.on_route = self.route_len >= 0  # [B, R]: route still matches the moves so far
            return
        # elementwise selects on [B]-sized state only; the grid is not touched but at start
        self.episode += mask.int()
        self.flat = torch.where(mask, self.start_flat, self.flat)
        self.steps = torch.where(mask, 0, self.steps)
        self.done &= ~mask
        self.event = torch.where(mask, MOVE, self.event)
        self.route = torch.where(mask, -1, self.route)
        self.on_route = torch.where(mask[:, None], self.route_len >= 0, self.on_route)
        entered = torch.where(mask, self.episode, self.visited.gather(1, start).squeeze(1))
        self.visited.scatter_(1, start, entered[:, None])

    def step(self, actions: torch.Tensor) -> Step:
        """Apply one action to every row that has not ended.

        Args:
            actions: `[B]` long, 0-3 moves, 4 stop (ignored on ended rows).

        Returns:
            The transition of every row.
        """
        goal, terminated, truncated, event = self.advance(actions)
        return Step(goal.float(), terminated, truncated, event, torch.where(goal, self.route, -1))

    def advance(self, actions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """`step` without building its result (the generation loop's form).

        Args:
            actions: `[B]` long, 0-3 moves, 4 stop (ignored on ended rows).

        Returns:
            `goal, terminated, truncated, event`, each `[B]` (bool, bool, bool, long).
        """
        active = ~self.done
        # a stop's offset is 0, and so is an ended row's: its target is the agent's own cell
        # (the rules make a stop STOP; an ended row's event is overwritten below)
        target = self.flat + self.offsets.index_select(0, actions).masked_fill_(self.done, 0)
        here = self.visited.gather(1, target[:, None]).squeeze(1)
        event = dynamics.event(
            actions, here, target == self.goal_flat, self.episode, self.event_table
        )
        # the event of rows that had already ended is DONE_ALREADY, whatever their action
        event.masked_fill_(self.done, DONE_ALREADY)
        moved = here >= 0  # a stop or an ended row "moves" to its own cell
        goal = event == GOAL
        self.flat = torch.where(moved, target, self.flat)
        # every row stands on a cell entered in its current episode: stamp it (again)
        self.visited.scatter_(1, self.flat[:, None], self.episode[:, None])
        if self.track_routes:  # a route stays matched while its move at this step matches
            t = self.steps.clamp(max=self.routes.shape[2] - 1)[:, None, None]
            move = self.routes.gather(2, t.expand(-1, self.routes.shape[1], 1)).squeeze(2)
            self.on_route &= ~active[:, None] | (move == actions[:, None])
        self.steps += active
        terminated, truncated = dynamics.outcome(event, self.steps, self.max_steps)
        ended = terminated | truncated
        if self.track_routes:
            matched = self.on_route & (self.route_len == self.steps[:, None])
            self.route = torch.where(goal & matched.any(1), matched.float().argmax(1), self.route)
        else:  # one route and no revisits: reaching the goal means route 0
            self.route.masked_fill_(goal, 0)
        self.done |= ended
        self.event = torch.where(ended, event, self.event)
        return goal, terminated, truncated, event


class MazeVectorEnv(VectorEnv):
    """`num_envs` copies of `MazeEnv` stepped by one `MazeBatch` (numpy in and out).

    Takes exactly `MazeEnv`'s options (checked by building one `MazeEnv` from them) and
    returns what `gymnasium.vector.SyncVectorEnv` over `MazeEnv` copies returns: the same
    observations, rewards, flags and infos, with `SyncVectorEnv`'s info masks (`_event`,
    `_steps`, `_route`; all True, as every env reports every key), and `render()` gives the
    tuple of per-env frames (`ansi` strings or `rgb_array` images). Env `i` draws its mazes
    from its own generator seeded `seed + i`, as `SyncVectorEnv` seeds its copies. Autoreset
    mode is NEXT_STEP (Gymnasium's default): the step after an episode ends resets that env
    and ignores its action. Actions outside `MultiDiscrete([4] * num_envs)` (4, -1, floats,
    a wrong length) raise `ValueError`.

    Args:
        num_envs: the number of envs, a positive integer.
        **options: `MazeEnv`'s arguments (`size`, `generator`, `layout`, ...).
    """

    metadata = {**MazeEnv.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, **options) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive integer, got {num_envs!r}")
        env = MazeEnv(**options)
        self.num_envs = int(num_envs)
        self.maze_spec, self.allow_revisits = env.maze_spec, env.allow_revisits
        self.max_steps_arg, self.render_mode = env.max_steps_arg, env.render_mode
        self.single_action_space = env.action_space
        self.single_observation_space = env.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._rngs = [seeding.np_random()[0] for _ in range(self.num_envs)]
        self._batch: MazeBatch | None = None

    def _obs(self) -> dict[str, np.ndarray]:
        b = self._batch
        n, h, w = self.num_envs, b.H, b.W
        grid = np.zeros((n, 3, h, w), dtype=np.uint8)
        grid[:, 0] = b.walls.numpy()
        rows = np.arange(n)
        start, goal = b.start.numpy(), b.goal.numpy()
        grid[rows, 1, start[:, 0], start[:, 1]] = 1
        grid[rows, 2, goal[:, 0], goal[:, 1]] = 1
        return {"grid": grid, "position": b.pos.numpy().copy()}

    def _info(self, event: np.ndarray, steps: np.ndarray, route: np.ndarray) -> dict:
        """`SyncVectorEnv`'s info layout: each key's `[num_envs]` array and its `_key` mask."""
        info = {"event": EVENT_NAMES[event], "steps": steps, "route": route}
        return info | {f"_{key}": np.ones(self.num_envs, dtype=bool) for key in info}

    def reset(self, *, seed: int | list[int] | None = None, options=None):
        if seed is not None:
            seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else seed
            self._rngs = [seeding.np_random(s)[0] for s in seeds]
        mazes = [self.maze_spec.sample(rng) for rng in self._rngs]
        self._batch = MazeBatch(mazes, self.allow_revisits, self.max_steps_arg)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        zeros = np.zeros(self.num_envs, dtype=np.int64)
        return self._obs(), self._info(zeros + MOVE, zeros, zeros - 1)

    def step(self, actions):
        b = self._batch
        if b is None:
            raise ResetNeeded("MazeVectorEnv.step() called before reset(): call reset() first")
        actions = np.asarray(actions)
        if not self.action_space.contains(actions):
            raise ValueError(
                f"invalid actions {actions!r}: expected {self.num_envs} integers in 0..3 "
                "(0 UP, 1 DOWN, 2 LEFT, 3 RIGHT)"
            )
        fresh = self._autoreset
        fresh_t = torch.as_tensor(fresh)
        if self.maze_spec.fixed is not None:  # a fixed maze: reset in place, vectorised
            if fresh.any():
                b.reset(fresh_t)
        else:  # procedural mazes: only the ended envs draw a new one
            for i in np.flatnonzero(fresh):
                b.load_one(int(i), self.maze_spec.sample(self._rngs[i]))
        b.done |= fresh_t  # the reset envs ignore this step's action
        result = b.step(torch.as_tensor(actions, dtype=torch.long))
        b.done &= ~fresh_t
        reward = np.where(fresh, 0.0, result.reward.numpy().astype(np.float64))
        terminated = result.terminated.numpy() & ~fresh
        truncated = result.truncated.numpy() & ~fresh
        event = np.where(fresh, MOVE, result.event.numpy())
        info = self._info(event, b.steps.numpy().copy(), np.where(fresh, -1, result.route.numpy()))
        self._autoreset = terminated | truncated
        return self._obs(), reward, terminated, truncated, info

    def render(self) -> tuple | None:
        """One frame per env, as `SyncVectorEnv.render` gives them.

        Returns:
            A tuple of `render_mode` "ansi" strings or "rgb_array" `(H*8, W*8, 3)` uint8
            images (the path taken this episode, agent last); a tuple of None without a
            render mode or before `reset`.
        """
        b = self._batch
        if b is None or self.render_mode is None:
            return (None,) * self.num_envs
        entered = (b.visited == b.episode[:, None]).numpy()  # [B, cells + 1]
        frames = []
        for i, maze in enumerate(b.mazes):
            here = int(b.flat[i])
            flat = [*(f for f in np.flatnonzero(entered[i]) if f != here), here]
            path = [(int(f) // b.stride - 1, int(f) % b.stride - 1) for f in flat]
            frames.append(
                render_ansi(maze, path) if self.render_mode == "ansi" else render_rgb(maze, [path])
            )
        return tuple(frames)
