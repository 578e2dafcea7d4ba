"""Analysis of finished (and running) sweeps, importable from a notebook: runs, statistics,
tables, figures. `mazerl-summarize` is a thin command over `summarize`.

    from mazerl.analysis import load_sweep, summarize
    df = load_sweep("runs/my_sweep")  # one row per run and evaluation step
    summarize(Path("runs/my_sweep"))  # summary.md, summary.csv, figures
"""

from mazerl.analysis.report import summarize
from mazerl.analysis.runs import Run, find_runs, load_sweep, per_maze_values

__all__ = ["Run", "find_runs", "load_sweep", "per_maze_values", "summarize"]
