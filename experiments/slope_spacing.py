"""Does the still-moving screen read the same with fewer evaluations? Each reading of the
screen (`mazerl.analysis.convergence.still_moving`: per group, and per paired difference with
the two groups it compares) on the ID set, read at every step from `--start` to the runs' end,
from all of a sweep's evaluations and from only those at multiples of `--every` steps. Prints
one line per read step and group that changes its reading, then the count that agree.

    python experiments/slope_spacing.py experiments/runs/maze_long --every 1000
"""

import argparse
import shutil
import tempfile
from pathlib import Path

from mazerl.analysis.convergence import convergence, entry_moving, still_moving
from mazerl.analysis.runs import at_step, evaluations, find_runs
from mazerl.analysis.tables import aggregate, paired_comparisons


def thinned_copy(sweep: Path, every: int, dest: Path) -> Path:
    """A copy of `sweep`'s run dirs under `dest` (links to the files) keeping only the
    evaluations at multiples of `every` steps."""
    for run in find_runs(sweep):
        out = dest / run.path.relative_to(sweep)
        (out / "eval").mkdir(parents=True)
        shutil.copytree(run.path / ".hydra", out / ".hydra", copy_function=_link)
        if (run.path / "metrics.json").exists():
            _link(run.path / "metrics.json", out / "metrics.json")
        for f in (run.path / "eval").glob("step_*.json"):
            if int(f.stem.removeprefix("step_")) % every == 0:
                _link(f, out / "eval" / f.name)
    return dest


def _link(src, dst) -> None:
    Path(dst).symlink_to(Path(src).resolve())


def readings(sweep: Path, step: int) -> dict[str, str]:
    """`{group or "group - reference": yes / no / n/a}`: whether it is still moving on the ID
    set at `step`."""
    runs = [at_step(r, step) for r in find_runs(sweep)]
    cols, rows = aggregate(runs)
    if not rows:
        return {}
    paired = paired_comparisons(runs, cols)
    trends = convergence(runs, cols, paired)
    out = {
        label: still_moving(s for c, s in slopes.items() if c.set == "id")
        for label, slopes in trends["groups"].items()
    }
    for i, e in enumerate(paired):
        out[f"{e['group']} - {e['reference']}"] = entry_moving(trends, i, e, "id")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--every", type=int, required=True, help="keep evaluations at these steps")
    ap.add_argument("--start", type=int, default=8000, help="first read step (default 8,000)")
    args = ap.parse_args()
    ends = [max(evaluations(r)) for r in find_runs(args.sweep) if evaluations(r)]
    if not ends:
        raise SystemExit(f"error: no evaluations under {args.sweep}")
    with tempfile.TemporaryDirectory() as tmp:
        thin = thinned_copy(args.sweep, args.every, Path(tmp) / "thin")
        agree = total = 0
        for step in range(args.start, min(ends) + 1, args.every):
            full, few = readings(args.sweep, step), readings(thin, step)
            for label, v in full.items():
                total += 1
                agree += v == few[label]
                if v != few[label]:
                    print(f"step {step:,}: {label}: {v} (all) -> {few[label]} (thinned)")
    print(f"{agree} of {total} readings agree (steps {args.start:,}-{min(ends):,})")


if __name__ == "__main__":
    main()
