"""Parts added as copies of shipped ones (MaxRL's estimator, Prim's generator, the GRU policy,
each under a new name, no YAML) are options with their own schema, listed, one line when
mistyped, and train; a copy left under the shipped name is one line naming both modules.

The extending guide's four additions (an estimator with a parameter, a maze generator, an
evaluation metric, a policy), each one file taken from `docs/guide/extending.md`, written into a
copy of the package: nothing else is edited, the in-tree estimator and policy are options
without a YAML (`algo=NAME`, `policy=NAME`), the contract tests find and pass them, and a
two-iteration training uses them, the new metric in `metrics.json`, TensorBoard and the
summary's `summary.csv`."""

import csv
import dataclasses
import inspect
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, metrics, options, run_app, scalars
from test_plugins import train_with

from mazerl.core import checkpoint
from mazerl.core.errors import ConfigError
from mazerl.envs import generators
from mazerl.envs.generators import GENERATORS
from mazerl.policy.config import GruConfig

GUIDE = ROOT / "docs" / "guide" / "extending.md"
# a code block of the guide whose first line names its file in the package
BLOCK = re.compile(r"```(?:python|yaml)\n# (mazerl/[\w/]+\.(?:py|yaml))\n(.*?)```", re.DOTALL)


def guide_files() -> dict[str, str]:
    """Path in the repository -> content, for each file the guide shows (the whole block)."""
    return {path: f"# {path}\n{body}" for path, body in BLOCK.findall(GUIDE.read_text())}


def test_the_guide_shows_each_addition_as_one_file_and_at_most_one_yaml():
    files = guide_files()
    modules = sorted(p for p in files if p.endswith(".py"))
    assert [p.split("/")[1] for p in modules] == ["algos", "envs", "eval", "policy"]
    assert [p for p in files if p.endswith(".yaml")] == ["mazerl/conf/algo/std_floor.yaml"]
    # new files, not edits (in a tree that holds them already: the same files)
    assert all(not (ROOT / p).exists() or (ROOT / p).read_text() == t for p, t in files.items())


def test_the_guides_additions_pass_the_contract_tests_and_train(tmp_path):
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "mazerl", copy / "mazerl", ignore=ignore)
    (copy / "tests").mkdir()
    for name in ("conftest.py", "test_contracts.py"):
        shutil.copy(ROOT / "tests" / name, copy / "tests" / name)
    files = guide_files()
    env = {**os.environ, "PYTHONPATH": str(copy)}
    for path in files:  # the package as it is without them (a tree may hold them already)
        (copy / path).unlink(missing_ok=True)
    for path, text in files.items():
        if path.endswith(".py"):
            (copy / path).write_text(text)
    # an in-tree estimator and policy are options without a YAML: GRPO's settings with the
    # estimator at its defaults, the policy's config class's defaults
    out = run_app(
        "mazerl.apps.train", "--cfg", "job", "algo=std_floor", "policy=mlp", cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    job = yaml.safe_load(out.stdout)
    assert (job["algo"]["name"], job["algo"]["advantage"]) == ("std_floor", "std_floor")
    assert job["algo"]["advantage_kwargs"] == {}
    assert job["policy"] == {"name": "mlp", "sees_position": False, "hidden": 64, "depth": 2}
    for path, text in files.items():
        if path.endswith(".yaml"):
            (copy / path).write_text(text)
    found = subprocess.run(
        [sys.executable, "-c", "import mazerl; print(mazerl.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the repository: `python -c` puts its folder first on the path
        env=env,
        check=True,
    )
    assert found.stdout.strip() == str(copy / "mazerl" / "__init__.py")

    # the contract tests take the names from the registries: each new part is tested
    selected = "mlp or binary_tree or std_floor or majority"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "-k", selected],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    found = re.findall(r"^PASSED tests/test_contracts.py::(\w+)\[(.*)\]$", out.stdout, re.M)
    passed = sorted(found)
    assert passed == [
        ("test_estimator_shape_finite_equivariant_and_all_equal_groups", "std_floor"),
        ("test_generator_carves_a_spanning_tree_from_its_seed", "binary_tree"),
        ("test_metric_is_a_real_number_of_the_set_in_sampled_metrics", "majority"),
        ("test_policy_cached_decoding_equals_teacher_forcing", "mlp-position"),
        ("test_policy_cached_decoding_equals_teacher_forcing", "mlp-prompt"),
        ("test_policy_scores_each_distinct_response_once_with_every_rows_gradient", "mlp"),
        ("test_policy_scores_what_it_sampled_and_differentiates", "mlp-position"),
        ("test_policy_scores_what_it_sampled_and_differentiates", "mlp-prompt"),
    ]

    # two iterations with all four, the estimator's parameter from its YAML
    _, run = train_with(
        tmp_path,
        env,
        "algo=std_floor",
        "maze.generator=binary_tree",
        "policy=mlp",
        "policy.depth=3",
    )
    config = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
    assert config["algo"]["advantage"] == "std_floor"
    assert config["algo"]["advantage_kwargs"] == {"floor": 0.25}
    assert config["algo"]["label"] == "std-floor GRPO[ + focal γ {gamma}]"
    assert config["policy"] == {"name": "mlp", "sees_position": False, "hidden": 64, "depth": 3}
    m = metrics(run)
    assert m["iterations"] == 2
    assert (m["hparams"]["policy"], m["hparams"]["generator"]) == ("mlp", "binary_tree")
    # the new metric of the one evaluation set (4 mazes: a share in quarters)
    value = m["final"]["eval/id/majority"]
    assert value in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert scalars(run)["eval/id/majority"][-1][1] == pytest.approx(value)
    # the metric is 1 exactly where every maze is solved by at least half its samples:
    # never above coverage (solved at least once), never below "every sample succeeds"
    assert m["final"]["eval/id/coverage"] >= value
    # and in the summary: its column in summary.csv, with no edit of the analysis
    out = run_app("mazerl.apps.summarize", str(run), cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    with open(run / "summary.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert float(row["eval/id/majority"]) == pytest.approx(value)


def copies() -> dict[str, str]:
    """Three parts added as copies of shipped ones under new names (`<name>_copy`), each one
    new file, nothing else edited: MaxRL's estimator module, Prim's generator (its function
    in a module of its own) and the GRU policy's module, which keeps using `GruConfig`.

    Returns:
        Path in the repository -> content.
    """
    package = ROOT / "mazerl"
    maxrl = (package / "algos" / "maxrl.py").read_text()
    gru = (package / "policy" / "gru.py").read_text()
    prim = inspect.getsource(generators.prim)
    return {
        "mazerl/algos/maxrl_copy.py": maxrl.replace(
            '@estimator("maxrl")', '@estimator("maxrl_copy")'
        ),
        "mazerl/policy/gru_copy.py": gru.replace(
            '@POLICIES.register("gru")', '@POLICIES.register("gru_copy")'
        ),
        "mazerl/envs/prim_copy.py": "import numpy as np\n\n"
        "from mazerl.envs.generators import GENERATORS, Passage, _cell_neighbours\n\n\n"
        + prim.replace('@GENERATORS.register("prim")', '@GENERATORS.register("prim_copy")'),
    }


def test_parts_added_as_copies_are_options_with_their_schema_and_train(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "mazerl", copy / "mazerl", ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in copies().items():
        (copy / path).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    parts = ("algo=maxrl_copy", "policy=gru_copy", "maze.generator=prim_copy")
    # the copied policy has no YAML: the option is its class's config_class, under its name
    out = run_app("mazerl.apps.train", "--cfg", "job", *parts, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    job = yaml.safe_load(out.stdout)
    assert job["policy"] == {**dataclasses.asdict(GruConfig()), "name": "gru_copy"}
    assert (job["algo"]["advantage"], job["maze"]["generator"]) == ("maxrl_copy", "prim_copy")
    # each is listed wherever its kind's options are, and a mistake about one is one line
    algos = ", ".join(sorted([*options("algo"), "maxrl_copy"]))
    policies = ", ".join(sorted([*options("policy"), "gru_copy"]))
    page = run_app("mazerl.apps.train", "--help", cwd=tmp_path, env=env).stdout.splitlines()
    assert f"algo: {algos}" in page and f"policy: {policies}" in page
    generators_ = ", ".join(sorted([*GENERATORS.known(), "prim_copy"]))
    for override, line in [
        ("algo=maxrl_cpy", f"unknown option algo=maxrl_cpy; did you mean algo=maxrl_copy? "
                           f"(options: {algos})"),
        ("policy=gru_cpy", f"unknown option policy=gru_cpy; did you mean policy=gru_copy? "
                           f"(options: {policies})"),
        ("maze.generator=prim_cpy", f"maze.generator must be a registered generator "
                                    f"({generators_}), got 'prim_cpy'"),
    ]:  # fmt: skip
        out = run_app("mazerl.apps.train", override, cwd=tmp_path, env=env)
        assert (out.returncode, out.stderr) == (2, f"error: {line}\n")
    # two iterations with all three; the copied policy's weights are the GRU's
    out, run = train_with(tmp_path, env, *parts)
    assert "prim_copy mazes of 4x4 cells" in out.stdout
    m = metrics(run)
    assert m["iterations"] == 2 and 0.0 <= m["final"]["eval/id/pass@1"] <= 1.0
    assert (m["hparams"]["policy"], m["hparams"]["generator"]) == ("gru_copy", "prim_copy")
    state = checkpoint.load(run / "checkpoints" / "ckpt_0000002.pt")
    assert state["policy_config"]["name"] == "gru_copy"
    assert "encoder_layers" in state["policy_config"]


def test_a_copy_left_under_the_shipped_name_is_one_line_naming_both_modules(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "mazerl", copy / "mazerl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(copy / "mazerl" / "algos" / "maxrl.py", copy / "mazerl" / "algos" / "maxrl_twin.py")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = run_app("mazerl.apps.train", "algo=maxrl", cwd=tmp_path, env=env)
    assert (out.returncode, out.stderr) == (
        2,
        "error: advantage estimator 'maxrl' is registered twice: in mazerl.algos.maxrl and in "
        "mazerl.algos.maxrl_twin (give the copy a name of its own)\n",
    )


def test_a_part_module_that_fails_to_import_or_parse_is_one_line_naming_it(tmp_path, monkeypatch):
    package = tmp_path / "toy_parts"
    package.mkdir()
    (package / "__init__.py").write_text(
        'from mazerl.core.registry import Registry\n\nPARTS = Registry("toy part", "toy_parts", '
        '("PARTS.register",))\n'
    )
    (package / "broken.py").write_text(
        'from toy_parts import PARTS\n\n\n@PARTS.register("a")\ndef a():\n    pass\n\n\n1 / 0\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from toy_parts import PARTS

    assert PARTS.known() == ["a"]  # read from the source, nothing imported yet
    with pytest.raises(ConfigError) as e:
        PARTS.get("a")
    assert str(e.value) == (
        f"toy part module toy_parts.broken failed to import ({package / 'broken.py'}:9): "
        "ZeroDivisionError: division by zero"
    )
    (package / "unfinished.py").write_text('@PARTS.register("b")\ndef b(:\n')
    with pytest.raises(ConfigError) as e:
        PARTS.known()
    assert str(e.value).startswith(f"{package / 'unfinished.py'}:2:")
