"""Rewrite the write-ups' generated claims blocks from their committed claims.csv (the blocks
between `<!-- claims:start FORMAT SELECT... -->` and `<!-- claims:end -->`,
`mazerl.analysis.claims.fill_blocks`), and README's findings rows (between
`<!-- findings:start -->` and `<!-- findings:end -->`, where README has them) from the decisive
study's claims.csv, and the worked examples of docs/concepts/verdicts.md (`EXAMPLES`: blocks
that name claims of several studies as `study/claim-id`), and each write-up's run counts
(between `<!-- runs:start SWEEP_DIR -->` and `<!-- runs:end -->`: how many of the runs its launch
asked for have finished, `mazerl.analysis.runs.progress_lines`) and its copies of a summary's
section (between `<!-- summary:start SUMMARY_MD HEADING -->` and `<!-- summary:end -->`: the
`## HEADING...` section of that summary.md, empty while it has none); tests/test_claims.py
fails while they differ.

    python experiments/fill_claims.py              # every write-up of WRITE_UPS, EXAMPLES, README
    python experiments/fill_claims.py docs/results/decisive.md experiments/runs/decisive/claims.csv
"""

import argparse
import re
from pathlib import Path

from mazerl.analysis.claims import (
    fill_blocks,
    interval,
    read_claims_csv,
    settings_lines,
    signed,
)
from mazerl.analysis.runs import progress_lines

ROOT = Path(__file__).resolve().parents[1]
RUNS = Path("experiments") / "runs"
WRITE_UPS = {  # a write-up -> the claims.csv its blocks come from (paths from the repository)
    Path("docs/results/decisive.md"): RUNS / "decisive" / "claims.csv",
    Path("docs/results/maze-long.md"): RUNS / "maze_long" / "claims.csv",
    Path("docs/results/group-sweep.md"): RUNS / "maze_group_sweep" / "claims.csv",
    Path("docs/results/leaderboard.md"): RUNS / "methods" / "claims.csv",
    Path("docs/results/rare-routes.md"): RUNS / "rare_routes" / "claims.csv",
    Path("docs/results/leaderboard-rare.md"): RUNS / "leaderboard_rare" / "claims.csv",
}
EXAMPLES = {  # a page -> the claims.csv files its blocks name claims of, as `study/claim-id`
    Path("docs/concepts/verdicts.md"): (
        RUNS / "decisive" / "claims.csv",
        RUNS / "maze_group_sweep" / "claims.csv",
        RUNS / "methods" / "claims.csv",
    ),
}
README = Path("README.md")
FINDINGS_CSV = RUNS / "decisive" / "claims.csv"
FINDINGS_LINK = "docs/results/decisive.md#the-papers-claims"
# README's findings: (the paper's claim, whose table it is where no reference is in claims.csv,
# the N = 32 cell's claims, the N = 8 cell's claims); a cell's claim is (id, what it is, or "")
FINDINGS = (
    ("F-GRPO γ 0.5 beats GRPO", "", [("n32-gamma05-grpo", "")],
     [("n8-gamma05-grpo-nozero", "AdamW's zero-gradient steps skipped"),
      ("n8-gamma05-grpo", "with them")]),
    ("F-GRPO γ 1.0 beats GRPO", "", [("n32-gamma1-grpo", "")], [("n8-gamma1-grpo", "")]),
    ("MaxRL ≥ PKPO", "MaxRL's table", [("n32-maxrl-pkpo", "")], [("n8-maxrl-pkpo", "")]),
    ("Pass@k Training > GRPO", "MaxRL's table", [("n32-passk-grpo", "")],
     [("n8-passk-grpo", "")]),
)  # fmt: skip
FINDINGS_BLOCK = re.compile(r"(<!-- findings:start -->\n)(.*?)(<!-- findings:end -->)", re.S)
SUMMARY_BLOCK = re.compile(
    r"(<!-- summary:start (?P<path>\S+) (?P<heading>[^>]*?) -->\n)(.*?)(<!-- summary:end -->)", re.S
)
RUNS_BLOCK = re.compile(r"(<!-- runs:start (?P<sweep>\S+) -->\n)(.*?)(<!-- runs:end -->)", re.S)


def qualified_rows(paths: tuple[Path, ...]) -> list[dict[str, str]]:
    """The rows of several claims.csv files, each claim id prefixed by its study (the folder
    the file lies in): `decisive/n8-maxrl-pkpo`."""
    return [
        {**row, "claim": f"{Path(path).parent.name}/{row['claim']}"}
        for path in paths
        for row in read_claims_csv(ROOT / path)
    ]


def finding_cell(row: dict[str, str], what: str) -> str:
    """One claim in a findings cell: its two verdicts, then its numbers (from claims.csv)."""
    verdicts = f"direction **{row['direction']}**"
    if row["magnitude"]:
        verdicts += f", magnitude **{row['magnitude']}**"
    numbers = f"{signed(row['estimate'])} {interval(row['lo'], row['hi'])}"
    if row["reference_kind"] == "single run":
        numbers += f", one run {interval(row['pi_lo'], row['pi_hi'])}"
    return f"{what + ': ' if what else ''}{verdicts}: {row['a']} - {row['b']} {numbers}"


def findings_rows(rows: list[dict[str, str]]) -> list[str]:
    """README's findings table (header and one row per `FINDINGS` entry) from the decisive
    study's claims.csv `rows`: each cell the claims' computed verdicts and numbers."""
    by_id = {r["claim"]: r for r in rows}
    lines = ["| the paper's claim | at N = 32 | at N = 8 |", "|---|---|---|"]
    for label, source, n32, n8 in FINDINGS:
        refs = [by_id[c]["reference"] for c, _ in (n32[0], n8[-1]) if by_id[c]["reference"]]
        note = f"paper: {', '.join(signed(r) for r in refs)}" if refs else source
        cells = ["; ".join(finding_cell(by_id[c], what) for c, what in cell) for cell in (n32, n8)]
        lines.append(f"| [{label}]({FINDINGS_LINK}) ({note}) | {cells[0]}. | {cells[1]}. |")
    shown = [by_id[c] for _, _, n32, n8 in FINDINGS for c, _ in (*n32, *n8)]
    return lines + settings_lines(shown)


def fill_findings(text: str, rows: list[dict[str, str]]) -> str:
    """`text` with the rows between `<!-- findings:start -->` and `<!-- findings:end -->`
    rewritten by `findings_rows`; unchanged where it has no such markers."""
    body = "\n".join(findings_rows(rows)) + "\n"
    return FINDINGS_BLOCK.sub(lambda m: m.group(1) + body + m.group(3), text)


def fill_runs(text: str) -> str:
    """`text` with every block `<!-- runs:start SWEEP_DIR -->` ... `<!-- runs:end -->`
    rewritten by `progress_lines` of SWEEP_DIR (from the repository root)."""

    def render(m: re.Match) -> str:
        return m.group(1) + "\n".join(progress_lines(ROOT / m["sweep"])) + "\n" + m.group(4)

    return RUNS_BLOCK.sub(render, text)


def summary_section(path: Path, heading: str) -> list[str]:
    """The lines of the section of the summary.md at `path` whose `## ` line starts with
    `## HEADING`, up to the next `## ` line, the heading left out; none where the file or the
    section is not there."""
    if not path.is_file():
        return []
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"## {heading}")), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1 : end]


def fill_summary(text: str) -> str:
    """`text` with every block `<!-- summary:start SUMMARY_MD HEADING -->` ...
    `<!-- summary:end -->` rewritten by `summary_section` (SUMMARY_MD from the repository
    root)."""

    def render(m: re.Match) -> str:
        body = "\n".join(summary_section(ROOT / m["path"], m["heading"])).strip("\n")
        return m.group(1) + (body + "\n" if body else "") + m.group(5)

    return SUMMARY_BLOCK.sub(render, text)


def rewrite(doc: Path, new: str, old: str) -> None:
    if new != old:
        doc.write_text(new)
    print(f"{doc}: {'rewritten' if new != old else 'already up to date'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("doc", type=Path, nargs="?", help="a markdown file with claims blocks")
    ap.add_argument("claims", type=Path, nargs="?", help="the claims.csv the blocks come from")
    args = ap.parse_args()
    if (args.doc is None) != (args.claims is None):
        raise SystemExit("error: give both DOC and CLAIMS, or neither (every write-up)")
    every = {ROOT / doc: ROOT / claims for doc, claims in WRITE_UPS.items()}
    pairs = {args.doc: args.claims} if args.doc else every
    for doc, claims in pairs.items():
        if not doc.is_file() or (args.doc and not claims.is_file()):
            raise SystemExit(f"error: {doc if not doc.is_file() else claims}: no such file")
    for doc, claims in pairs.items():
        text = doc.read_text()
        if not claims.is_file():  # a study declared, no run finished: its blocks stay empty
            print(f"{doc}: {claims} not written yet (no finished run): claims blocks left")
            rewrite(doc, fill_summary(fill_runs(text)), text)
            continue
        new = fill_summary(fill_runs(fill_blocks(text, read_claims_csv(claims))))
        rewrite(doc, new, text)
    for doc, paths in EXAMPLES.items() if args.doc is None else ():
        text = (ROOT / doc).read_text()
        rewrite(ROOT / doc, fill_blocks(text, qualified_rows(paths)), text)
    if args.doc is None and (ROOT / README).is_file():
        text = (ROOT / README).read_text()
        rewrite(ROOT / README, fill_findings(text, read_claims_csv(ROOT / FINDINGS_CSV)), text)


if __name__ == "__main__":
    main()
