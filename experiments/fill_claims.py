"""Rewrite a write-up's generated claims blocks from a committed claims.csv (the blocks between
`<!-- claims:start FORMAT SELECT... -->` and `<!-- claims:end -->`,
`mazerl.analysis.claims.fill_blocks`); tests/test_claims.py fails while they differ.

    python experiments/fill_claims.py docs/results/decisive.md experiments/runs/decisive/claims.csv
"""

import argparse
from pathlib import Path

from mazerl.analysis.claims import fill_blocks, read_claims_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("doc", type=Path, help="the markdown file with claims blocks")
    ap.add_argument("claims", type=Path, help="the claims.csv the blocks come from")
    args = ap.parse_args()
    for path in (args.doc, args.claims):
        if not path.is_file():
            raise SystemExit(f"error: {path}: no such file")
    text = args.doc.read_text()
    new = fill_blocks(text, read_claims_csv(args.claims))
    args.doc.write_text(new)
    print(f"{args.doc}: {'rewritten' if new != text else 'already up to date'}")


if __name__ == "__main__":
    main()
