"""`mazerl-maze`: look at mazes, check layout collections, export generated mazes.

mazerl-maze show --generator prim --size 8 --seed 3
mazerl-maze show --layout my_mazes.txt --index 3
mazerl-maze show --layout spiral --png spiral.png
mazerl-maze check my_mazes/                  (a file, collection file, directory or glob)
mazerl-maze export my_mazes.txt --count 100 --generator prim --size 5 --seed 0
mazerl-maze list
"""

import argparse
import sys
import typing
from dataclasses import fields
from pathlib import Path

import numpy as np

from mazerl.core.cli import ArgumentParser, exit_on_user_error
from mazerl.core.errors import ConfigError, LayoutError
from mazerl.envs import generators, layouts
from mazerl.envs.maze import MOVE_NAMES, Maze, replay
from mazerl.envs.render import render_ansi, render_behaviour, save_png
from mazerl.envs.spec import MazeSpec


def describe(maze: Maze) -> str:
    """A maze as text: a summary line, the picture with its shortest route, the moves."""
    h, w = maze.shape
    lines = [
        f"{maze.name}: {h}x{w} grid, start {maze.start}, goal {maze.goal}, "
        f"{len(maze.routes)} simple path(s), shortest {maze.shortest_path_length} moves",
        render_ansi(maze, replay(maze.grid, maze.start, maze.solution)).rstrip("\n"),
        "solution: " + " ".join(MOVE_NAMES[m] for m in maze.solution),
    ]
    return "\n".join(lines)


def _spec_arguments(parser: argparse.ArgumentParser, without: tuple[str, ...] = ()) -> None:
    """The options of a `MazeSpec`, one per field (`--size`, `--start-goal`, ...) with its
    default and description, but the fields `without` (left at their defaults)."""
    for f in fields(MazeSpec):
        if f.name in without:
            parser.set_defaults(**{f.name: f.default})
            continue
        kind = int if int in (f.type, *typing.get_args(f.type)) else str
        option = "--" + f.name.replace("_", "-")
        parser.add_argument(option, type=kind, default=f.default, help=f.metadata["help"])


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="mazerl-maze", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a maze and its solution")
    _spec_arguments(show)
    show.add_argument("--seed", type=int, default=0)
    show.add_argument("--index", type=int, default=1, help="maze of the collection (from 1)")
    show.add_argument("--png", default=None, help="also draw it, solution outlined, to this PNG")
    check = sub.add_parser("check", help="validate every maze of a layout collection")
    check.add_argument("path", help="a layout file, collection file, directory, glob or name")
    check.add_argument("--routes", type=int, default=1, help="routes of undeclared mazes")
    export = sub.add_parser("export", help="write generated mazes to a collection file")
    export.add_argument("out", help="the collection file to write")
    export.add_argument("--count", type=int, default=100, help="mazes (default 100)")
    _spec_arguments(export, without=("layout",))
    export.add_argument("--seed", type=int, default=0, help="maze i uses seed + i, as `show`")
    export.add_argument("--force", action="store_true", help="overwrite an existing file")
    sub.add_parser("list", help="list shipped layouts and generators")
    return parser


def pick(args) -> Maze:
    """The maze `show` draws: maze `--index` of `--layout`, or the generated one of `--seed`."""
    spec = MazeSpec.of(args)
    if spec.layout is None:
        return spec.sample(np.random.default_rng(args.seed))
    mazes = spec.collection
    if not 1 <= args.index <= len(mazes):
        raise ConfigError(f"--index must be in [1, {len(mazes)}] for {args.layout}")
    return mazes[args.index - 1]


def check(path: str, routes: int) -> bool:
    """Report every maze of a collection (ok lines on stdout, rejections on stderr)."""
    read = layouts.read_collection(path, routes)
    for maze in read:
        if isinstance(maze, LayoutError):
            print(f"error: {maze}", file=sys.stderr)
        else:
            h, w = maze.shape
            print(
                f"ok: {maze.name}: {h}x{w} grid, {len(maze.routes)} simple path(s), "
                f"shortest {maze.shortest_path_length} moves"
            )
    good = [m for m in read if isinstance(m, Maze)]
    shapes = sorted({m.shape for m in good})
    if len(shapes) > 1:
        h, w = max(s[0] for s in shapes), max(s[1] for s in shapes)
        print(f"note: mixed grid sizes; a run pads every maze with walls to {h}x{w}")
    if len(read) > 1:
        print(f"{path}: {len(read)} mazes, {len(good)} ok, {len(read) - len(good)} rejected")
    return len(good) == len(read)


def export(args) -> None:
    out = Path(args.out)
    if out.exists() and not args.force:
        raise ConfigError(f"{out} exists; pass --force to overwrite it")
    if args.count < 1:
        raise ConfigError(f"--count must be >= 1, got {args.count}")
    spec = MazeSpec.of(args)
    mazes = [spec.sample(np.random.default_rng(args.seed + i)) for i in range(args.count)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(layouts.collection_text(mazes), encoding="utf-8")
    distinct = len({m.key for m in mazes})
    print(
        f"wrote {out}: {args.count} {spec.describe()}, seeds {args.seed}..."
        f"{args.seed + args.count - 1}"
        + (f" ({distinct} distinct)" if distinct < len(mazes) else "")
    )


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command == "show":
        maze = pick(args)
        print(describe(maze))
        if args.png:
            save_png(render_behaviour(maze), args.png)
    elif args.command == "check":
        if not check(args.path, args.routes):
            raise SystemExit(2)
    elif args.command == "export":
        export(args)
    else:
        for name, path in sorted(layouts.shipped_layouts().items()):
            mazes = layouts.load_collection(str(path))
            h, w = mazes[0].shape
            kind = "layout" if len(mazes) == 1 else f"collection of {len(mazes)}"
            print(f"{name:12s} {kind:17s} {f'{h}x{w}':6s} {path}")
        print("generators:", ", ".join(generators.GENERATORS.names()))
        print("start_goal:", ", ".join(generators.PLACEMENTS.names()))


if __name__ == "__main__":
    main()
