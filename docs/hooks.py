"""MkDocs hooks: the pages the code writes, so they cannot drift from it.

- `reference/config.md`: every setting of every app (key, default, rule, description), read
  from the config classes (`mazerl.core.settings.setting`) and the YAML defaults, as `--help`
  reads them;
- `reference/cli.md`: each command-line app's `--help`, run at build time;
- inline code in a table cell breaks only at its spaces (`--help` stays whole, never `-` /
  `-help`; `-1.5` and `train.group_size` likewise), so a long default still wraps;
- the figures of the studies (`experiments/runs/**/*.png`, `experiments/figures/*.png`) are
  served under `results/` without being copied into `docs/`.
"""

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]

# (title, app config name) of the Hydra apps, in the order of the page
HYDRA_APPS = [("mazerl-train", "config"), ("mazerl-eval", "evaluate"),
              ("mazerl-categorical", "categorical")]  # fmt: skip
# (command, module, subcommands): every app whose --help the CLI page shows
CLI_APPS = [
    ("mazerl-train", "mazerl.apps.train", []),
    ("mazerl-eval", "mazerl.apps.eval", []),
    ("mazerl-categorical", "mazerl.apps.categorical", []),
    ("mazerl-maze", "mazerl.apps.maze", ["show", "check", "export", "list"]),
    ("mazerl-summarize", "mazerl.apps.summarize", []),
    ("mazerl-bench", "mazerl.apps.bench", []),
    ("mazerl-llm", "mazerl.apps.llm", ["export", "sft", "train", "eval", "verl-args"]),
]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[tuple]) -> list[str]:
    """`setting_rows` as a Markdown table (the rules in words)."""
    out = ["| key | default | accepts | description |", "|---|---|---|---|"]
    out += [f"| `{k}` | `{_cell(d)}` | {_cell(r.words())} | {_cell(h)} |" for k, d, r, h in rows]
    return out


def config_page() -> str:
    """The configuration reference: per app its settings with the default options, then the
    keys of each `policy=` option."""
    from mazerl.apps.help import defaults, setting_rows
    from mazerl.apps.schema import APP_SCHEMAS
    from mazerl.core.config import CONF_DIR, groups
    from mazerl.core.plugins import load_plugins
    from mazerl.policy import POLICIES
    from mazerl.train.config import policy_schema

    load_plugins()
    lines = [
        "# Configuration",
        "",
        "Every setting of the three Hydra apps, with its default, the values it accepts and its",
        "description. This page is generated when the site is built, from the same config",
        "classes and YAML files that `--help` reads and that validate a run's config, so it",
        "cannot drift from the code. A setting is overridden on the command line as",
        "`key=value`; a bad value stops the run with one line naming the key.",
        "",
    ]
    for app, name in HYDRA_APPS:
        lines += [f"## {app}", "", "Config groups (pick one option each, `group=option`):", ""]
        lines += ["```text", groups(name, {"policy": POLICIES.names()}), "```", ""]
        lines += [*_table(setting_rows(defaults(name, []), APP_SCHEMAS[name])), ""]
    lines += ["## Policies", "", "The keys of each `policy=` option (`--help policy=NAME`):", ""]
    for option in sorted(
        {p.stem for p in (CONF_DIR / "policy").glob("*.yaml")} | {*POLICIES.known()}
    ):
        values = defaults("config", [f"policy={option}"])["policy"]
        rows = setting_rows(values, policy_schema(values), "policy.")
        lines += [f"### policy={option}", "", *_table(rows), ""]
    return "\n".join(lines)


def help_text(module: str, *args: str) -> str:
    """What `python -m module *args --help` prints."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args, "--help"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout.rstrip()


def cli_page() -> str:
    """The command-line reference: each app's `--help`, as it prints it."""
    lines = [
        "# Command-line apps",
        "",
        "What each app prints for `--help`, captured when the site is built. The Hydra apps",
        "(`mazerl-train`, `mazerl-eval`, `mazerl-categorical`) take `key=value` overrides; their",
        "settings are tabulated in [Configuration](config.md). Each app is also",
        "`python -m mazerl.apps.NAME`.",
        "",
    ]
    calls = []
    for command, module, subcommands in CLI_APPS:
        calls.append((f"## {command}", module, ()))
        calls += [(f"### {command} {sub}", module, (sub,)) for sub in subcommands]
    with ThreadPoolExecutor(4) as pool:  # each app starts its own Python: run them side by side
        texts = pool.map(lambda c: help_text(c[1], *c[2]), calls)
        for (heading, _, _), text in zip(calls, texts, strict=True):
            lines += [heading, "", "```text", text, "```", ""]
    return "\n".join(lines)


GENERATED = {"reference/config.md": config_page, "reference/cli.md": cli_page}
FIGURES = {"experiments/runs": "results/runs", "experiments/figures": "results/figures"}


# a table cell, and a code span in it with nothing but text inside
_CELL = re.compile(r"<(t[dh])\b[^>]*>.*?</\1>", re.S)
_CODE = re.compile(r"<code>([^<]*)</code>")


def _unbreakable(match: re.Match) -> str:
    """A code span whose words each stay on one line (a browser breaks after a hyphen)."""
    words = (f'<span class="mz-word">{w}</span>' if w else w for w in match.group(1).split(" "))
    return f"<code>{' '.join(words)}</code>"


def keep_table_code_whole(page_html: str) -> str:
    """`page_html` with every code span of a table cell split into words that do not break
    (`.mz-word` in stylesheets/extra.css): a line breaks between the words only."""
    return _CELL.sub(lambda cell: _CODE.sub(_unbreakable, cell.group(0)), page_html)


def on_page_content(page_html: str, page, config, files) -> str:
    return keep_table_code_whole(page_html)


def on_files(files: Files, config) -> Files:
    for uri, make in GENERATED.items():
        files.append(File.generated(config, uri, content=make()))
    for source, target in FIGURES.items():
        for path in sorted((ROOT / source).rglob("*.png")):
            uri = f"{target}/{path.relative_to(ROOT / source).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
