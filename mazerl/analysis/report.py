"""`summarize(sweep)`: a sweep's tables and figures written into its folder."""

from pathlib import Path

from mazerl.analysis.beside_paper import table4_markdown
from mazerl.analysis.convergence import convergence, convergence_markdown, entry_settled
from mazerl.analysis.figures import plot_categorical, plot_maze, plot_routes
from mazerl.analysis.runs import find_runs
from mazerl.analysis.tables import aggregate, markdown, paired_comparisons, write_csv
from mazerl.core.errors import UserError


def summarize(sweep: Path) -> str:
    if not sweep.is_dir():
        raise UserError(f"sweep dir {sweep} does not exist")
    runs = find_runs(sweep)
    if not runs:
        raise UserError(f"no runs under {sweep} (looked for folders with a .hydra/ config)")
    cols, rows = aggregate(runs)
    paired = paired_comparisons(runs, cols) if rows else []
    trends = convergence(runs, cols, paired) if rows else {"groups": {}, "paired": []}
    for i, e in enumerate(paired):
        sets = {c.split("/")[1] for c in e["diffs"]}
        e["converged"] = {s: entry_settled(trends, i, e, s) for s in sets}
    extra = table4_markdown(paired) + convergence_markdown(trends, paired)
    text = markdown(cols, rows, runs, paired, extra)
    (sweep / "summary.md").write_text(text)
    write_csv(sweep / "summary.csv", cols, rows, paired)
    if rows:
        if any(c.startswith("eval/") for c in cols):
            plot_maze(sweep, runs, cols)
            if any(c.startswith("routes/") for c in cols):
                plot_routes(sweep, runs)
        else:
            plot_categorical(sweep, runs, cols)
    return text
