"""mazerl's estimators in verl's own advantage registry (skipped where verl is not installed:
it is not part of the extra, see the README)."""

import numpy as np
import pytest
import torch

core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")

import mazerl.llm.verl_estimators  # noqa: E402, F401  (registers on import)


def test_registered_under_verls_lookup_and_computed_by_hand(monkeypatch):
    monkeypatch.setenv("MAZERL_FOCAL_GAMMA", "1.0")
    fn = core_algos.get_adv_estimator_fn("mazerl_grpo")
    # two groups of 4, interleaved; the outcome reward sits on the last response token
    index = np.array(["a", "b", "a", "b", "a", "b", "a", "b"], dtype=object)
    scores = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    mask = torch.tensor([[1, 1, 1]] * 4 + [[1, 1, 0]] * 4, dtype=torch.float32)
    rewards = torch.zeros(8, 3)
    rewards[torch.arange(8), mask.sum(1).long() - 1] = scores
    adv, returns = fn(token_level_rewards=rewards, response_mask=mask, index=index, config=None)
    # group a: rewards 1,0,0,0 -> mu 0.25, std 0.5: A = (1.5, -0.5, -0.5, -0.5), g = 0.75
    # group b: rewards 1,1,1,0 -> mu 0.75, std 0.5: A = (0.5, 0.5, 0.5, -1.5), g = 0.25
    a = np.array([1.5, -0.5, -0.5, -0.5]) * 0.75
    b = np.array([0.5, 0.5, 0.5, -1.5]) * 0.25
    expected = np.array([a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3]])
    np.testing.assert_allclose(adv[:, 0].numpy(), expected, atol=1e-5)
    assert torch.equal(adv * mask, adv) and torch.equal(adv, returns)
    assert {"mazerl_grpo", "mazerl_drgrpo", "mazerl_rloo"} <= set(core_algos.ADV_ESTIMATOR_REGISTRY)


def test_bad_gamma_and_uneven_groups_are_named(monkeypatch):
    fn = core_algos.get_adv_estimator_fn("mazerl_rloo")
    rewards, mask = torch.zeros(3, 2), torch.ones(3, 2)
    with pytest.raises(ValueError, match="groups of one size; got sizes \\[1, 2\\]"):
        fn(token_level_rewards=rewards, response_mask=mask, index=np.array([0, 0, 1]))
    monkeypatch.setenv("MAZERL_FOCAL_GAMMA", "-1")
    with pytest.raises(ValueError, match="MAZERL_FOCAL_GAMMA must be a finite number >= 0"):
        fn(token_level_rewards=rewards[:2], response_mask=mask[:2], index=np.array([0, 0]))
