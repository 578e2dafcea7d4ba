"""The documentation works as written: every command block of the README, the getting-started
page and the tutorials runs, in order, in a fresh folder, then the page's Python blocks in one
interpreter there (the README's are run on their own, below and in test_front_page.py), and
the configuration reference lists every setting with the default its YAML file gives.

Long runs are shortened by the overrides the page declares in a comment above the block:
`<!-- test-overrides: ARGS -->` appends ARGS to every command of the block that starts with
one of APPS_WITH_OVERRIDES; `<!-- test-overrides: {"PREFIX": "ARGS", ...} -->` (JSON) appends
ARGS to the commands that start with PREFIX (the apps take the last of a repeated flag or
override). `<!-- test-needs: MODULE -->` runs the block only where MODULE is installed (verl is
installed only without its pins); `<!-- test-skip: REASON -->` marks a
template that is not a whole command (the reason is required).

A few lines cannot run inside a test and are replaced, each by what it promises:
`make demo` / `make test` (the suite is itself `make test`) are left out; `tensorboard --logdir
DIR` (a server) becomes a check that DIR holds TensorBoard event files; `pip install -e PATH`
becomes an install into a folder on PYTHONPATH, so the test leaves the environment as it was;
`pip install ... 'mazerl[EXTRA]'` (or any other `pip install` line, its options dropped)
becomes a check that every package of the extra and every pinned package of the line is
installed at a version the pin allows.
"""

import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# the pages whose every command block runs (the other pages' blocks are records of studies
# that take hours, or reference)
RUN_PAGES = [
    ROOT / "README.md",
    DOCS / "getting-started.md",
    DOCS / "tutorials" / "first-sweep.md",
    DOCS / "tutorials" / "your-mazes.md",
    DOCS / "tutorials" / "new-method.md",
    DOCS / "tutorials" / "language-models.md",
]
FENCE = re.compile(
    r"(?:<!-- test-(?P<kind>overrides|needs|skip): (?P<arg>.*?) -->\n)?"
    r"```(?P<lang>\w*)\n(?P<body>.*?)```",
    re.S,
)
APPS_WITH_OVERRIDES = ("mazerl-train", "mazerl-eval", "mazerl-llm")


def blocks(page: Path, lang: str) -> list[tuple[str, str]]:
    """`(body, overrides)` of every fenced block of language `lang` in `page` that runs here, in
    order (a `test-needs` block runs only where its module is installed)."""
    out = []
    for m in FENCE.finditer(page.read_text()):
        if m["lang"] != lang or m["kind"] == "skip":
            continue
        if m["kind"] == "needs" and importlib.util.find_spec(m["arg"]) is None:
            continue
        out.append((m["body"], m["arg"] if m["kind"] == "overrides" else ""))
    return out


def commands(body: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines
    dropped; a here-document stays one command with its lines."""
    out, lines = [], body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\"):
            i += 1
            line = line[:-1].rstrip() + " " + lines[i].strip()
        heredoc = re.search(r"<<'(\w+)'", line)
        if heredoc:
            end = lines.index(heredoc.group(1), i + 1)
            line = "\n".join([line, *lines[i + 1 : end + 1]])
            i = end
        i += 1
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line)
    return out


# run as `python -c` with the requirements of a `pip install` line as arguments: exits non-zero
# naming the first one that is not installed at an allowed version (`mazerl[x]` stands for the
# requirements of extra x)
INSTALLED = """
import sys
from importlib.metadata import PackageNotFoundError, requires, version
from packaging.requirements import Requirement
wanted = []
for arg in sys.argv[1:]:
    r = Requirement(arg)
    if r.name == "mazerl":
        wanted += [q for q in map(Requirement, requires("mazerl"))
                   if any(q.marker and q.marker.evaluate({"extra": x}) for x in r.extras)]
    else:
        wanted.append(r)
for r in wanted:
    try:
        v = version(r.name)
    except PackageNotFoundError:
        sys.exit(f"{r.name} is not installed")
    if not r.specifier.contains(v, prereleases=True):
        sys.exit(f"{r.name} {v} is installed, the line asks for {r}")
"""


def with_overrides(command: str, overrides: str) -> str:
    """`command` with the test's overrides appended (see the module docstring)."""
    bare = command.partition("  #")[0].rstrip()
    if overrides.startswith("{"):
        extra = [a for prefix, a in json.loads(overrides).items() if bare.startswith(prefix)]
    else:
        extra = [overrides] if bare.split()[0] in APPS_WITH_OVERRIDES else []
    return " ".join([bare, *extra])


def as_tested(command: str, overrides: str) -> str | None:
    """The shell line the test runs for `command` (None: left out, see the module docstring)."""
    words = command.split()
    head = words[0]
    if head == "make" and words[1:2] in (["demo"], ["test"]):
        return None
    if head.endswith("tensorboard"):
        logdir = words[words.index("--logdir") + 1]
        return f'test -n "$(find {logdir} -name "events.out.tfevents.*" -print -quit)"'
    if words[:3] == ["pip", "install", "-e"]:
        return f'pip install --quiet --no-deps --no-build-isolation --target "$PLUGINS" {words[3]}'
    if words[:2] == ["pip", "install"]:
        wanted = [w for w in shlex.split(command)[2:] if not w.startswith("-")]  # no options
        return shlex.join(["python", "-c", INSTALLED, *wanted])
    return with_overrides(command, overrides) if overrides else command


def run_page(page: Path, cwd: Path) -> subprocess.CompletedProcess:
    lines = ["set -euo pipefail"]
    for body, overrides in blocks(page, "bash"):
        lines += [t for c in commands(body) if (t := as_tested(c, overrides)) is not None]
    code = [body for body, _ in blocks(page, "python")]
    if code and page.name != "README.md":
        lines.append(shlex.join(["python", "-c", "\n\n".join(code)]))
    plugins = cwd / "plugins"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PLUGINS": str(plugins),
        "PYTHONPATH": os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")]),
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("MAZERL_CACHE", None)  # each page trains (or loads) its base models in its folder
    return subprocess.run(["bash", "-c", "\n".join(lines)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


def test_commands_are_split_as_a_shell_reads_them():
    body = "a x \\\n    y  # c\n# note\n\ncat > f <<'EOF'\n# kept\nEOF\nb\n"
    assert commands(body) == ["a x y  # c", "cat > f <<'EOF'\n# kept\nEOF", "b"]
    assert as_tested("mazerl-train a=1  # why", "b=2") == "mazerl-train a=1 b=2"
    assert as_tested("make demo  # x", "") is None
    assert as_tested("tensorboard --logdir out/s", "").startswith("test -n")
    # per-command overrides by prefix; plain ones to every app command of the block
    over = '{"mazerl-llm sft": "--steps 2", "mazerl-llm eval": "--n 4"}'
    assert as_tested("mazerl-llm sft --steps 300", over) == "mazerl-llm sft --steps 300 --steps 2"
    assert as_tested("mazerl-llm export x", over) == "mazerl-llm export x"
    assert as_tested("mazerl-summarize out", "a=1") == "mazerl-summarize out"


def test_a_pip_install_line_becomes_a_check_of_what_it_installs():
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"

    def check(line):
        command = ["bash", "-c", as_tested(line, "")]
        return subprocess.run(command, capture_output=True, text=True, env={"PATH": path})

    assert check("pip install 'mazerl[dev]' pytest").returncode == 0  # the suite runs: both are
    ok = check(f"pip install 'pytest=={importlib.metadata.version('pytest')}'")
    assert ok.returncode == 0, ok.stderr
    options = check("pip install --quiet --no-deps 'pytest<1'")  # options are no packages
    assert options.returncode == 1 and "the line asks for pytest<1" in options.stderr
    wrong = check("pip install 'pytest<1'")
    assert wrong.returncode == 1 and "pytest" in wrong.stderr and "<1" in wrong.stderr
    absent = check("pip install no-such-package-mazerl")
    assert absent.returncode == 1 and "no-such-package-mazerl is not installed" in absent.stderr


def test_blocks_honour_needs_and_skip(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- test-needs: json -->\n```bash\na\n```\n"
        "<!-- test-needs: no_such_module_here -->\n```bash\nb\n```\n"
        "<!-- test-skip: a template -->\n```bash\nc ...\n```\n"
        "<!-- test-overrides: x=1 -->\n```bash\nd\n```\n"
    )
    assert blocks(page, "bash") == [("a\n", ""), ("d\n", "x=1")]


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: p.stem)
def test_every_command_block_runs(page, tmp_path):
    assert blocks(page, "bash"), f"{page.name} has no command block"
    if page.name == "new-method.md":  # run from the repository's root: it reads experiments/
        (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    out = run_page(page, tmp_path)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    if page.name == "first-sweep.md":
        jobs = sorted(p.name for p in (tmp_path / "outputs/smoke").glob("N*"))
        # job folders: N and gamma, then the test's shortening overrides
        assert sorted(re.match(r"N\d+_g[\d.]+", j)[0] for j in jobs) == [
            "N4_g0",
            "N4_g0.5",
            "N8_g0",
            "N8_g0.5",
        ]
        assert "| base model | 1 |" in (tmp_path / "outputs/smoke/summary.md").read_text()
    if page.name == "your-mazes.md":
        jobs = sorted(p.name for p in (tmp_path / "outputs/mine").iterdir() if p.is_dir())
        assert [j for j in jobs if j.startswith("seed")] == ["seed0", "seed1"]  # readable
        summary = (tmp_path / "outputs/mine/summary.md").read_text()
        assert "### mine" in summary and "### id" in summary
    if page.name == "new-method.md":
        runs = sorted(p.name for p in (tmp_path / "outputs/lb_short").glob("*_N32_*"))
        assert runs == ["grpo_N32_g0.0_s0", "sign_grpo_N32_g0.0_s0"]  # seed=0 here
        summary = (tmp_path / "outputs/lb_short/summary.md").read_text()
        assert "sign_grpo" in summary
        # the study.yaml's pairing read: the board places runs by bank model (none here: the
        # test trains its own base model)
        assert "## Leaderboard" in summary and summary.count("is not a bank model") == 2
    if page.name == "language-models.md":
        assert "[1, 4, 11, 8, 5, 6]" in out.stdout  # the saved tokenizer reads word by word
        assert "{'score': 1.0, 'reason': 'goal'}" in out.stdout  # MaxRL's layout, scored
        for model in ("base", "grpo"):
            m = json.loads((tmp_path / f"outputs/llm/cmp/{model}/metrics.json").read_text())
            assert 0 <= m["final"]["eval/id/exact_pass@1"] <= 1
        summary = (tmp_path / "outputs/llm/cmp/summary.md").read_text()
        for s in ("id", "ood_dfs"):  # grpo paired with base maze by maze on both sets
            table = summary.split(f"### model, {s}\n")[1].split("###")[0]
            assert "| model=grpo | model=base | 1 |" in table


def test_readme_method_example_computes_the_sign_of_the_centred_reward(tmp_path):
    """The README's estimator, registered in a fresh process: a group with one correct answer
    of four gets +1 / -1, an all-correct group 0 (by hand: mean 0.25 and 1)."""
    (code,) = [b for b, _ in blocks(ROOT / "README.md", "python") if "@estimator" in b]
    check = code + (
        "\nfrom mazerl.algos import ADVANTAGES\n"
        "r = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])\n"
        "print(ADVANTAGES.get('sign_grpo')(r).tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([[1.0, -1.0, -1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])


# ---- the generated configuration reference


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _keys(schema: type, prefix: str = "") -> list[str]:
    """Every setting of the config class `schema`, walked field by field (sections unfolded,
    every registered policy's fields, a list of sections as `key[].field`)."""
    from mazerl.policy import POLICIES

    keys = []
    for f in fields(schema):
        key, rule = f"{prefix}{f.name}", f.metadata["rule"]
        if rule.section is None:
            keys.append(key)
        elif f.name == "policy":
            for name in POLICIES.names():
                keys += _keys(POLICIES.get(name).config_class, f"{key}.")
        elif f.default_factory is not MISSING and not isinstance(f.default_factory(), list):
            keys += _keys(type(f.default_factory()), f"{key}.")
        else:  # a list of sections
            keys.append(key)
            keys += [f"{key}[].{g.name}" for g in fields(rule.section(None))]
    return keys


def test_config_reference_lists_every_setting_with_its_yaml_default():
    from mazerl.apps.schema import APP_SCHEMAS

    page = _hooks().config_page()
    listed = set(re.findall(r"^\| `([^`]+)` \|", page, re.M))
    for schema in APP_SCHEMAS.values():
        missing = [k for k in _keys(schema) if k not in listed]
        assert not missing, f"{schema.__name__}: not in the reference: {missing}"
    # defaults as the YAML files give them, read here without mazerl's help code
    train = OmegaConf.load(ROOT / "mazerl/conf/train/default.yaml")
    assert f"| `train.group_size` | `{train.group_size}` |" in page
    assert (
        f"| `base.held_out` | `{OmegaConf.load(ROOT / 'mazerl/conf/config.yaml').base.held_out}` |"
        in page
    )
    assert "| `base.bank` | `auto` | 'auto' or 'off' or 'require' |" in page


def test_table_code_breaks_only_between_its_words():
    """The settings table keeps `--help` and `-1.5` whole (a browser breaks after a hyphen), a
    long default still wraps at its spaces, and code outside tables is left as it is."""
    page = (
        "<p>run <code>--help</code></p><table><tr><th><code>key</code></th></tr>"
        "<tr><td><code>--help policy=NAME</code> or <code>-1.5</code></td></tr></table>"
    )
    out = _hooks().keep_table_code_whole(page)
    word = '<span class="mz-word">{}</span>'
    assert out.startswith("<p>run <code>--help</code></p>")
    assert f"<code>{word.format('--help')} {word.format('policy=NAME')}</code>" in out
    assert f"<code>{word.format('-1.5')}</code>" in out
    assert f"<th><code>{word.format('key')}</code></th>" in out
    css = (DOCS / "stylesheets/extra.css").read_text()
    assert re.search(r"\.mz-word\s*\{\s*white-space:\s*nowrap;", css)
