"""`MazeSpec`: one description of where mazes come from, used by the env, the vector env, the
trainer's maze config and the evaluation sets."""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mazerl.core.errors import ConfigError
from mazerl.core.streams import rng
from mazerl.envs import generators, layouts
from mazerl.envs.braid import LENGTH_PROFILES, braid
from mazerl.envs.maze import Maze

BRAID_ATTEMPTS = 200


@dataclass(frozen=True)
class MazeSpec:
    """A distribution over mazes.

    Either a fixed `layout` (shipped name, file path or a `Maze`), or a `generator` run on a
    `height x width` cell lattice with a start/goal `start_goal` placement. `size` sets both
    sides when `height`/`width` are not given. `routes` > 1 makes braid mazes with exactly
    that many simple routes (`route_lengths`: equal or short_common), or requires a layout
    to have exactly that many.
    """

    size: int = 5
    height: int | None = None
    width: int | None = None
    generator: str = "prim"
    start_goal: str = "corners"
    layout: "str | Maze | None" = None
    routes: int = 1
    route_lengths: str = "equal"

    def __post_init__(self) -> None:
        if not 1 <= self.routes <= 8:
            raise ConfigError(f"maze routes must be in [1, 8], got {self.routes}")
        if self.route_lengths not in LENGTH_PROFILES:
            raise ConfigError(f"maze route_lengths must be one of {LENGTH_PROFILES}")
        if self.layout is None:
            generators.check_size(self.cells[0], self.cells[1])
            generators.GENERATORS.get(self.generator)
            generators.PLACEMENTS.get(self.start_goal)

    @property
    def cells(self) -> tuple[int, int]:
        return (self.height or self.size, self.width or self.size)

    @cached_property
    def fixed(self) -> Maze | None:
        """The layout's maze, loaded and validated once; None for generated mazes."""
        if self.layout is None or isinstance(self.layout, Maze):
            return self.layout
        return layouts.load(self.layout, self.routes)

    @property
    def grid_shape(self) -> tuple[int, int]:
        if self.fixed is not None:
            return self.fixed.shape
        h, w = self.cells
        return 2 * h + 1, 2 * w + 1

    def sample(self, rng: np.random.Generator) -> Maze:
        if self.fixed is not None:
            return self.fixed
        h, w = self.cells
        for _ in range(1 if self.routes == 1 else BRAID_ATTEMPTS):
            maze = generators.generate(self.generator, h, w, rng, self.start_goal)
            if self.routes == 1:
                return maze
            braided = braid(maze, self.routes, self.route_lengths, rng)
            if braided is not None:
                return braided
        raise ConfigError(
            f"could not build {self.routes}-route braid mazes ({self.route_lengths} lengths) "
            f"of {h}x{w} cells in {BRAID_ATTEMPTS} attempts; use larger mazes or fewer routes"
        )

    @classmethod
    def from_kwargs(cls, **kwargs) -> "MazeSpec":
        unknown = set(kwargs) - set(cls.__dataclass_fields__)
        if unknown:
            known = ", ".join(cls.__dataclass_fields__)
            raise ConfigError(f"unknown maze option(s) {sorted(unknown)}; known: {known}")
        return cls(**kwargs)


def maze_spec(
    maze_cfg, size_delta: int = 0, generator: str | None = None, start_goal: str | None = None
) -> MazeSpec:
    """The `MazeSpec` of a `maze` config section, optionally larger or from another generator."""
    h, w = maze_cfg.height or maze_cfg.size, maze_cfg.width or maze_cfg.size
    return MazeSpec(
        size=maze_cfg.size + size_delta,
        height=None if maze_cfg.height is None else h + size_delta,
        width=None if maze_cfg.width is None else w + size_delta,
        generator=generator or maze_cfg.generator,
        start_goal=start_goal or maze_cfg.start_goal,
        layout=maze_cfg.layout,
        routes=maze_cfg.routes,
        route_lengths=maze_cfg.route_lengths,
    )


def sample_mazes(spec: MazeSpec, count: int, excluded: set[bytes], *keys: int) -> list[Maze]:
    """`count` mazes from the stream `keys` (maze i from `rng(*keys, i)`), skipping any whose
    key is in `excluded` (evaluation mazes)."""
    out, i = [], 0
    while len(out) < count:
        maze = spec.sample(rng(*keys, i))
        i += 1
        if maze.key not in excluded:
            out.append(maze)
        if i > 100 * count + 1000:
            raise ConfigError(
                "cannot draw training mazes disjoint from the evaluation sets: the maze "
                "space is too small; use larger mazes or fewer evaluation mazes"
            )
    return out
