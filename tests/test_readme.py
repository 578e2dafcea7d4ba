"""The documentation's examples work as written: adding a method, the mazes example, plug-ins
(in docs/guide/; every command block of the README and the tutorials runs in test_docs.py)."""

import re
from pathlib import Path

import pytest
import torch
import yaml

from mazerl.algos import AlgoConfig, FocalConfig, group_advantages

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide"


def _block(page: str, lang: str, after: str) -> str:
    """The first `lang` block after the text `after` on the page `docs/guide/<page>`."""
    text = (GUIDE / page).read_text()
    section = text[text.index(after) :]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def test_adding_a_method_example_is_the_shipped_method():
    code = _block("methods.md", "python", "## Adding a method")
    assert code == (ROOT / "mazerl" / "algos" / "w_reinforce.py").read_text()
    config = _block("methods.md", "yaml", "and `mazerl/conf/algo/w_reinforce.yaml`")
    assert config == (ROOT / "mazerl" / "conf" / "algo" / "w_reinforce.yaml").read_text()
    cfg = yaml.safe_load(config)
    cfg.pop("defaults")
    # the estimator's parameters come from the config: +0.1 correct, -1 wrong, all-wrong kept
    adv, _ = group_advantages(
        torch.tensor([[1.0, 0.0], [0.0, 0.0]]), AlgoConfig(**cfg), FocalConfig(gamma=0.0)
    )
    assert adv.tolist() == [[pytest.approx(0.1), -1.0], [-1.0, -1.0]]


def test_mazes_example(capsys):
    namespace: dict = {}
    exec(compile(_block("mazes.md", "python", "# Mazes"), "docs:mazes", "exec"), namespace)
    assert namespace["reward"] == 1.0 and namespace["info"]["event"] == "goal"
    assert namespace["maze"].grid.shape == (17, 17)
    assert "S" in capsys.readouterr().out


def test_plugin_example_declares_the_group_the_apps_load():
    from mazerl.core.plugins import GROUP

    snippet = _block("extending.md", "toml", "## Plug-ins: parts from outside the repository")
    assert (
        snippet.splitlines()[0]
        == f'[project.entry-points."{GROUP}"]'
        == ('[project.entry-points."mazerl.plugins"]')
    )
