"""Analysis of finished (and running) sweeps, importable from a notebook: runs, statistics,
tables, figures. `mazerl-summarize` is a thin command over `summarize`.

    from mazerl.analysis import load_sweep, summarize
    df = load_sweep("runs/my_sweep")  # one row per run and evaluation step
    summarize(Path("runs/my_sweep"))  # summary.md, summary.csv, figures
"""

from mazerl.core.lazy import lazy_getattr

# the names below -> their modules (imported on first use: `mazerl.analysis.folders` loads
# without pandas, scipy or matplotlib)
LAZY = {
    "summarize": "report",
    "Run": "runs",
    "find_runs": "runs",
    "load_sweep": "runs",
    "per_maze_values": "runs",
}


__getattr__ = lazy_getattr(__name__, LAZY)


__all__ = ["Run", "find_runs", "load_sweep", "per_maze_values", "summarize"]
