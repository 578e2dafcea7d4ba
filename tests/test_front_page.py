"""The front page and the project's papers: the README stays readable in three minutes (its
limits, its picture, its Python snippet), the citation is the same everywhere it is given,
and `make docs` installs the docs extra only."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import yaml
from matplotlib.image import imread

from mazerl.analysis.claims import read_claims_csv
from mazerl.analysis.runs import launched_runs
from mazerl.analysis.study import load_module

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES, MAX_PARAGRAPH = 150, 600


def prose(text: str) -> list[str]:
    """The paragraphs of a Markdown page: blank-line separated text outside code fences, each
    table row counted on its own (a table is one line per row, not one paragraph)."""
    out, current, fenced = [], [], False
    for line in [*text.splitlines(), ""]:
        if line.startswith("```"):
            fenced = not fenced
            current = []
            continue
        if fenced:
            continue
        if line.startswith("|"):
            out.append(line)
        elif line.strip():
            current.append(line)
            continue
        if current:
            out.append("\n".join(current))
        current = []
    return out


def fenced(page: Path, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", page.read_text(), re.S | re.M)


def test_prose_splits_paragraphs_and_table_rows_and_skips_code():
    text = "a\nb\n\n```bash\nlong code\n\nmore\n```\n| x | y |\n|---|---|\n\nc\n"
    assert prose(text) == ["a\nb", "| x | y |", "|---|---|", "c"]


def test_readme_limits_lines_paragraphs_and_a_picture_before_the_first_section():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_LINES
    # and once every run of the leaderboard_rare study is in, with its table in place
    fill = load_module(ROOT / "experiments" / "fill_claims.py")
    rare = ROOT / "experiments" / "runs" / "leaderboard_rare"
    launched = launched_runs(rare)  # the study's 78, from its multirun.yaml
    table = fill.rare_findings_rows(read_claims_csv(rare / "claims.csv"), launched, launched, "")
    with_table = {"leaderboard_rare": table, "decisive": fill.findings_of("decisive")}
    done = fill.fill_findings(text, with_table.__getitem__)
    assert "| [Unlikeliness reward](" in done
    assert len(done.splitlines()) <= MAX_LINES
    longest = max(prose(text), key=len)
    assert len(longest) <= MAX_PARAGRAPH, longest
    head = text.split("\n## ", 1)[0]
    (picture,) = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", head)
    assert (ROOT / picture).is_file()


def test_the_readme_picture_is_what_its_named_command_draws(tmp_path):
    """The caption names the command that drew the picture; it draws the same pixels."""
    text = README.read_text()
    (command,) = re.findall(r"`(mazerl-maze show [^`]*--png (\S+))`", text)
    args = shlex.split(command[0])[1:]
    args[args.index("--png") + 1] = str(tmp_path / "maze.png")
    done = subprocess.run(
        [sys.executable, "-m", "mazerl.apps.maze", *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert np.array_equal(imread(tmp_path / "maze.png"), imread(ROOT / command[1]))


def test_readme_gym_snippet_solves_its_maze_and_needs_import_mazerl(tmp_path):
    """The README's `gym.make` snippet, in a fresh interpreter: following the solution ends
    at the goal with reward 1 on the 17x17 grid; without `import mazerl` Gymnasium does not
    know the namespace."""
    (code,) = [b for b in fenced(README, "python") if "gym.make" in b]
    check = code + "print(obs['grid'].shape, reward, terminated, info['event'])\n"
    run = [sys.executable, "-c"]
    done = subprocess.run([*run, check], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(3, 17, 17) 1.0 True goal"
    bare = "\n".join(x for x in code.splitlines() if not x.startswith("import mazerl"))
    assert "import mazerl" not in bare
    done = subprocess.run([*run, bare], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode != 0 and "NamespaceNotFound" in done.stderr


def test_findings_tables_link_every_row_to_a_written_up_section():
    """README's findings blocks (one per study): each table row links a page of the results,
    and every link there names a page that exists and, with an anchor, one of its headings."""
    text = README.read_text()
    blocks = re.findall(r"<!-- findings:start (\w+) -->\n(.*?)<!-- findings:end -->", text, re.S)
    assert [study for study, _ in blocks] == ["decisive", "leaderboard_rare"]
    assert text.count("<!-- findings:end -->") == len(blocks)
    links = []
    for _, block in blocks:
        for line in block.strip().splitlines():
            found = re.findall(r"\]\((docs/results/[^)#]+)(#[^)]+)?\)", line)
            if line.startswith("| ["):
                assert found, line
            links += [(link, line) for link in found]
    assert links
    for link, row in links:
        page = ROOT / link[0]
        assert page.is_file(), row
        if link[1]:  # the anchor is a heading of that page (MkDocs' and GitHub's slug)
            slugs = {
                re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                for h in re.findall(r"^#+ (.+)$", page.read_text(), re.M)
            }
            assert link[1][1:] in slugs, row


def _bibtex(page: Path) -> str:
    (block,) = fenced(page, "bibtex")
    return block


def test_one_citation_everywhere_it_is_given():
    """README and the docs home give the same BibTeX; its software entry and the papers are
    those of CITATION.cff; pyproject, CITATION.cff and mkdocs.yml name one repository."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    bib = _bibtex(README)
    assert _bibtex(ROOT / "docs" / "index.md") == bib
    software = bib.split("\n@", 1)[0]
    for field in ("title", "version", "url"):
        value = cff["repository-code" if field == "url" else field]
        assert f"{field:<7} = {{{value}}}," in software
    assert f"year    = {{{cff['date-released'].year}}}" in software
    for ref in cff["references"]:
        entry = next(e for e in bib.split("\n@") if f"{{{ref['title']}}}" in e)
        assert f"url     = {{{ref['url']}}}" in entry
        names = re.search(r"author  = \{(.*)\},", entry)[1].split(" and ")
        assert names == [f"{a['family-names']}, {a['given-names']}" for a in ref["authors"]]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    mkdocs = (ROOT / "mkdocs.yml").read_text()
    assert project["urls"]["Repository"] == cff["repository-code"]
    assert f"repo_url: {cff['repository-code']}\n" in mkdocs
    assert project["license"]["text"] == cff["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) 2026 ")


def test_make_docs_installs_the_docs_extra_only():
    done = subprocess.run(
        ["make", "-n", "-B", "docs"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    installs = [line for line in done.stdout.splitlines() if "pip install" in line]
    extras = {x for line in installs for x in re.findall(r"\.\[([\w,]+)\]", line)}
    assert extras == {"docs"}, installs
    assert "mkdocs build --strict" in done.stdout
