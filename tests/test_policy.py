"""Policies: parameter counts, prompt tokens, sampling (the contract every registered policy
keeps, cached decoding equal to teacher forcing, is in `test_contracts.py`)."""

import numpy as np
import pytest
import torch

from mazerl.envs.spec import MazeSpec
from mazerl.policy import build_policy
from mazerl.policy.tokens import TOKEN, VOCAB_SIZE, encode
from mazerl.policy.transformer import TransformerConfig
from mazerl.rollout import (
    action_logp,
    log_softmax,
    sample_actions,
)


def test_paper_transformer_has_about_3_9m_parameters():
    cfg = TransformerConfig(hidden=256, layers=4, heads=4, kv_heads=2, ffn=1024, pos2d=False)
    n = build_policy(cfg).num_parameters()
    # per layer: q 256*256+256, k,v 2*(256*128+128), o 256*256, MLP 3*256*1024, 2 norms 2*256
    per_layer = 256 * 256 + 256 + 2 * (256 * 128 + 128) + 256 * 256 + 3 * 256 * 1024 + 512
    assert n == 4 * per_layer + VOCAB_SIZE * 256 + 256
    assert 3.9e6 < n < 4.0e6


def test_prompt_tokens_follow_the_paper_format():
    maze = MazeSpec(size=2).sample(np.random.default_rng(0))  # 5x5 grid
    tokens = encode([maze]).tokens()[0].tolist()
    assert tokens[:2] == [TOKEN["<bos>"], TOKEN["GRID_START"]]
    assert tokens[-2:] == [TOKEN["GRID_END"], TOKEN["PATH_START"]]
    assert len(tokens) == 5 * 5 + 4 + 4  # cells, NEWLINE between rows, 4 specials
    assert tokens.count(TOKEN["NEWLINE"]) == 4
    assert tokens.count(TOKEN["START"]) == 1 and tokens.count(TOKEN["GOAL"]) == 1
    assert tokens[2:7] == [TOKEN["WALL"]] * 5  # the first row is the border


def test_top_p_and_temperature():
    logits = torch.log(torch.tensor([[0.6, 0.3, 0.05, 0.03, 0.02]])).expand(4000, 5)
    gen = torch.Generator().manual_seed(0)
    actions = sample_actions(logits, 1.0, 0.85, gen)
    assert set(actions.tolist()) == {0, 1}  # nucleus {0.6, 0.3} covers 0.85
    frac = torch.bincount(actions, minlength=5).float() / 4000
    assert frac.tolist() == pytest.approx([0.6 / 0.9, 0.3 / 0.9, 0, 0, 0], abs=0.03)
    # the log-prob is the untruncated one, whatever top_p
    logp = action_logp(logits, actions, 1.0)
    assert logp[actions == 0][0].item() == pytest.approx(np.log(0.6), abs=1e-5)
    assert logp[actions == 1][0].item() == pytest.approx(np.log(0.3), abs=1e-5)
    assert action_logp(logits[:1], torch.tensor([2]), 2.0).item() == pytest.approx(
        np.log(0.05**0.5 / sum(p**0.5 for p in (0.6, 0.3, 0.05, 0.03, 0.02))), abs=1e-5
    )
    actions = sample_actions(logits, 1.0, 1.0, gen)
    frac = torch.bincount(actions, minlength=5).float() / 4000
    assert frac.tolist() == pytest.approx([0.6, 0.3, 0.05, 0.03, 0.02], abs=0.03)
    hot = sample_actions(logits, 2.0, 1.0, gen)  # temperature 2: p^(1/2), renormalised
    root = np.sqrt([0.6, 0.3, 0.05, 0.03, 0.02])
    frac = torch.bincount(hot, minlength=5).float() / 4000
    assert frac.tolist() == pytest.approx((root / root.sum()).tolist(), abs=0.03)
    cold = sample_actions(logits, 0.05, 1.0, gen)
    assert (cold == 0).all()


def test_written_out_log_softmax_matches_torch_values_and_gradients():
    scale = torch.tensor([1.0, 30.0, 1e4], dtype=torch.float64)[:, None, None]  # 1e4: no overflow
    z = (torch.randn(3, 64, 5, dtype=torch.float64) * scale).requires_grad_(True)
    ours, theirs = log_softmax(z), torch.log_softmax(z, -1)
    assert torch.isfinite(ours).all()
    assert torch.allclose(ours, theirs, atol=1e-12)
    w = torch.randn_like(z)
    (g_ours,) = torch.autograd.grad((ours * w).sum(), z)
    (g_theirs,) = torch.autograd.grad((theirs * w).sum(), z)
    assert torch.allclose(g_ours, g_theirs, atol=1e-12)
