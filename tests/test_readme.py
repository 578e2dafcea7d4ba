"""The README's "Adding a method" example works as written."""

import math
import re
from pathlib import Path

import pytest
import torch
import yaml

from mazerl.algos import POLICY_LOSSES, AlgoConfig, policy_loss

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _block(lang: str, after: str) -> str:
    section = README[README.index(after) :]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def test_adding_a_method_example():
    code = _block("python", "### Adding a method")
    if "gspo" not in POLICY_LOSSES:
        exec(compile(code, "README:gspo.py", "exec"), {})
    cfg = yaml.safe_load(_block("yaml", "and `mazerl/conf/algo/gspo.yaml`"))
    cfg.pop("defaults")
    algo = AlgoConfig(**cfg)
    # two sequences; log-ratios (0.0002, 0.0004) and (0.001, padding)
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -9.0]], dtype=torch.float64)
    old = logp - torch.tensor([[0.0002, 0.0004], [0.001, 5.0]], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
    loss, metrics = policy_loss(algo, logp=logp, old_logp=old, advantages=adv, mask=mask)
    # s0 = e^0.0003 inside [1 - 3e-4, 1 + 4e-4]: -s0; s1 = e^0.001 with A < 0: min(-s1, -1.0004)
    expected = (-math.exp(0.0003) + math.exp(0.001)) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-12)
    assert metrics["clipfrac"].item() == 0.5
    # with a whole-batch mask of four rows (two of them skipped) the seq-mean divides by 4
    whole = torch.ones(4, 2, dtype=torch.float64)
    half, _ = policy_loss(algo, logp=logp, old_logp=old, advantages=adv, mask=mask, norm_mask=whole)
    assert half.item() == pytest.approx(expected / 2, abs=1e-12)


def test_mazes_example(capsys):
    namespace: dict = {}
    exec(compile(_block("python", "## Mazes"), "README:mazes", "exec"), namespace)
    assert namespace["reward"] == 1.0 and namespace["info"]["event"] == "goal"
    assert namespace["maze"].grid.shape == (17, 17)
    assert "S" in capsys.readouterr().out
