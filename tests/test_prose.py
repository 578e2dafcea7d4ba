"""No verdict typed in prose: README.md and every page of docs/results/ give verdicts only
inside generated blocks (`<!-- claims:start ... -->` ... `<!-- claims:end -->`, README's
`<!-- findings:start -->` ... `<!-- findings:end -->`), written by experiments/fill_claims.py
from the committed claims.csv. Outside them prose describes numbers and never judges them
(docs/concepts/verdicts.md)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "results").glob("*.md"))]
JUDGING = (
    "confirmed", "refuted", "reproduced", "shown", "supported", "contradicted", "holds",
    "ahead", "leads", "lead", "loses", "beats", "keeps", "converged", "excludes",
)  # fmt: skip
GENERATED = re.compile(
    r"<!-- (claims|findings):start[^>]*-->.*?<!-- (claims|findings):end -->", re.S
)
WORD = re.compile(r"\b(" + "|".join(JUDGING) + r")\b", re.I)


def judging_words(text: str) -> list[tuple[int, str]]:
    """`(line number, line)` of every line outside the generated blocks of `text` that uses a
    judging word (`JUDGING`, any case)."""
    kept = GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return [(i, line) for i, line in enumerate(kept.splitlines(), 1) if WORD.search(line)]


def test_the_scan_finds_a_judging_word_outside_a_block_and_none_inside():
    text = (
        "A gain of +3.3 points.\n"
        "<!-- claims:start bullets x -->\n- direction **supported**\n<!-- claims:end -->\n"
        "Gamma 1.0 is Ahead at N = 32.\n"
        "<!-- findings:start -->\n| shown |\n<!-- findings:end -->\n"
        "The shortest route, a leader board.\n"
    )
    assert judging_words(text) == [(5, "Gamma 1.0 is Ahead at N = 32.")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_verdict_outside_generated_blocks(page: Path):
    found = judging_words(page.read_text())
    assert not found, f"{page.relative_to(ROOT)}: judging words outside generated blocks: " + (
        "; ".join(f"line {i}: {line.strip()[:90]}" for i, line in found[:8])
    )
