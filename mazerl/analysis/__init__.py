"""Analysis of finished sweeps, importable from a notebook: runs, statistics, tables, figures.

from mazerl.analysis import summarize
summarize(Path("experiments/runs/maze_group_sweep"))   # summary.md, summary.csv, figures
"""

from mazerl.analysis.report import summarize

__all__ = ["summarize"]
