"""Rewrite the write-ups' generated claims blocks from their committed claims.csv (the blocks
between `<!-- claims:start FORMAT SELECT... -->` and `<!-- claims:end -->`,
`mazerl.analysis.claims.fill_blocks`), and README's findings (between
`<!-- findings:start STUDY -->` and `<!-- findings:end -->`, one block per study of
`FINDINGS_TABLES`) from that study's claims.csv, and the worked examples of
docs/concepts/verdicts.md (`EXAMPLES`: blocks that name claims of several studies as
`study/claim-id`), and each write-up's run counts (between `<!-- runs:start SWEEP_DIR -->` and
`<!-- runs:end -->`: how many of the runs its launch asked for have finished,
`mazerl.analysis.runs.progress_lines`) and its copies of a summary's section (between
`<!-- summary:start SUMMARY_MD HEADING -->` and `<!-- summary:end -->`: the `## HEADING...`
section of that summary.md, empty while it has none); tests/test_claims.py fails while they
differ.

    python experiments/fill_claims.py              # every write-up of WRITE_UPS, EXAMPLES, README
    python experiments/fill_claims.py docs/results/decisive.md experiments/runs/decisive/claims.csv
"""

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from mazerl.analysis.claims import (
    fill_blocks,
    interval,
    metric_label,
    read_claims_csv,
    settings_lines,
    signed,
)
from mazerl.analysis.runs import find_runs, launched_runs, progress_lines

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
# the leaderboard_rare study's findings: its methods (name in claims.yaml, claim-id part) and,
# in each cell, the claims shown (claim-id suffix: against GRPO at pass@1 and @256, MaxRL at @1)
RARE_LINK = "docs/results/leaderboard-rare.md#the-claims"
RARE_METHODS = (
    ("SELF", "self"),
    ("Differential Smoothing", "diffsmooth"),
    ("Unlikeliness reward", "unlikely"),
)
RARE_TESTS = ("grpo", "grpo-at256", "maxrl")
SENSE = {"greater": ">", "less": "<"}
FINDINGS_BLOCK = re.compile(
    r"(<!-- findings:start (?P<study>[\w-]+) -->\n)((?:(?!<!-- findings:).)*?)"
    r"(<!-- findings:end -->)",
    re.S,
)
DECLARED = re.compile(r"Declared \*\*(?P<when>[a-z ]+)\*\*")
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


def rare_cell(row: dict[str, str]) -> str:
    """One claim in a leaderboard_rare findings cell: what it expects (`pass@1 > GRPO`), its
    direction and its numbers (a minus b, points)."""
    claim = f"pass@{row['k']} {SENSE.get(row['expect'], row['expect'])} {row['b']}"
    if not row["estimate"]:
        return f"{claim}: **{row['direction']}**"
    numbers = f"{signed(row['estimate'])} {interval(row['lo'], row['hi'])}"
    return f"{claim}: **{row['direction']}**, {numbers}"


def rare_findings_rows(
    rows: list[dict[str, str]], finished: int, launched: int | None, declared: str
) -> list[str]:
    """README's findings of the leaderboard_rare study from its claims.csv `rows` (read only
    once every run is in): while fewer than the `launched` runs have `finished`, one line
    saying how many (the interim verdicts stay on the study's page); then a table, a row per
    method of `RARE_METHODS`, each cell its `RARE_TESTS` claims at that N. `declared`:
    claims.md's computed "before the runs" ("after the runs", "during the runs"; "" where
    claims.md says neither).

    Raises:
        SystemExit: a claim the table shows is not in `rows` (one line naming each).
    """
    when = f"claims declared {declared}" if declared else "claims.md does not date the claims"
    if launched is None or finished < launched:
        of = f"{finished} of {launched}" if launched else f"{finished}"
        return [
            f"[SELF, Differential Smoothing and the unlikeliness reward]({RARE_LINK}) against the "
            f"decisive study's GRPO and MaxRL ({when}): {of} runs finished; the verdicts are "
            "given here when all are in."
        ]
    by_id = {r["claim"]: r for r in rows}
    ids = [f"{n}-{key}-{t}" for _, key in RARE_METHODS for n in ("n32", "n8") for t in RARE_TESTS]
    missing = [c for c in ids if c not in by_id]
    if missing:
        raise SystemExit(f"error: {RUNS / 'leaderboard_rare' / 'claims.csv'} lacks the claims "
                         f"README's table shows: {', '.join(missing)}")  # fmt: skip
    shown = [by_id[c] for c in ids]
    measure = ", ".join(sorted({metric_label(r).rsplit(" ", 1)[0] for r in shown}))
    units = ", ".join(sorted({r["units"] for r in shown}))
    head = (f"leaderboard_rare ({units}; {when}): {measure}, a - b in points, [95% CI]; "
            "magnitudes on its page")  # fmt: skip
    lines = [f"| {head} | at N = 32 | at N = 8 |", "|---|---|---|"]
    for name, key in RARE_METHODS:
        cells = ["; ".join(rare_cell(by_id[f"{n}-{key}-{t}"]) for t in RARE_TESTS)
                 for n in ("n32", "n8")]  # fmt: skip
        lines.append(f"| [{name}]({RARE_LINK}) | {cells[0]}. | {cells[1]}. |")
    return lines


def declared_when(claims_md: Path) -> str:
    """What the claims.md at `claims_md` computed for its claims: "before the runs", "after
    the runs", "during the runs"; "" where it says none (or is not there)."""
    found = DECLARED.search(claims_md.read_text()) if claims_md.is_file() else None
    return found["when"] if found else ""


def decisive_findings(sweep: Path) -> list[str]:
    """README's findings of the decisive study (`findings_rows`) from its folder `sweep`."""
    return findings_rows(read_claims_csv(sweep / "claims.csv"))


def rare_findings(sweep: Path) -> list[str]:
    """README's findings of the leaderboard_rare study (`rare_findings_rows`) from its folder
    `sweep`: its finished runs, those its launch asked for, and, once all are in, its
    claims.csv (a missing one: one error line)."""
    finished, launched = sum(r.finished for r in find_runs(sweep)), launched_runs(sweep)
    rows = []
    if launched is not None and finished >= launched:
        if not (sweep / "claims.csv").is_file():
            raise SystemExit(f"error: {sweep / 'claims.csv'}: not written yet (mazerl-summarize)")
        rows = read_claims_csv(sweep / "claims.csv")
    return rare_findings_rows(rows, finished, launched, declared_when(sweep / "claims.md"))


# README's findings tables: a study (its folder under experiments/runs) -> its lines
FINDINGS_TABLES = {"decisive": decisive_findings, "leaderboard_rare": rare_findings}


def findings_of(study: str) -> list[str]:
    """README's findings lines of `study` (`FINDINGS_TABLES`), from its committed files."""
    if study not in FINDINGS_TABLES:
        raise SystemExit(f"error: README: no findings table for study {study!r} "
                         f"(known: {', '.join(FINDINGS_TABLES)})")  # fmt: skip
    return FINDINGS_TABLES[study](ROOT / RUNS / study)


def fill_findings(text: str, lines_of: Callable[[str], list[str]] = findings_of) -> str:
    """`text` with each block `<!-- findings:start STUDY -->` ... `<!-- findings:end -->`
    rewritten by `lines_of(STUDY)`; unchanged where it has no such markers."""

    def render(m: re.Match) -> str:
        return m.group(1) + "\n".join(lines_of(m["study"])) + "\n" + m.group(4)

    return FINDINGS_BLOCK.sub(render, text)


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
        rewrite(ROOT / README, fill_findings(text), text)


if __name__ == "__main__":
    main()
