"""`mazerl-maze`: look at mazes and check layout files.

mazerl-maze show --generator prim --size 8 --seed 3
mazerl-maze show --layout spiral
mazerl-maze check my_layout.txt
mazerl-maze list
"""

import argparse

import numpy as np

from mazerl.core.cli import exit_on_user_error
from mazerl.envs import generators, layouts
from mazerl.envs.maze import MOVE_NAMES, Maze, replay
from mazerl.envs.render import render_ansi
from mazerl.envs.spec import MazeSpec


def describe(maze: Maze) -> str:
    h, w = maze.shape
    lines = [
        f"{maze.name}: {h}x{w} grid, start {maze.start}, goal {maze.goal}, "
        f"{len(maze.routes)} simple path(s), shortest {maze.shortest_path_length} moves",
        render_ansi(maze, replay(maze.grid, maze.start, maze.solution)).rstrip("\n"),
        "solution: " + " ".join(MOVE_NAMES[m] for m in maze.solution),
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mazerl-maze", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a maze and its solution")
    show.add_argument("--generator", default="prim", help=f"one of {generators.GENERATORS.names()}")
    show.add_argument("--size", type=int, default=5, help="cells per side (default 5)")
    show.add_argument("--height", type=int, default=None, help="cells, overrides --size")
    show.add_argument("--width", type=int, default=None, help="cells, overrides --size")
    show.add_argument(
        "--start-goal", default="corners", help=f"one of {generators.PLACEMENTS.names()}"
    )
    show.add_argument("--seed", type=int, default=0)
    show.add_argument("--layout", default=None, help="a shipped layout name or a file path")
    check = sub.add_parser("check", help="validate a layout file, or say why it is rejected")
    check.add_argument("file")
    sub.add_parser("list", help="list shipped layouts and generators")
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command == "show":
        spec = MazeSpec(
            args.size, args.height, args.width, args.generator, args.start_goal, args.layout
        )
        print(describe(spec.sample(np.random.default_rng(args.seed))))
    elif args.command == "check":
        maze = layouts.load(args.file)
        print(
            f"ok: {args.file}: {maze.shape[0]}x{maze.shape[1]} grid, one simple path of "
            f"{maze.shortest_path_length} moves"
        )
    else:
        for name, path in sorted(layouts.shipped_layouts().items()):
            maze = layouts.load(str(path))
            print(f"layout {name:12s} {maze.shape[0]}x{maze.shape[1]}  {path}")
        print("generators:", ", ".join(generators.GENERATORS.names()))
        print("start_goal:", ", ".join(generators.PLACEMENTS.names()))


if __name__ == "__main__":
    main()
