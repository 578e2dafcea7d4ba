"""`mazerl-summarize SWEEP_DIR`: one table and a few pictures for a whole sweep.

Finds every run under SWEEP_DIR (any folder with a `.hydra/` config, whatever the launcher),
groups runs by the swept keys except `seed`, and writes into SWEEP_DIR `summary.md`,
`summary.csv` and the figures (`mazerl.analysis`, which a notebook can import directly).
The markdown table is also printed.
"""

import argparse
from pathlib import Path

from mazerl.core.cli import exit_on_user_error


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="mazerl-summarize", description=__doc__.split("\n")[0])
    ap.add_argument("sweep_dir", type=Path)
    args = ap.parse_args(argv)
    from mazerl.analysis import summarize  # matplotlib, scipy: loaded after argument parsing

    print(summarize(args.sweep_dir), end="")


if __name__ == "__main__":
    main()
