"""Paired differences between two methods of a `method=` sweep (the decisive study), where the
summary pairs every method with GRPO only: method B minus method A at one group size, runs
paired by seed (on the protocol: by bank model) and evaluation maze, the two-way interval of
"Paired differences" (`mazerl.analysis.stats.paired_difference`), in points. With `--b-sweep`
method B comes from another sweep (a second arm of a study; the two runs of each pair, where
both have finished, must have started from the same base model, by its sha256).

    python experiments/pairwise.py experiments/runs/decisive pkpo maxrl --n 32 --step 15000
    python experiments/pairwise.py experiments/runs/decisive grpo grpo --n 8 --step 20000 \
        --b-sweep experiments/runs/decisive_nozero
"""

import argparse
from pathlib import Path

from mazerl.analysis.runs import at_step, find_runs
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.tables import paired_matrix


def finished_at(sweep: Path, n: int, step: int) -> dict[tuple[str, str], tuple]:
    """`{(method, seed): (the run read at step, its base model's sha256 or None)}` for the
    sweep's runs at group size n (the sha256 from a finished run's `metrics.json`)."""
    runs = {}
    for run in find_runs(sweep):
        if run.n == n:
            read = at_step(run, step)
            if read.metrics is not None:
                base = run.origin.sha256
                runs[run.overrides.get("method"), run.overrides.get("seed")] = (read, base)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep", type=Path)
    ap.add_argument("a", help="the reference method (a conf/method/ preset)")
    ap.add_argument("b", help="the compared method")
    ap.add_argument("--n", type=int, required=True, help="group size N")
    ap.add_argument("--step", type=int, required=True, help="evaluation step to read")
    ap.add_argument("--b-sweep", type=Path, help="read method b from this sweep instead")
    args = ap.parse_args()
    b_sweep = args.b_sweep or args.sweep
    runs_a = finished_at(args.sweep, args.n, args.step)
    runs_b = runs_a if b_sweep == args.sweep else finished_at(b_sweep, args.n, args.step)
    seeds = sorted(
        {s for m, s in runs_a if m == args.a} & {s for m, s in runs_b if m == args.b},
        key=int,
    )
    if len(seeds) < 2:
        raise SystemExit(f"error: {args.a} and {args.b} share {len(seeds)} seeds at N = {args.n}")
    for s in seeds:
        (_, base_a), (_, base_b) = runs_a[args.a, s], runs_b[args.b, s]
        if base_a and base_b and base_a != base_b:
            raise SystemExit(f"error: seed {s}: the two runs started from different base models")
    pairs = [(runs_a[args.a, s][0], runs_b[args.b, s][0]) for s in seeds]
    where = f" ({b_sweep} against {args.sweep})" if b_sweep != args.sweep else ""
    print(
        f"{args.b} - {args.a}{where}, N = {args.n}, step {args.step:,}, seeds {', '.join(seeds)}:"
    )
    for col in sorted(pairs[0][0].metrics["final"]):
        if col.endswith(("/exact_pass@1", "/exact_pass@256")):
            d = paired_difference(paired_matrix(pairs, col))
            lo, hi = d.interval()
            print(f"  {col}: {100 * d.mean:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")


if __name__ == "__main__":
    main()
