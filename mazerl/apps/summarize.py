"""`mazerl-summarize SWEEP_DIR [SWEEP_DIR ...] [--out DIR]`: tables and figures of a sweep.

Finds every run under each SWEEP_DIR (any folder with a `.hydra/` config, whatever the
launcher), groups runs by the swept keys except `seed`, and writes `summary.md`, `summary.csv`
and the figures into SWEEP_DIR (several folders: into `--out DIR`, runs paired across folders
where they match); a sweep of 3 or more methods (`algo`) adds the leaderboard
(`leaderboard.csv`, `leaderboard.png`), and so do runs of the leaderboard protocol, paired by
bank model (`mazerl-summarize MY_SWEEP experiments/runs/decisive --out DIR` puts a new method
among the committed ones; each N is read at its finished runs' end, or at the latest
evaluation its started runs share before any has finished or where they ran different lengths);
paired comparisons add how many base models reach +-5 points (`mazerl.analysis.power`); runs
that fell (ended below their own base model, or 20 points below their evaluation before the
last) and runs forked from another run's checkpoint (`train.fork`) are listed (kept in every
mean). A `study.yaml` in SWEEP_DIR adds the study's own: `claims:` its claims file
(`claims.md`, `claims.csv`, the verdicts by one rule), `sections:` its summary sections
(`mazerl.analysis.study`); `--claims-only` writes only claims.md and claims.csv (into SWEEP_DIR
or `--out DIR`), recomputed from the runs' per-maze files in seconds. `--at-step STEP` reads
every run as it stood at its evaluation at STEP (a longer run counts as ended there). The
markdown is also printed, then the jobs of each sweep's last launch (its `multirun.yaml`) with
no finished run: failed, running or never started, each with its log. The work is
`mazerl.analysis`, which a notebook can import directly.
"""

from pathlib import Path

from mazerl.core.cli import ArgumentParser, exit_on_user_error


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="mazerl-summarize", description=__doc__.split("\n")[0])
    ap.add_argument("sweep_dir", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, help="where the summary goes (needed with several dirs)")
    ap.add_argument(
        "--at-step",
        type=int,
        metavar="STEP",
        help="read every run as it stood at its evaluation at STEP (longer runs end there)",
    )
    ap.add_argument(
        "--claims-only",
        action="store_true",
        help="write only claims.md and claims.csv (the study.yaml's claims file), no summary",
    )
    args = ap.parse_args(argv)
    from mazerl.analysis.folders import check_folders, launched_jobs, unfinished_jobs

    out = check_folders(tuple(args.sweep_dir), args.out, args.at_step)  # before heavy imports
    if args.claims_only:
        from mazerl.analysis.claims import summarize_claims

        if len(args.sweep_dir) > 1 or args.at_step is not None:
            ap.error("--claims-only takes one SWEEP_DIR and no --at-step")
        out.mkdir(parents=True, exist_ok=True)
        if summarize_claims(args.sweep_dir[0], out) is None:
            ap.error(f"{args.sweep_dir[0]}: its study.yaml names no claims file")
        print(f"{out / 'claims.md'}, {out / 'claims.csv'}")
        return
    from mazerl.analysis import summarize  # pandas, scipy, matplotlib

    print(summarize(*args.sweep_dir, out=args.out, step=args.at_step), end="")
    for folder in args.sweep_dir:
        if lines := unfinished_jobs(folder):
            launched = len(launched_jobs(folder))
            print(
                f"\nJobs of {folder}'s last launch with no finished run ({len(lines)} of "
                f"{launched}; their logs):"
            )
            print("\n".join(lines))


if __name__ == "__main__":
    main()
