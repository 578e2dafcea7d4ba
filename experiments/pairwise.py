"""Paired differences between two methods of a `method=` sweep (the decisive study), where the
summary pairs every method with GRPO only: method B minus method A at one group size, runs
paired by seed (on the protocol: by bank model) and evaluation maze, the two-way interval of
"Paired differences" (`mazerl.analysis.stats.paired_difference`), in points.

    python experiments/pairwise.py experiments/runs/decisive pkpo maxrl --n 32 --step 15000
"""

import argparse
from pathlib import Path

from mazerl.analysis.runs import at_step, find_runs
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.tables import paired_matrix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep", type=Path)
    ap.add_argument("a", help="the reference method (a conf/method/ preset)")
    ap.add_argument("b", help="the compared method")
    ap.add_argument("--n", type=int, required=True, help="group size N")
    ap.add_argument("--step", type=int, required=True, help="evaluation step to read")
    args = ap.parse_args()
    runs: dict[tuple[str, str], object] = {}  # (method, seed) -> the run at --step
    for run in find_runs(args.sweep):
        if run.config.get("train", {}).get("group_size") == args.n:
            read = at_step(run, args.step)
            if read.metrics is not None:
                runs[run.overrides.get("method"), run.overrides.get("seed")] = read
    seeds = sorted({s for m, s in runs if m == args.a} & {s for m, s in runs if m == args.b})
    if len(seeds) < 2:
        raise SystemExit(f"error: {args.a} and {args.b} share {len(seeds)} seeds at N = {args.n}")
    pairs = [(runs[args.a, s], runs[args.b, s]) for s in seeds]
    print(f"{args.b} - {args.a}, N = {args.n}, step {args.step:,}, seeds {', '.join(seeds)}:")
    for col in sorted(pairs[0][0].metrics["final"]):
        if col.endswith(("/exact_pass@1", "/exact_pass@256")):
            d = paired_difference(paired_matrix(pairs, col))
            lo, hi = d.interval()
            print(f"  {col}: {100 * d.mean:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")


if __name__ == "__main__":
    main()
