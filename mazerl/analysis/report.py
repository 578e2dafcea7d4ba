"""`summarize(*folders)`: the tables and figures of one sweep, or of runs from several
folders compared together (paired where they match)."""

import shlex
from pathlib import Path

from mazerl.analysis.beside_paper import table4_markdown
from mazerl.analysis.convergence import convergence, convergence_markdown, entry_settled
from mazerl.analysis.figures import (
    Output,
    lacking_training_data,
    plot_categorical,
    plot_maze,
    plot_routes,
)
from mazerl.analysis.leaderboard import (
    board_markdown,
    board_rows,
    measure,
    missing_markdown,
    plot_board,
    varies_methods,
    write_board_csv,
)
from mazerl.analysis.runs import Run, find_runs
from mazerl.analysis.tables import aggregate, markdown, paired_comparisons, write_csv
from mazerl.core.errors import UserError


def summarize(*folders: Path, out: Path | None = None) -> str:
    """Write `summary.md`, `summary.csv` and the figures into `out` (default: the one folder
    given) for every run under `folders`, and for a sweep of 3 or more methods (`algo`) the
    leaderboard (`mazerl.analysis.leaderboard`: its section, leaderboard.csv and
    leaderboard.png); returns the markdown. Runs of different folders
    with the same overrides are told apart by a `folder` key (never paired with each other)."""
    folders = tuple(Path(f) for f in folders)
    for folder in folders:
        if not folder.is_dir():
            raise UserError(f"sweep dir {folder} does not exist")
    if out is None and len(folders) > 1:
        raise UserError("several sweep dirs: name the folder for the summary with --out DIR")
    out = Path(out) if out is not None else folders[0]
    runs = gather(folders)
    if not runs:
        where = ", ".join(map(str, folders))
        raise UserError(f"no runs under {where} (looked for folders with a .hydra/ config)")
    out.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["mazerl-summarize", *map(str, folders)])
    command += f" --out {out}" if len(folders) > 1 else ""
    dest = Output(out, command)
    cols, rows = aggregate(runs)
    paired = paired_comparisons(runs, cols) if rows else []
    trends = convergence(runs, cols, paired) if rows else {"groups": {}, "paired": []}
    for i, e in enumerate(paired):
        sets = {c.split("/")[1] for c in e["diffs"]}
        e["converged"] = {s: entry_settled(trends, i, e, s) for s in sets}
    maze = any(c.startswith("eval/") for c in cols)
    board = measure(board_rows(runs), cols) if maze and varies_methods(runs) else []
    extra = board_markdown(board, cols) + (missing_markdown(runs, board) if board else [])
    extra += table4_markdown(paired) + convergence_markdown(trends, paired)
    if rows and lacking_training_data([r for r in runs if r.metrics is not None]):
        extra += [
            "These runs have no training scalars (train.csv, or TensorBoard events, which are "
            "not committed): curves.png, routes.png and behaviour.png are kept as drawn when "
            "the events existed, or drawn without their training panels.",
            "",
        ]
    text = markdown(cols, rows, runs, paired, extra)
    (out / "summary.md").write_text(text)
    write_csv(out / "summary.csv", cols, rows, paired)
    if board:
        write_board_csv(out / "leaderboard.csv", board)
        plot_board(dest, board, cols)
    if rows:
        if maze:
            plot_maze(dest, runs, cols)
            if any(c.startswith("routes/") for c in cols):
                plot_routes(dest, runs)
        else:
            plot_categorical(dest, runs, cols)
    return text


def gather(folders: tuple[Path, ...]) -> list[Run]:
    """The runs of every folder; where one set of overrides occurs in more than one folder,
    every run gets the override `folder=<its folder>`, so that no run hides another."""
    by_folder = [(f, find_runs(f)) for f in folders]
    seen: dict[tuple, set[Path]] = {}
    for f, runs in by_folder:
        for r in runs:
            seen.setdefault(tuple(sorted(r.overrides.items())), set()).add(f)
    if any(len(where) > 1 for where in seen.values()):
        for f, runs in by_folder:
            for r in runs:
                r.overrides["folder"] = str(f)
    return [r for _, runs in by_folder for r in runs]
