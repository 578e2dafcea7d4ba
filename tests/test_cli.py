"""The command line: every mistake Hydra or the schema catches is one `error:` line naming the
key and the nearest valid keys or options, exit 2, no run dir; `--help` describes every key the
app reads (and only those) with the description its config field carries."""

import dataclasses

import pytest
from conftest import FAST, metrics, options, run_app
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from mazerl.apps.help import help_page
from mazerl.apps.schema import APP_SCHEMAS, register_configs
from mazerl.core.config import CONF_DIR, load_option
from mazerl.core.errors import ConfigError
from mazerl.core.provenance import short_code

TRAIN, EVAL, CATEGORICAL = "mazerl.apps.train", "mazerl.apps.eval", "mazerl.apps.categorical"

EVAL_KEYS = "checkpoint, device, eval, seed, threads"
GROUP_SIZE = "did you mean train.group_size?"
# (app, command line, the whole of stderr): the mistakes, once silent or many lines
MISTAKES = [
    (TRAIN, ["+train.group_sise=4"], f"unknown key train.group_sise; {GROUP_SIZE}"),
    (TRAIN, ["++gamma=0"], "unknown key gamma; did you mean focal.gamma?"),
    (TRAIN, ["train.group_sise=4"], f"unknown key train.group_sise; {GROUP_SIZE}"),
    (
        TRAIN,
        ["+train.lr=1"],
        "train.lr is already a setting: override it as train.lr=VALUE, without +",
    ),
    (TRAIN, ["gamma=0"], "unknown key gamma; did you mean focal.gamma?"),
    (
        TRAIN,
        ["checkpoint=x.pt"],
        "unknown key checkpoint; did you mean train.checkpoint_every or train.keep_checkpoints?",
    ),
    (
        TRAIN,
        ["algo=gpro"],
        "unknown option algo=gpro; did you mean algo=grpo? "
        f"(options: {', '.join(options('algo'))})",
    ),
    (TRAIN, ["focal.gamma=half"], "focal.gamma must be a number >= 0 and finite, got half"),
    (TRAIN, ["train.iterations=10.5"], "train.iterations must be an integer >= 1, got 10.5"),
    (
        TRAIN,
        ["train.group_size=4,8"],
        "train.group_size=4,8 gives several values: add -m to sweep over them, or write a list "
        "as key=[a,b] or a string as key='a,b'",
    ),
    (
        TRAIN,
        ["eval.sets=[{nme: x}]"],
        "unknown key eval.sets[].nme; did you mean eval.sets[].name?",
    ),
    (TRAIN, ["base.path=/nonexistent"], "base.path must be an existing file, got '/nonexistent'"),
    (EVAL, ["maze.size=5"], "unknown key maze.size; the keys here: " + EVAL_KEYS),
    (EVAL, ["eval.n=many"], "eval.n must be an integer >= 1, got many"),
    (CATEGORICAL, ["+sim.lrr=1"], "unknown key sim.lrr; did you mean sim.lr?"),
    (CATEGORICAL, ["sim.steps=3.5"], "sim.steps must be an integer >= 1, got 3.5"),
]


@pytest.mark.parametrize(
    ("app", "args", "line"), MISTAKES, ids=[f"{a[11:]}:{' '.join(o)}" for a, o, _ in MISTAKES]
)
def test_a_mistake_is_one_line_and_exit_2_without_a_run_dir(tmp_path, app, args, line):
    extra = FAST if app == TRAIN else ["threads=1"]
    out = run_app(app, *extra, f"hydra.run.dir={tmp_path}/run", *args, cwd=tmp_path, timeout=90)
    assert (out.returncode, out.stderr) == (2, f"error: {line}\n")
    assert not (tmp_path / "run").exists()


def test_a_mistake_in_a_sweep_is_one_line_before_any_job(tmp_path):
    out = run_app(TRAIN, "-m", "algo=grpo,gpro", f"hydra.sweep.dir={tmp_path}/sweep", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: unknown option algo=gpro;")
    # Hydra writes the sweep's multirun.yaml before it composes the jobs; no job folder
    assert [p.name for p in (tmp_path / "sweep").iterdir()] == ["multirun.yaml"]


def _descriptions(schema: type, values: dict, prefix: str = "") -> dict[str, str]:
    """Dotted key -> the description on its config field, for the keys of the composed
    `values`: sections unfolded (the policy's with its own config class), a list of sections
    as itself and `key[].field`."""
    found = {}
    for f in dataclasses.fields(schema):
        key, rule, value = f"{prefix}{f.name}", f.metadata["rule"], values[f.name]
        if rule.section is None:
            found[key] = f.metadata["help"]
        elif isinstance(value, list):
            found[key] = f.metadata["help"]
            item = rule.section(value[0])
            found |= {f"{key}[].{g.name}": g.metadata["help"] for g in dataclasses.fields(item)}
        else:
            found |= _descriptions(rule.section(value), value, f"{key}.")
    return found


@pytest.mark.parametrize("group", ["algo", "policy"])
def test_an_option_read_from_its_files_is_what_hydra_composes(group):
    """`load_option` (what `--help`, the checks and the LLM bridge read) gives, for every
    option file of `group`, the values Hydra composes for `group=NAME`, its bases' included."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for path in sorted((CONF_DIR / group).glob("*.yaml")):
            cfg = compose("config", overrides=[f"{group}={path.stem}"])
            composed = OmegaConf.to_container(cfg[group])
            read = OmegaConf.to_container(load_option(group, path.stem))
            assert read == {k: composed[k] for k in read}, path.stem
            if group == "algo":  # GRPO's file, the base of all, writes every key
                assert set(read) == set(composed), path.stem
    psr = load_option("algo", "psr")  # psr <- w_reinforce <- grpo
    assert (psr.name, psr.advantage, psr.loss) == ("psr", "w_reinforce", "clip")
    assert psr.advantage_kwargs == {"positive_weight": 1.0, "negative_weight": 0.0}
    paper = load_option("policy", "transformer_paper")  # over transformer's file
    assert (paper.name, paper.hidden, paper.layers) == ("transformer", 256, 4)


@pytest.mark.parametrize(
    ("config", "overrides"),
    [("config", []), ("config", ["policy=transformer"]), ("evaluate", []), ("categorical", [])],
)
def test_help_lists_each_key_the_app_reads_with_its_description(config, overrides):
    """Every key of the composed config, and no other, with its default and description."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = OmegaConf.to_container(compose(config, overrides=overrides))
    lines = help_page("about", config, overrides).split("== Settings")[1].splitlines()[1:]
    listed = {}  # key -> its line and the next (a long default puts the description there)
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        if line.startswith("  ") and not line.startswith("   "):
            listed[line.split("=")[0].strip()] = line + after
    described = _descriptions(APP_SCHEMAS[config], cfg)
    wanted = {k for k in described if "[]" not in k}
    assert set(listed) == wanted
    for key, text in listed.items():
        assert text.startswith(f"  {key}=") and described[key] in text, text
    rows = {" ".join(line.split()[:1]): " ".join(line.split()[1:]) for line in lines}
    if config == "config":
        assert rows["train.group_size=8"] == "rollouts per maze, N (the paper: 4 ... 128)"
        assert rows["eval.sets[].size_delta"].startswith("cells added to the training maze")
    if overrides:
        assert rows["policy.kv_heads=2"].endswith("(grouped-query attention; divides heads)")
    if config == "evaluate":
        assert "checkpoint" in listed and not any(k.startswith(("train.", "maze.")) for k in listed)
    else:
        assert "checkpoint" not in listed


@pytest.mark.parametrize("app", ["train", "eval", "categorical"])
def test_help_page_lists_options_and_examples(app, tmp_path):
    out = run_app(f"mazerl.apps.{app}", "--help", cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"`mazerl-{app}`" in text and "powered by Hydra" not in text
    assert sum(line.strip().startswith(f"mazerl-{app}") for line in text.splitlines()) >= 3
    assert "schema" not in text
    groups = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line[:16])
    assert "joblib" in groups["hydra/launcher"]
    if app == "eval":
        assert "algo" not in groups and "experiment" not in groups
        return
    assert groups["algo"] == ", ".join(options("algo"))  # the files and the estimators
    assert {"grpo", "cispo", "maxrl"} <= set(options("algo"))
    presets = groups["experiment"].split(", ")
    assert ("paper_categorical" in presets) == (app == "categorical")
    assert ("smoke" in presets) == (app != "categorical")
    assert "focal.gamma=0.5" in text and "F-GRPO's focal exponent: g = (1 - mu_hat)^gamma" in text


NO_SIGNAL = [
    "base.steps=0",  # an untrained base model: it solves no 6x6 maze
    "maze.size=6",
    "train.iterations=3",
    "eval.n=8",
    "eval.exact_ks=[1,8]",
]
WHY = (
    "no group of the first 3 iterations had a non-zero advantage: the base model solves "
    "nothing (id pass@1 0.000), so RL cannot learn; raise base.steps or train.group_size, or "
    "lower maze.size"
)


def test_a_run_that_cannot_learn_warns_once_and_shows_no_focal_weight(train):
    out, run = train(*NO_SIGNAL)
    assert out.stderr.splitlines() == [f"warning: {WHY} (train.stop_on_zero_advantage=true stops)"]
    assert "prim mazes of 6x6 cells (corners start/goal)" in out.stdout.splitlines()[0]
    assert "zero-adv groups 1.00  focal g n/a" in out.stdout
    assert metrics(run)["cpu_capability"] in out.stdout.splitlines()[0]
    code = metrics(run)["code"]  # the commit it ran at, short, ends the line
    assert out.stdout.splitlines()[0].endswith(f"), code {short_code(code)}")


def test_a_run_that_cannot_learn_stops_with_exit_2_when_asked(train):
    out, _ = train(*NO_SIGNAL, "train.stop_on_zero_advantage=true", check=False)
    assert (out.returncode, out.stderr) == (
        2,
        f"error: {WHY}; stopping (train.stop_on_zero_advantage)\n",
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["show", "--sise", "5"],
            "mazerl-maze: unrecognized arguments: --sise 5; did you mean --size?",
        ),
        (
            ["shw"],
            "mazerl-maze: argument command: invalid choice: 'shw' (choose from 'show', "
            "'check', 'export', 'list')",
        ),
        (["show", "--size", "x"], "mazerl-maze show: argument --size: invalid int value: 'x'"),
    ],
)
def test_mazerl_maze_mistakes_are_one_line_and_exit_2(tmp_path, args, line):
    out = run_app("mazerl.apps.maze", *args, cwd=tmp_path, timeout=60)
    assert (out.returncode, out.stderr) == (2, f"error: {line}\n")


def test_help_with_an_unknown_option_names_the_options():
    with pytest.raises(ConfigError) as e:
        help_page("about", "config", ["policy=nope"])
    assert str(e.value) == f"unknown option policy=nope (options: {', '.join(options('policy'))})"
