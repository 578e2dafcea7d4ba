"""`mazerl/Maze-v0`: walk from start to goal in a maze with exactly one valid path."""

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from mazerl.envs import dynamics
from mazerl.envs.maze import EVENTS, GOAL, WALL, Maze, check_max_steps, default_max_steps
from mazerl.envs.render import render_ansi, render_rgb
from mazerl.envs.spec import MazeSpec


class MazeEnv(gym.Env):
    """Walk a maze from S to G, one grid step per action.

    ## Description
    A maze is an `(H, W)` grid of walls and open cells (`H = 2*height+1`, `W = 2*width+1`
    for generated mazes: cells on the odd lines, walls on the even lines). Each reset draws a
    fresh perfect maze from `generator` using the env's seeded `np_random` (or uses the fixed
    `layout`), so there is exactly one simple path from start to goal. With
    `allow_revisits=False` (default) entering a cell twice ends the episode, so the correct
    answer is unique: the maze's `solution`. The current maze is `env.unwrapped.maze`.

    ## Action Space
    `Discrete(4)`: 0 UP, 1 DOWN, 2 LEFT, 3 RIGHT (row -1, row +1, col -1, col +1). Anything
    else (4, -1, 1.0, "0") raises `ValueError`.

    ## Observation Space
    `Dict` with

    - `grid`: `Box(0, 1, (3, H, W), uint8)`; channel 0 walls (1 = wall), 1 the start cell,
      2 the goal cell.
    - `position`: `MultiDiscrete([H, W])`, the agent's `(row, col)`.

    ## Rewards
    1 on the step that reaches the goal, else 0.

    ## Episode End
    Terminated on reaching the goal, on a step into a wall or off the grid (the agent stays
    put), or on a revisit when `allow_revisits=False` (the agent moves into the cell).
    Truncated after `max_steps` steps (default: open cells - 1 without revisits, which no
    episode reaches; 4x the open cells with). A `step` after the episode ended raises
    `gymnasium.error.ResetNeeded` (as one before the first `reset` does): call `reset()`, or
    use a vector env or `gymnasium.wrappers.Autoreset`, which reset for you. The rules are
    `mazerl.envs.dynamics`, which the batched `MazeBatch` applies too.

    ## Info
    `event` (one of "move", "goal", "wall", "revisit"), `steps`, and `route`: on success the id
    of the simple path taken (its index in `maze.routes`), else -1.

    ## Arguments
    The maze source: `maze_spec`, a `mazerl.envs.spec.MazeSpec` (the one a training run
    builds from its `maze` settings), or its fields as keywords: `size`, `height`, `width`,
    `generator` (`dfs`, `prim`, `kruskal`, `wilson`), `start_goal` (`corners`, `random`,
    `farthest`), `layout` (shipped name, file path, collection or a `Maze` object), `routes`
    (> 1: braid mazes with exactly that many simple routes, each rewarded; `info["route"]`
    says which was taken) and `route_lengths` (`equal` or `short_common`). Then
    `allow_revisits`, `max_steps` (a positive int; None: the default above) and `render_mode`
    (`"ansi"` or `"rgb_array"`).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        maze_spec: MazeSpec | None = None,
        *,
        allow_revisits: bool = False,
        max_steps: int | None = None,
        render_mode: str | None = None,
        **maze_fields,
    ) -> None:
        if maze_spec is not None and not isinstance(maze_spec, MazeSpec):
            raise TypeError(f"maze_spec must be a MazeSpec, got {maze_spec!r}")
        if maze_spec is not None and maze_fields:
            raise ValueError(
                f"give maze_spec or its fields ({', '.join(maze_fields)}), not both: "
                "dataclasses.replace(maze_spec, ...) changes a spec"
            )
        self.maze_spec = maze_spec if maze_spec is not None else MazeSpec(**maze_fields)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.allow_revisits = allow_revisits
        self.max_steps_arg = check_max_steps(max_steps)
        h, w = self.maze_spec.grid_shape
        self.action_space = spaces.Discrete(4)
        self.observation_space = spaces.Dict(
            grid=spaces.Box(0, 1, (3, h, w), np.uint8), position=spaces.MultiDiscrete([h, w])
        )
        self.maze: Maze | None = None

    def _obs(self) -> dict[str, np.ndarray]:
        return {"grid": self._grid.copy(), "position": np.array(self.position, dtype=np.int64)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.maze = self.maze_spec.sample(self.np_random)
        self.max_steps = self.max_steps_arg or default_max_steps(self.maze, self.allow_revisits)
        self.ended = False
        self._route_ids = {route: i for i, route in enumerate(self.maze.routes)}
        self._grid = np.zeros((3, *self.maze.shape), dtype=np.uint8)
        self._grid[0] = self.maze.grid
        self._grid[(1, *self.maze.start)] = 1
        self._grid[(2, *self.maze.goal)] = 1
        # the dynamics' state (see `mazerl.envs.dynamics`), one episode per maze
        h, w = self.maze.shape
        self._stride = w + 2
        self._offsets = dynamics.offsets(self._stride)
        self._table = dynamics.EVENT_TABLE[self.allow_revisits]
        self._visited = (-dynamics.padded(self.maze.grid, h, w).ravel().astype(int)).tolist()
        self._flat = (self.maze.start[0] + 1) * self._stride + self.maze.start[1] + 1
        self._goal_flat = (self.maze.goal[0] + 1) * self._stride + self.maze.goal[1] + 1
        self._visited[self._flat] = 1
        self.position = self.maze.start
        self.path = [self.maze.start]
        self.moves: list[int] = []
        return self._obs(), {"event": "move", "steps": 0, "route": -1}

    def step(self, action):
        if self.maze is None or self.ended:
            when = "before reset()" if self.maze is None else "after the episode ended"
            raise ResetNeeded(f"MazeEnv.step() called {when}: call reset() first")
        if not self.action_space.contains(action):
            raise ValueError(
                f"invalid action {action!r}: expected an integer in 0..3 "
                "(0 UP, 1 DOWN, 2 LEFT, 3 RIGHT)"
            )
        action = int(action)
        target = self._flat + self._offsets[action]
        event = dynamics.event(
            action, self._visited[target], target == self._goal_flat, 1, self._table
        )
        self.moves.append(action)
        reward, route = 0.0, -1
        if event != WALL:
            self._flat = target
            self._visited[target] = 1
            r, c = divmod(target, self._stride)
            self.position = (r - 1, c - 1)
            self.path.append(self.position)
            if event == GOAL:
                reward = 1.0
                route = self._route_ids.get(tuple(self.moves), -1)
        terminated, truncated = dynamics.outcome(event, len(self.moves), self.max_steps)
        self.ended = terminated or truncated
        info = {"event": EVENTS[event], "steps": len(self.moves), "route": route}
        return self._obs(), reward, terminated, truncated, info

    def render(self):
        if self.maze is None or self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            return render_ansi(self.maze, self.path)
        return render_rgb(self.maze, [self.path])
