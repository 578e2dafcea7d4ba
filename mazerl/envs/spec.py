"""`MazeSpec`: the one description of where mazes come from, used by the env, the vector env,
the trainer, the base model and the evaluation sets; `MazeTask`: an RL run's mazes, the spec
and two RL settings (`allow_revisits`, `pool_size`); `MazeConfig`: the `maze` settings, the
fields of both."""

from dataclasses import dataclass, fields, replace
from functools import cached_property

import numpy as np

from mazerl.core.errors import ConfigError
from mazerl.core.settings import (
    FLAG,
    NATURAL,
    TEXT,
    number,
    one_of,
    optional,
    registered,
    setting,
    settings_of,
)
from mazerl.core.streams import rng
from mazerl.envs import generators, layouts
from mazerl.envs.braid import LENGTH_PROFILES, braid
from mazerl.envs.generators import MAX_CELLS, MIN_CELLS
from mazerl.envs.maze import Maze

BRAID_ATTEMPTS = 200
CELLS = number(MIN_CELLS, MAX_CELLS, integer=True, unit="cells")


@dataclass(frozen=True)
class MazeSpec:
    """Where mazes come from: the one description of a maze source, built once from the
    settings (`MazeSpec.of(cfg.maze)`, in a run its `MazeTask`) and given to the env, the
    batched stepper, the training mazes, the base model, the evaluation sets and their
    caches.

    Either a `layout` (a collection: shipped name, file, directory, glob or collection file;
    in the env also a `Maze`), drawn uniformly, or a `generator` run on a `height x width`
    cell lattice with a start/goal `start_goal` placement. `size` sets both sides when
    `height`/`width` are not given. `routes` > 1 makes braid mazes with exactly that many
    simple routes (`route_lengths`: equal or short_common), or requires a layout's mazes to
    have exactly that many (unless a maze declares its own `routes: K`). Each field is also a
    setting of the `maze` section (`MazeConfig`), with its rule and description.
    """

    size: int = setting(5, CELLS, "cells per side of the mazes (the grid is 2*size+1 square)")
    height: int | None = setting(
        None, optional(CELLS), "rectangular mazes: cells down (null: size)"
    )
    width: int | None = setting(
        None, optional(CELLS), "rectangular mazes: cells across (null: size)"
    )
    generator: str = setting(
        "prim",
        registered(generators.GENERATORS),
        "maze generator: dfs | prim | kruskal | wilson | ...",
    )
    start_goal: str = setting(
        "corners",
        registered(generators.PLACEMENTS),
        "where start and goal go: corners | random | farthest",
    )
    layout: str | None = setting(
        None,
        optional(TEXT),
        "a shipped layout name, or a layout file, directory or glob (no generator)",
    )
    routes: int = setting(
        1,
        number(1, 8, integer=True),
        "exactly this many simple start-goal routes (> 1: braid mazes)",
    )
    route_lengths: str = setting(
        "equal", one_of(*LENGTH_PROFILES), "braid mazes: equal or short_common route lengths"
    )

    @classmethod
    def of(cls, settings) -> "MazeSpec":
        """The spec of a `maze` config section (or any object with these fields as attributes:
        a `MazeConfig`, parsed command-line options); its other fields, such as
        `allow_revisits`, are not the source's."""
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls)})

    def settings(self) -> dict:
        """The fields as the `maze` section holds them (cache keys; a `Maze` layout by name)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(self.layout, Maze):
            out["layout"] = self.layout.name
        return out

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
    def collection(self) -> tuple[Maze, ...] | None:
        """The layout's mazes (a collection: see `mazerl.envs.layouts`), loaded, validated and
        padded to one grid shape once; None for generated mazes."""
        if self.layout is None:
            return None
        if isinstance(self.layout, Maze):
            return (self.layout,)
        return layouts.load_collection(self.layout, self.routes)

    @property
    def fixed(self) -> Maze | None:
        """The layout's maze when the layout is a single maze; else None."""
        mazes = self.collection
        return mazes[0] if mazes is not None and len(mazes) == 1 else None

    @property
    def grid_shape(self) -> tuple[int, int]:
        if self.collection is not None:
            return self.collection[0].shape
        h, w = self.cells
        return 2 * h + 1, 2 * w + 1

    def sample(self, rng: np.random.Generator) -> Maze:
        """One maze: a uniform draw from a layout collection (a single layout: always it,
        drawing nothing from `rng`), or a generated one."""
        if self.collection is not None:
            mazes = self.collection
            return mazes[0] if len(mazes) == 1 else mazes[int(rng.integers(len(mazes)))]
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

    def describe(self) -> str:
        """A short description for messages, e.g. `prim mazes of 5x5 cells`."""
        if self.layout is not None:
            return f"the layout {self.layout}"
        h, w = self.cells
        return f"{self.generator} mazes of {h}x{w} cells ({self.start_goal} start/goal)"


@dataclass(frozen=True)
class MazeTask:
    """The mazes of an RL run: where they come from (`spec`) and the RL settings on them, the
    episode rule (`allow_revisits`) and the training pool (`pool_size`). Built once from the
    `maze` section (`MazeTask.of(cfg.maze)`) and given to the training mazes, the base model,
    the step and the evaluation; each keys its cache by what it depends on (`episodes`:
    the spec and the rule; `pool_size` only the training mazes read). Each RL field is also a
    setting of the `maze` section (`MazeConfig`), with its rule and description."""

    spec: MazeSpec
    allow_revisits: bool = setting(
        False, FLAG, "true: any wall-free walk to the goal counts (the released MaxRL rule)"
    )
    pool_size: int = setting(
        0, NATURAL, "0: fresh mazes every iteration; N: a fixed pool of N training mazes"
    )

    @classmethod
    def of(cls, maze) -> "MazeTask":
        """The task of a `maze` section (a `MazeConfig`): its spec and its RL settings."""
        rl = {f.name: getattr(maze, f.name) for f in fields(cls) if f.name != "spec"}
        return cls(MazeSpec.of(maze), **rl)

    @property
    def braid(self) -> bool:
        """Whether the mazes have several routes (`maze.routes` > 1): route masses tracked."""
        return self.spec.routes > 1

    def episodes(self) -> dict:
        """What an episode on these mazes depends on, as the `maze` section holds it: the
        spec's settings and `allow_revisits` (the keys of the base model and of its
        evaluations; not `pool_size`)."""
        return {**self.spec.settings(), "allow_revisits": self.allow_revisits}


@dataclass
class MazeConfig(settings_of(MazeSpec, MazeTask)):
    """The `maze` section: the fields of `MazeSpec` (where the mazes come from) and the RL
    settings of `MazeTask`, each with its rule and description; `MazeTask.of` makes the
    run's task of it."""


def lattice_cells(shape: tuple[int, int]) -> tuple[int, int] | None:
    """The `(height, width)` in cells whose generated mazes have grids of `shape` (odd sides
    2 * cells + 1, cells in the generators' range), or None when no generator makes it."""
    cells = ((shape[0] - 1) // 2, (shape[1] - 1) // 2)
    odd = shape[0] % 2 == 1 and shape[1] % 2 == 1
    return cells if odd and all(MIN_CELLS <= c <= MAX_CELLS for c in cells) else None


def variant(
    spec: MazeSpec, size_delta: int = 0, generator: str | None = None, start_goal: str | None = None
) -> MazeSpec:
    """`spec` larger by `size_delta` cells a side, or from another generator or placement (an
    evaluation set's variant): `spec` itself with those fields changed, every other field
    (`routes`, `route_lengths`, any new one) carried over. A layout's variant is generated
    mazes at the cell size of the layout's grid (`lattice_cells`); a `ConfigError` when no
    generator makes that grid."""
    if not (size_delta or generator or start_goal):
        return spec
    if spec.layout is not None:
        cells = lattice_cells(spec.grid_shape)
        if cells is None:
            h, w = spec.grid_shape
            raise ConfigError(
                f"maze.layout={spec.layout}: its {h}x{w} grid is not one a generator makes "
                "(odd sides, 2 * cells + 1), so it has no larger or other-generator variant"
            )
        h, w = cells
    else:
        h, w = spec.cells
    return replace(
        spec,
        layout=None,
        height=h + size_delta,
        width=w + size_delta,
        generator=generator or spec.generator,
        start_goal=start_goal or spec.start_goal,
    )


def eval_set_spec(spec: MazeSpec, set_cfg) -> MazeSpec | None:
    """The mazes of an evaluation set config in a run on `spec`, the one way to get them (the
    validation and `build_sets`, which `mazerl-eval` and the LM export use): the run's spec
    with the set's changes, its own `layout` collection, else the training mazes with the
    set's variants (`variant`); None when the set varies a layout run's generator
    (size_delta, generator, start_goal) but no generator makes the layout's grid: such a set
    is skipped."""
    if set_cfg.layout is not None:
        return replace(spec, layout=set_cfg.layout)
    varies = bool(set_cfg.size_delta or set_cfg.generator or set_cfg.start_goal)
    if varies and spec.layout is not None and lattice_cells(spec.grid_shape) is None:
        return None
    return variant(spec, set_cfg.size_delta, set_cfg.generator, set_cfg.start_goal)


def base_spec(spec: MazeSpec) -> MazeSpec:
    """The mazes a run's base model learns from: the run's generated mazes with one route
    (perfect mazes, also for braid runs), or a layout run's collection as it is."""
    return spec if spec.layout is not None else replace(spec, routes=1)


def sample_mazes(spec: MazeSpec, count: int, excluded: set[bytes], *keys: int) -> list[Maze]:
    """`count` mazes from the stream `keys` (maze i from `rng(*keys, i)`), skipping any whose
    key is in `excluded` (evaluation mazes). A `ConfigError` naming the settings to change when
    the space is too small to give them."""
    out, seen, i = [], set(), 0
    while len(out) < count:
        maze = spec.sample(rng(*keys, i))
        i += 1
        seen.add(maze.key)
        if maze.key not in excluded:
            out.append(maze)
        if i > 100 * count + 1000:
            raise ConfigError(
                f"cannot draw {count} mazes disjoint from the evaluation sets: {i} draws of "
                f"{spec.describe()} gave {len(seen)} distinct mazes, {len(seen & excluded)} of "
                "them evaluation mazes; raise maze.size (or maze.height/maze.width), or lower "
                "eval.sets[*].num_mazes for the sets drawn like the training mazes"
            )
    return out
