"""`--help` at once: the help path of the Hydra apps loads no torch (the config classes it
reads import none); the registries those classes name load when a value is first checked,
and a policy's config class found by its name is the one its registered policy class uses."""

import subprocess
import sys
import textwrap

import pytest
from omegaconf import OmegaConf

from mazerl.apps.schema import policy_option
from mazerl.core.config import CONF_DIR
from mazerl.policy import POLICIES
from mazerl.policy.config import PolicyConfig, policy_config


def fresh(code: str) -> list[str]:
    """The lines `code` prints in a fresh interpreter (nothing imported yet)."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize(
    ("app", "args"),
    [
        ("train", ["--help"]),
        ("train", ["--help", "policy=transformer"]),
        ("eval", ["-h"]),
        ("categorical", ["--help"]),
    ],
)
def test_help_loads_no_torch(app, args):
    """The app's `main` answers `--help` in full, and torch is not among the modules loaded."""
    *page, loaded = fresh(f"""
        import sys
        from mazerl.apps import {app}
        sys.argv = ["mazerl-{app}", *{args!r}]
        {app}.main()
        print("torch" in sys.modules, "mazerl.policy.gru" in sys.modules)
    """)
    assert f"`mazerl-{app}`" in page[0]
    assert any(line.startswith("== Settings") for line in page)
    assert any(line.startswith("  threads=1 ") for line in page)
    if args[1:]:  # the transformer's own keys, described
        assert any(line.startswith("  policy.kv_heads=2 ") for line in page)
    assert loaded == "False False"


def test_a_registered_name_is_checked_against_every_part_from_a_fresh_process():
    """The rule of `algo.advantage` loads every part module when it first checks a value: the
    estimators that `conf/algo/*.yaml` name (maxrl's lives in its own module) pass, a made-up
    name fails, and the policy name rule finds both built-in policies."""
    named = sorted(
        {OmegaConf.load(p).get("advantage", "grpo") for p in (CONF_DIR / "algo").glob("*.yaml")}
    )
    assert "maxrl" in named and "grpo" in named
    before, *checks, words, policies = fresh(f"""
        import sys
        from mazerl.algos import AlgoConfig
        from mazerl.core.settings import rule_of
        from mazerl.policy.config import GruConfig
        print("torch" in sys.modules)
        rule = rule_of(AlgoConfig, "advantage")
        for name in {[*named, "nope"]!r}:
            print(name, rule.ok(name))
        print(rule.words())
        name = rule_of(GruConfig, "name")
        print(name.ok("gru"), name.ok("transformer"), name.ok("nope"))
    """)
    assert before == "False"
    assert checks == [f"{n} True" for n in named] + ["nope False"]
    assert words.startswith("a registered advantage estimator (")
    assert all(n in words for n in named)
    assert policies == "True True False"


def test_a_policy_config_found_by_name_is_its_registered_class():
    """Each policy's config is its class's `config_class` (a class that names the policy, or
    another's, as a copied policy's) and its option `policy=NAME` is named after it."""
    assert set(POLICIES.names()) == set(POLICIES.known())
    for name in POLICIES.names():
        assert policy_config(name) is POLICIES.get(name).config_class
        assert policy_option(name).name == name
    assert policy_config("nope") is PolicyConfig
