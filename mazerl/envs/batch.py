"""Batched maze stepping with tensor operations (CPU or CUDA), and the Gymnasium VectorEnv
built on it.

`MazeBatch` holds B mazes padded with walls to a common `(H, W)` and steps all of them with a
handful of tensor ops: no Python loop over mazes. It produces exactly the transitions of
`MazeEnv` (tested step for step). Action 4 (`STOP_ACTION`, the policy's DONE token) ends an
episode with reward 0.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mazerl.envs.maze import DELTAS, Maze
from mazerl.envs.maze_env import EVENTS, GOAL, MOVE, REVISIT, STOP, WALL, default_max_steps
from mazerl.envs.spec import MazeSpec

STOP_ACTION = 4
DONE_ALREADY = -1  # event code of rows that had already ended


@dataclass
class Step:
    """One batched transition; every field is `[B]`."""

    reward: torch.Tensor  # float32, 1 on reaching the goal
    terminated: torch.Tensor  # bool
    truncated: torch.Tensor  # bool
    event: torch.Tensor  # long, index into EVENTS, DONE_ALREADY for ended rows
    route: torch.Tensor  # long, route id on success, else -1


class MazeBatch:
    """B mazes stepped together. State tensors: `pos [B, 2]`, `steps [B]`, `done [B]`,
    `success [B]`, `on_route [B, R]`, and `visited [B, H*W]`: the episode number `episode [B]`
    at which each cell was last entered, so that a reset only increments `episode` instead of
    clearing the whole grid."""

    def __init__(
        self,
        mazes: Sequence[Maze],
        allow_revisits: bool = False,
        max_steps: int | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        self.device = torch.device(device)
        self.allow_revisits = allow_revisits
        self.max_steps_arg = max_steps
        self.deltas = torch.tensor((*DELTAS, (0, 0)), dtype=torch.long, device=self.device)
        self.load(mazes)

    def load(self, mazes: Sequence[Maze]) -> None:
        """Replace all mazes (shapes may differ: smaller ones are padded with walls)."""
        self.mazes = list(mazes)
        b = len(self.mazes)
        self.H = max(m.shape[0] for m in self.mazes)
        self.W = max(m.shape[1] for m in self.mazes)
        r = max(len(m.routes) for m in self.mazes)
        length = max(len(route) for m in self.mazes for route in m.routes)
        walls = np.ones((b, self.H, self.W), dtype=bool)
        routes = np.full((b, r, max(length, 1)), -1, dtype=np.int64)
        route_len = np.full((b, r), -1, dtype=np.int64)
        for i, m in enumerate(self.mazes):
            walls[i, : m.shape[0], : m.shape[1]] = m.grid == 1
            for k, route in enumerate(m.routes):
                routes[i, k, : len(route)] = route
                route_len[i, k] = len(route)
        t = lambda a: torch.as_tensor(a, device=self.device)  # noqa: E731
        self.walls = t(walls).reshape(b, -1)
        self.start = t(np.array([m.start for m in self.mazes], dtype=np.int64))
        self.goal = t(np.array([m.goal for m in self.mazes], dtype=np.int64))
        self.routes, self.route_len = t(routes), t(route_len)
        self.max_steps = t(
            np.array(
                [self.max_steps_arg or default_max_steps(m, self.allow_revisits) for m in mazes],
                dtype=np.int64,
            )
        )
        self.reset()

    def load_one(self, i: int, maze: Maze) -> None:
        """Replace maze `i` by one of the same grid shape and reset it."""
        assert maze.shape == (self.H, self.W), "load_one needs the batch's grid shape"
        grow_r = max(0, len(maze.routes) - self.routes.shape[1])
        grow_l = max(0, max(map(len, maze.routes)) - self.routes.shape[2])
        if grow_r or grow_l:
            self.routes = torch.nn.functional.pad(self.routes, (0, grow_l, 0, grow_r), value=-1)
            self.route_len = torch.nn.functional.pad(self.route_len, (0, grow_r), value=-1)
            self.on_route = torch.nn.functional.pad(self.on_route, (0, grow_r), value=False)
        self.mazes[i] = maze
        self.walls[i] = torch.as_tensor(maze.grid.reshape(-1) == 1, device=self.device)
        self.start[i] = torch.tensor(maze.start, device=self.device)
        self.goal[i] = torch.tensor(maze.goal, device=self.device)
        self.routes[i] = -1
        self.route_len[i] = -1
        for k, route in enumerate(maze.routes):
            self.routes[i, k, : len(route)] = torch.tensor(route, device=self.device)
            self.route_len[i, k] = len(route)
        self.max_steps[i] = self.max_steps_arg or default_max_steps(maze, self.allow_revisits)
        self.reset(torch.arange(len(self.mazes), device=self.device) == i)

    def reset(self, mask: torch.Tensor | None = None) -> None:
        """Put the masked rows (all when None) back at their start."""
        b = len(self.mazes)
        start = self._flat(self.start)[:, None]
        if mask is None:
            self.pos = self.start.clone()
            self.episode = torch.ones(b, dtype=torch.int32, device=self.device)
            self.visited = torch.zeros(b, self.H * self.W, dtype=torch.int32, device=self.device)
            self.steps = torch.zeros(b, dtype=torch.long, device=self.device)
            self.done = torch.zeros(b, dtype=torch.bool, device=self.device)
            self.success = torch.zeros(b, dtype=torch.bool, device=self.device)
            self.on_route = self.route_len >= 0  # [B, R]: route still matches the moves so far
            self.visited.scatter_(1, start, self.episode[:, None])
            return
        # elementwise selects on [B]-sized state only; the grid is not touched but at start
        keep = ~mask
        self.episode += mask.int()
        self.pos = torch.where(mask[:, None], self.start, self.pos)
        self.steps = torch.where(mask, 0, self.steps)
        self.done &= keep
        self.success &= keep
        self.on_route = torch.where(mask[:, None], self.route_len >= 0, self.on_route)
        entered = torch.where(mask, self.episode, self.visited.gather(1, start).squeeze(1))
        self.visited.scatter_(1, start, entered[:, None])

    def _flat(self, pos: torch.Tensor) -> torch.Tensor:
        return pos[:, 0] * self.W + pos[:, 1]

    def step(self, actions: torch.Tensor) -> Step:
        """Apply `actions [B]` (0-3 moves, 4 stop) to every row that has not ended."""
        active = ~self.done
        nxt = self.pos + self.deltas[actions]
        inside = (nxt[:, 0] >= 0) & (nxt[:, 0] < self.H) & (nxt[:, 1] >= 0) & (nxt[:, 1] < self.W)
        flat = self._flat(nxt).clamp(0, self.H * self.W - 1)[:, None]
        stop = actions == STOP_ACTION
        wall = ~stop & (~inside | self.walls.gather(1, flat).squeeze(1))
        moved = active & ~stop & ~wall
        goal = moved & (nxt == self.goal).all(1)
        here = self.visited.gather(1, flat).squeeze(1)
        revisit = moved & ~goal & (here == self.episode)
        if self.allow_revisits:
            revisit = torch.zeros_like(revisit)
        self.pos = torch.where(moved[:, None], nxt, self.pos)
        self.visited.scatter_(1, flat, torch.where(moved, self.episode, here)[:, None])
        # route tracking: a route stays matched while its move at this step equals the action
        t = self.steps.clamp(max=self.routes.shape[2] - 1)[:, None, None]
        here = self.routes.gather(2, t.expand(-1, self.routes.shape[1], 1)).squeeze(2)
        self.on_route &= ~active[:, None] | (here == actions[:, None])
        self.steps += active.long()
        event = torch.full_like(actions, MOVE)
        event = torch.where(revisit, REVISIT, event)
        event = torch.where(goal, GOAL, event)
        event = torch.where(wall & active, WALL, event)
        event = torch.where(stop & active, STOP, event)
        event = torch.where(active, event, DONE_ALREADY)
        terminated = active & (event != MOVE)
        truncated = active & ~terminated & (self.steps >= self.max_steps)
        self.done |= terminated | truncated
        self.success |= goal
        matched = self.on_route & (self.route_len == self.steps[:, None])
        route = torch.where(goal & matched.any(1), matched.float().argmax(1), -1)
        return Step(goal.float(), terminated, truncated, event, route)


class MazeVectorEnv(VectorEnv):
    """`num_envs` copies of `MazeEnv` stepped by one `MazeBatch` (numpy in and out).

    Env `i` draws its mazes from its own generator seeded `seed + i`, exactly as
    `gymnasium.vector.SyncVectorEnv` seeds `MazeEnv` copies, so the two produce identical
    transitions. Autoreset mode is NEXT_STEP (Gymnasium's default): the step after an episode
    ends resets that env and ignores its action.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, allow_revisits: bool = False, **maze_kwargs) -> None:
        self.num_envs = num_envs
        self.maze_spec = MazeSpec.from_kwargs(**maze_kwargs)
        self.allow_revisits = allow_revisits
        h, w = self.maze_spec.grid_shape
        self.single_action_space = spaces.Discrete(4)
        self.single_observation_space = spaces.Dict(
            grid=spaces.Box(0, 1, (3, h, w), np.uint8), position=spaces.MultiDiscrete([h, w])
        )
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self._rngs = [seeding.np_random()[0] for _ in range(num_envs)]
        self._batch: MazeBatch | None = None

    def _obs(self) -> dict[str, np.ndarray]:
        b = self._batch
        n, h, w = self.num_envs, b.H, b.W
        grid = np.zeros((n, 3, h, w), dtype=np.uint8)
        grid[:, 0] = b.walls.reshape(n, h, w).numpy()
        rows = np.arange(n)
        start, goal = b.start.numpy(), b.goal.numpy()
        grid[rows, 1, start[:, 0], start[:, 1]] = 1
        grid[rows, 2, goal[:, 0], goal[:, 1]] = 1
        return {"grid": grid, "position": b.pos.numpy().copy()}

    def reset(self, *, seed: int | list[int] | None = None, options=None):
        if seed is not None:
            seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else seed
            self._rngs = [seeding.np_random(s)[0] for s in seeds]
        mazes = [self.maze_spec.sample(rng) for rng in self._rngs]
        self._batch = MazeBatch(mazes, allow_revisits=self.allow_revisits)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        info = {
            "event": np.full(self.num_envs, "move", dtype=object),
            "steps": np.zeros(self.num_envs, dtype=np.int64),
            "route": np.full(self.num_envs, -1, dtype=np.int64),
        }
        return self._obs(), info

    def step(self, actions):
        b = self._batch
        assert b is not None, "call reset() before step()"
        fresh = self._autoreset
        fresh_t = torch.as_tensor(fresh)
        if self.maze_spec.fixed is not None:  # a fixed maze: reset in place, vectorised
            if fresh.any():
                b.reset(fresh_t)
        else:  # procedural mazes: only the ended envs draw a new one
            for i in np.flatnonzero(fresh):
                b.load_one(int(i), self.maze_spec.sample(self._rngs[i]))
        b.done |= fresh_t  # the reset envs ignore this step's action
        result = b.step(torch.as_tensor(np.asarray(actions), dtype=torch.long))
        b.done &= ~fresh_t
        reward = np.where(fresh, 0.0, result.reward.numpy().astype(np.float64))
        terminated = result.terminated.numpy() & ~fresh
        truncated = result.truncated.numpy() & ~fresh
        events = result.event.numpy()
        info = {
            "event": np.array(
                ["move" if f else EVENTS[e] for f, e in zip(fresh, events, strict=True)],
                dtype=object,
            ),
            "steps": b.steps.numpy().copy(),
            "route": np.where(fresh, -1, result.route.numpy()),
        }
        self._autoreset = terminated | truncated
        return self._obs(), reward, terminated, truncated, info


def make_vector_env(num_envs: int, **kwargs) -> gym.vector.VectorEnv:
    """Vector entry point registered for `gymnasium.make_vec("mazerl/Maze-v0", ...)`."""
    kwargs.pop("render_mode", None)
    return MazeVectorEnv(num_envs, **kwargs)
