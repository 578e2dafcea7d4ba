"""`MazeSpec`: one description of where mazes come from, used by the env, the vector env, the
trainer's maze config and the evaluation sets."""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mazerl.envs import generators, layouts
from mazerl.envs.maze import Maze
from mazerl.errors import ConfigError


@dataclass(frozen=True)
class MazeSpec:
    """A distribution over mazes.

    Either a fixed `layout` (shipped name or file path), or a `generator` run on a
    `height x width` cell lattice with a start/goal `start_goal` placement. `size` sets both
    sides when `height`/`width` are not given.
    """

    size: int = 5
    height: int | None = None
    width: int | None = None
    generator: str = "prim"
    start_goal: str = "corners"
    layout: str | None = None

    def __post_init__(self) -> None:
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
        return None if self.layout is None else layouts.load(self.layout)

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
        return generators.generate(self.generator, h, w, rng, self.start_goal)

    @classmethod
    def from_kwargs(cls, **kwargs) -> "MazeSpec":
        unknown = set(kwargs) - set(cls.__dataclass_fields__)
        if unknown:
            known = ", ".join(cls.__dataclass_fields__)
            raise ConfigError(f"unknown maze option(s) {sorted(unknown)}; known: {known}")
        return cls(**kwargs)
