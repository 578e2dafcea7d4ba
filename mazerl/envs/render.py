"""Pictures of a maze: text (`ansi`), an RGB array (`rgb_array`) and a behaviour picture
(`render_behaviour`: where sampled responses go; TensorBoard images, `mazerl-maze show --png`)."""

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mazerl.core.errors import UserError
from mazerl.envs.maze import DELTAS, Cell, Maze, replay

COLOURS = {
    "wall": (40, 40, 48),
    "open": (245, 245, 240),
    "start": (60, 170, 80),
    "goal": (215, 60, 50),
    "path": (120, 170, 235),
    "agent": (30, 70, 200),
}


def render_ansi(maze: Maze, path: Sequence[Cell] = ()) -> str:
    """Text picture of a maze and a walk in it.

    Args:
        maze: the maze.
        path: `(row, col)` cells walked, the agent on the last.

    Returns:
        One line per grid row: `#` wall, `S` start, `G` goal, `*` visited, `@` the agent
        (unless it stands on S or G).
    """
    chars = np.where(maze.grid == 1, "#", " ").astype("<U1")
    for cell in path:
        chars[cell] = "*"
    if len(path) > 1:
        chars[path[-1]] = "@"
    chars[maze.start] = "S"
    chars[maze.goal] = "G"
    return "\n".join("".join(row) for row in chars) + "\n"


def render_rgb(maze: Maze, paths: Sequence[Sequence[Cell]] = (), cell_px: int = 8) -> np.ndarray:
    """Picture of a maze and walks in it.

    Args:
        maze: the maze, an `(H, W)` grid.
        paths: walks, each a sequence of `(row, col)` cells, drawn in blue, later on top; the
            last cell of the last path is the agent.
        cell_px: pixels per grid cell.

    Returns:
        `(H * cell_px, W * cell_px, 3)` uint8 image.
    """
    h, w = maze.shape
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = COLOURS["open"]
    img[maze.grid == 1] = COLOURS["wall"]
    for path in paths:
        for cell in path:
            img[cell] = COLOURS["path"]
    img[maze.start] = COLOURS["start"]
    img[maze.goal] = COLOURS["goal"]
    if paths and len(paths[-1]) > 1:
        img[paths[-1][-1]] = COLOURS["agent"]
    return np.repeat(np.repeat(img, cell_px, axis=0), cell_px, axis=1)


# ---- behaviour pictures: where n sampled responses go (TensorBoard images, `mazerl-maze show
# --png`). Matplotlib is imported lazily: the Gym env does not need it.
END_MARKS = {  # event -> (matplotlib marker, legend text)
    "goal": ("*", "reached the goal"),
    "wall": ("X", "hit a wall"),
    "revisit": ("o", "revisited a cell"),
    "stop": ("s", "stopped (DONE)"),
    "move": (">", "ran out of steps"),
}
PATH_COLOURS = ("#e6194b", "#f58231", "#911eb4", "#3cb44b", "#f032e6", "#9a6324")


def visit_fraction(maze: Maze, samples: Sequence[Sequence[int]]) -> np.ndarray:
    """Where samples go.

    Args:
        maze: the maze, an `(H, W)` grid.
        samples: action sequences from the start.

    Returns:
        `[H, W]` float, the fraction of the samples that enter each cell at least once; the
        start counts as visited by every sample.
    """
    counts = np.zeros(maze.shape)
    for moves in samples:
        rows, cols = zip(*set(replay(maze.grid, maze.start, tuple(moves))), strict=True)
        counts[list(rows), list(cols)] += 1
    return counts / max(1, len(samples))


def render_behaviour(
    maze: Maze,
    samples: Sequence[Sequence[int]] = (),
    events: Sequence[str] = (),
    name: str | None = None,
    shown: int = 4,
    px: int = 360,
) -> np.ndarray:
    """Picture of where sampled responses go: walls dark, a heat map of `visit_fraction` over
    the open cells, the solution outlined in green, the first `shown` samples drawn in
    distinct colours, each ending in a mark for its end event.

    Args:
        maze: the maze.
        samples: action sequences from the start.
        events: how each sample ended, one of `END_MARKS` per sample.
        name: the title; None: the maze's name. With samples the title adds the success rate
            (the share of `events` equal to "goal").
        shown: how many samples are drawn as paths.
        px: the maze's height in pixels.

    Returns:
        `(height, width, 3)` uint8 picture, the legend beside the maze.
    """
    from matplotlib import colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    h, w = maze.shape
    # a fixed layout in inches (no tight bounding box: that would draw everything twice):
    # margin | maze (px high) | colour bar with its label | legend
    dpi, side, margin = 100, px / 100, 0.08
    maze_w, bar_w, legend_w, title_h = side * w / h, 0.75 if samples else 0.0, 2.4, 0.35
    fig_w, fig_h = margin + maze_w + bar_w + legend_w, margin + side + title_h
    fig = Figure(figsize=(fig_w, fig_h), dpi=dpi)  # no pyplot: nothing global to close
    ax = fig.add_axes((margin / fig_w, margin / fig_h, maze_w / fig_w, side / fig_h))
    ax.imshow(maze.grid == 1, cmap=colors.ListedColormap(["#f5f5f0", "#282830"]))
    if samples:
        visits = visit_fraction(maze, samples)
        heat = np.ma.masked_where((maze.grid == 1) | (visits == 0), visits)
        image = ax.imshow(heat, cmap="Blues", vmin=0, vmax=1, alpha=0.85)
        bar = fig.add_axes(
            ((margin + maze_w + 0.1) / fig_w, margin / fig_h, 0.12 / fig_w, side / fig_h)
        )
        fig.colorbar(image, cax=bar, label="share of samples visiting")
    for r, c in replay(maze.grid, maze.start, maze.solution):
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, ec="#1a9850", lw=2.2))
    for cell, text in ((maze.start, "S"), (maze.goal, "G")):
        ax.text(cell[1], cell[0], text, ha="center", va="center", weight="bold", fontsize=11)
    handles = []
    for i, (moves, event) in enumerate(list(zip(samples, events, strict=True))[:shown]):
        cells = np.array(replay(maze.grid, maze.start, tuple(moves)), dtype=float)
        offset = (i - (min(shown, len(samples)) - 1) / 2) * 0.12  # side by side, not on top
        ys, xs = cells[:, 0] + offset, cells[:, 1] + offset
        colour = PATH_COLOURS[i % len(PATH_COLOURS)]
        ax.plot(xs, ys, color=colour, lw=2, alpha=0.9)
        end = np.array([ys[-1], xs[-1]])
        if event == "wall" and len(moves) >= len(cells):  # the move that hit the wall
            end += 0.45 * np.array(DELTAS[moves[len(cells) - 1]])
        marker = END_MARKS.get(event, ("d", event))[0]
        ax.plot(end[1], end[0], marker=marker, ms=13, color=colour, mec="black", mew=1)
        label = f"sample {i + 1}: {END_MARKS.get(event, ('', event))[1]}"
        handles.append(Line2D([], [], color=colour, marker=marker, mec="black", label=label))
    handles.append(Rectangle((0, 0), 1, 1, fill=False, ec="#1a9850", lw=2, label="solution"))
    anchor = ((margin + maze_w + bar_w) / fig_w, (margin + side) / fig_h)  # right of the bar
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=anchor, fontsize=8, frameon=False)
    title = name or maze.name
    if samples:
        wins = sum(e == "goal" for e in events)
        title += f": success {wins}/{len(events)} = {wins / len(events):.0%}"
    ax.set_title(title, fontsize=10)
    ax.set_axis_off()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def save_png(image: np.ndarray, path: str | Path) -> None:
    """Write a picture as PNG.

    Args:
        image: `(H, W, 3)` uint8 picture.
        path: the file written.

    Raises:
        UserError: the path cannot be written.
    """
    from matplotlib.image import imsave

    try:
        imsave(path, image, format="png")
    except OSError as e:
        raise UserError(f"cannot write the picture {path}: {e.strerror or e}") from None
