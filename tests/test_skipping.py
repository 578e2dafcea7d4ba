"""Exact work-skipping: the update without zero-advantage groups has the full computation's
gradient, and generation shared by prefix samples the per-row loop's actions."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import GradCapture, estimator_kwargs, example_inputs

from mazerl.algos import (
    ADVANTAGES,
    AGGREGATIONS,
    POLICY_LOSSES,
    AlgoConfig,
    FocalConfig,
    group_advantages,
    reads_every_row,
)
from mazerl.envs.spec import MazeSpec
from mazerl.policy import build_policy
from mazerl.policy.gru import GruConfig
from mazerl.rollout import generate
from mazerl.train.update import update

P, G = 16, 8


def _train_cfg(skip: bool, minibatches: int = 1, zero_gradient_step: bool = True):
    return SimpleNamespace(
        ppo_epochs=1, minibatches=minibatches, temperature=1.0, grad_clip=1e9,
        skip_zero_advantage=skip, zero_gradient_step=zero_gradient_step,
    )  # fmt: skip


@pytest.fixture(scope="module")
def batch():
    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=32, encoder_layers=2))
    spec = MazeSpec(size=4)
    mazes = [spec.sample(np.random.default_rng(i)) for i in range(P)]
    r = generate(policy, mazes, G, generator=torch.Generator().manual_seed(1))
    # the sampling policy differs from the current one, so ratios are away from 1 and clip
    r.logp = (
        r.logp + 0.3 * torch.randn(r.logp.shape, generator=torch.Generator().manual_seed(2))
    ) * r.mask
    return policy, r


def _rewards(zero_groups: int) -> torch.Tensor:
    """`[P, G]` rewards: the first `zero_groups` groups all equal (alternately all 0 and all
    1), the others mixed with 1 to G-1 successes."""
    gen = np.random.default_rng(3)
    rewards = np.zeros((P, G), dtype=np.float32)
    for p in range(P):
        if p < zero_groups:
            rewards[p] = p % 2
        else:
            rewards[p, gen.permutation(G)[: 1 + p % (G - 1)]] = 1.0
    return torch.as_tensor(rewards)


def _grads(policy, rollouts, advantages, algo, skip, minibatches=1):
    opt = GradCapture(policy.parameters())
    metrics, skipped = update(
        policy, None, opt, rollouts, advantages, algo, _train_cfg(skip, minibatches), seed=0, it=0
    )
    assert skipped == 0
    return opt.grads, metrics


@pytest.mark.parametrize("zero_groups", [0, 8, 15])  # 0%, 50%, 94% zero-advantage groups
def test_skipping_update_has_the_full_gradient(batch, zero_groups):
    policy, r = batch
    rewards = _rewards(zero_groups)
    r.reward = rewards.flatten()
    checked = 0
    # a loss that reads every row (a batch statistic) is never skipped (tests/test_methods.py)
    losses = [name for name in POLICY_LOSSES.names() if not reads_every_row(AlgoConfig(loss=name))]
    for loss in losses:
        for agg in AGGREGATIONS.names():
            algo = AlgoConfig(loss=loss, loss_agg_mode=agg, clip_low=0.2, clip_high=0.28)
            adv, _ = group_advantages(rewards, algo, FocalConfig(gamma=0.5))
            adv = adv.flatten()
            for minibatches in (1, 2):
                full, m_full = _grads(policy, r, adv, algo, False, minibatches)
                fast, m_fast = _grads(policy, r, adv, algo, True, minibatches)
                assert len(full) == len(fast) == minibatches
                for a, b in zip(full, fast, strict=True):
                    if a.norm() == 0:  # a minibatch of zero groups only: nothing computed
                        assert b.norm() == 0
                        continue
                    rel = (a - b).norm() / a.norm()
                    assert rel < 1e-5, (loss, agg, minibatches, rel.item())
                    checked += 1
                assert m_fast["loss"] == pytest.approx(m_full["loss"], rel=1e-5, abs=1e-7)
                assert m_fast["update_rows_frac"] == pytest.approx((P - zero_groups) / P)
                assert m_full["update_rows_frac"] == 1.0
    # 3 minibatches with a mixed group (2 at 94% zero groups) per loss and aggregation
    expected = 2 if zero_groups == 15 else 3
    assert checked == expected * len(losses) * len(AGGREGATIONS.names())


@pytest.mark.parametrize("name", ADVANTAGES.names())
def test_skipping_keeps_the_gradient_of_every_estimator(batch, name):
    """Whatever an estimator gives all-equal groups (0 for the GRPO family; a signal for
    W-REINFORCE, Differential Smoothing, the unlikeliness reward's all-correct groups; 0 for
    SELF's groups with a correct greedy answer too), the update skips exactly the groups whose
    advantages are all 0, and its gradient is the full computation's."""
    policy, r = batch
    rewards = _rewards(8)  # 4 all-wrong, 4 all-correct, 8 mixed groups
    r.reward = rewards.flatten()
    inputs = example_inputs(name, rewards)
    if "logp_mean" in inputs:
        inputs["logp_mean"] = r.logp_mean  # the batch's own
    algo = AlgoConfig(advantage=name, advantage_kwargs=estimator_kwargs(name))
    adv, _ = group_advantages(rewards, algo, FocalConfig(gamma=0.0), **inputs)
    live = adv.ne(0).any(-1).float().mean().item()
    full, m_full = _grads(policy, r, adv.flatten(), algo, False)
    fast, m_fast = _grads(policy, r, adv.flatten(), algo, True)
    rel = (full[0] - fast[0]).norm() / full[0].norm()
    assert rel < 1e-5, (name, rel.item())
    assert m_fast["update_rows_frac"] == pytest.approx(live)
    assert m_full["update_rows_frac"] == 1.0


def test_all_zero_groups_still_step_the_optimizer(batch):
    """Every group all-equal: no forward pass, zero gradients, and AdamW still moves the
    weights exactly as after the full computation (its momentum from earlier steps)."""
    policy, r = batch
    algo = AlgoConfig()
    mixed = _rewards(0)
    after = []
    for skip in (False, True):
        torch.manual_seed(5)
        net = build_policy(GruConfig(hidden=32, encoder_layers=2))
        net.load_state_dict(policy.state_dict())
        opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
        for rewards in (mixed, torch.zeros(P, G)):
            r.reward = rewards.flatten()
            adv = group_advantages(rewards, algo, FocalConfig())[0].flatten()
            update(net, None, opt, r, adv, algo, _train_cfg(skip), seed=0, it=0)
        after.append(torch.cat([p.detach().flatten() for p in net.parameters()]))
    assert (after[0] - after[1]).abs().max() < 1e-6
    start = torch.cat([p.detach().flatten() for p in policy.parameters()])
    assert (after[1] - start).abs().max() > 1e-3


def test_a_zero_gradient_step_moves_by_the_moments_alone_unless_skipped(batch):
    """After one step with gradient g, AdamW's step on an exactly zero gradient (step 2) moves
    each weight by -lr * m_hat / (sqrt(v_hat) + eps) with m = 0.9 * 0.1 g, v = 0.999 * 0.001 g^2
    and the bias corrections 1 - 0.9^2, 1 - 0.999^2: about 0.67 lr against the sign of g,
    whatever g's size. train.zero_gradient_step=false leaves the weights and moments as
    they are."""
    policy, r = batch
    algo = AlgoConfig()
    mixed = _rewards(0)
    lr, eps = 1e-3, 1e-8
    for step_on_zero in (True, False):
        net = build_policy(GruConfig(hidden=32, encoder_layers=2))
        net.load_state_dict(policy.state_dict())
        opt = torch.optim.AdamW(net.parameters(), lr=lr, eps=eps, weight_decay=0.0)
        cfg = _train_cfg(True, zero_gradient_step=step_on_zero)
        r.reward = mixed.flatten()
        adv = group_advantages(mixed, algo, FocalConfig())[0].flatten()
        update(net, None, opt, r, adv, algo, cfg, seed=0, it=0)
        before = [p.detach().clone() for p in net.parameters()]
        moments = [(opt.state[p]["exp_avg"].clone(), opt.state[p]["exp_avg_sq"].clone())
                   for p in net.parameters()]  # fmt: skip
        r.reward = torch.zeros(P * G)
        adv = group_advantages(torch.zeros(P, G), algo, FocalConfig())[0].flatten()
        _, skipped = update(net, None, opt, r, adv, algo, cfg, seed=0, it=1)
        assert skipped == 0
        for p, b, (m, v) in zip(net.parameters(), before, moments, strict=True):
            if not step_on_zero:
                assert torch.equal(p.detach(), b) and torch.equal(opt.state[p]["exp_avg"], m)
                assert int(opt.state[p]["step"]) == 1
                continue
            m_hat, v_hat = 0.9 * m / (1 - 0.9**2), 0.999 * v / (1 - 0.999**2)
            expected = -lr * m_hat / (v_hat.sqrt() + eps)
            # float32 weights of size ~1: the difference is exact to about 1e-7 (an ulp)
            torch.testing.assert_close(p.detach() - b, expected, rtol=1e-4, atol=3e-7)
            g = m / 0.1  # the first step's gradient, m = (1 - 0.9) g
            big = g.abs() > 1e-3  # where eps does not matter: 0.9 / 0.19 / sqrt(0.999 / 1.999)
            moved = (p.detach() - b)[big]
            torch.testing.assert_close(moved, -lr * 0.6701 * g[big].sign(), rtol=1e-3, atol=3e-7)


def test_kl_term_keeps_every_row(batch):
    """With kl_beta > 0 every row carries the KL penalty: nothing is skipped."""
    policy, r = batch
    rewards = _rewards(15)
    r.reward = rewards.flatten()
    algo = AlgoConfig(kl_beta=0.1)
    adv = group_advantages(rewards, algo, FocalConfig())[0].flatten()
    opt = GradCapture(policy.parameters())
    metrics, _ = update(policy, policy, opt, r, adv, algo, _train_cfg(True), seed=0, it=0)
    assert metrics["update_rows_frac"] == 1.0


@pytest.mark.parametrize("sees_position", [False, True])
def test_shared_generation_samples_the_same_actions(sees_position):
    """Generation once per distinct prefix of the unfinished rows: the same actions, lengths
    and log-probs as the per-row loop, on episodes of varied length (a GRU steered towards
    each solution), for far fewer policy rows."""
    from mazerl.apps.bench import GuidedPolicy

    class Counted(GuidedPolicy):
        rows = 0

        def step(self, state, prev, pos):
            Counted.rows += len(prev)
            return super().step(state, prev, pos)

    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=32, encoder_layers=2, sees_position=sees_position))
    mazes = [MazeSpec(size=5).sample(np.random.default_rng(i)) for i in range(6)]
    guided = Counted(policy.eval(), mazes, 16)
    stepped = []
    for share in (False, True):
        Counted.rows = 0
        r = generate(guided, mazes, 16, generator=torch.Generator().manual_seed(1), share=share)
        stepped.append((r, Counted.rows))
    (full, per_row), (fast, per_prefix) = stepped
    lengths = full.length.float()
    assert lengths.std() > 2 and lengths.max() > 10  # rows end at many different steps
    assert torch.equal(full.actions, fast.actions)
    assert torch.equal(full.length, fast.length) and torch.equal(full.reward, fast.reward)
    assert torch.allclose(full.logp, fast.logp, atol=1e-6)
    assert torch.equal(full.positions, fast.positions)
    assert per_row == 96 * full.used_length  # every row at every step
    # shared: each step runs one row per distinct unfinished prefix of a maze
    ends = full.length.tolist()
    prefixes = sum(
        len({(b // 16, *full.actions[b, :t].tolist()) for b in range(96) if ends[b] > t})
        for t in range(full.used_length)
    )
    assert per_prefix == prefixes < per_row / 2
