"""Objectives against hand computations, gradients, and properties."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mazerl.algos import (
    ADVANTAGES,
    AGGREGATIONS,
    POLICY_LOSSES,
    AlgoConfig,
    FocalConfig,
    focal_weight,
    group_advantages,
    keep_mixed_groups,
    policy_loss,
    success_rate,
)
from mazerl.algos.losses import kl_k3, log_ratio
from mazerl.core.errors import ConfigError

TOL = dict(atol=1e-6, rtol=0)


def t(x, dtype=torch.float64):
    return torch.tensor(x, dtype=dtype)


# ---------------------------------------------------------------- advantages


def test_grpo_advantage_by_hand():
    # [1,0,0,1]: mean 0.5, unbiased std sqrt((4 * 0.25) / 3) = sqrt(1/3)
    # [1,0,0,0]: mean 0.25, unbiased var (0.75^2 + 3 * 0.25^2) / 3 = 0.25, std 0.5
    adv = ADVANTAGES.get("grpo")(t([[1, 0, 0, 1], [1, 0, 0, 0]]))
    a = 0.5 / (math.sqrt(1 / 3) + 1e-6)
    b, c = 0.75 / (0.5 + 1e-6), -0.25 / (0.5 + 1e-6)
    torch.testing.assert_close(adv, t([[a, -a, -a, a], [b, c, c, c]]), **TOL)


def test_drgrpo_and_rloo_by_hand():
    rewards = t([[1, 0, 0, 0], [1, 1, 0, 1]])
    # Dr. GRPO: r - mean; means 0.25 and 0.75
    torch.testing.assert_close(
        ADVANTAGES.get("drgrpo")(rewards),
        t([[0.75, -0.25, -0.25, -0.25], [0.25, 0.25, -0.75, 0.25]]),
        **TOL,
    )
    # RLOO: r_i - mean of the other three, e.g. 1 - (0+0+0)/3 = 1, 0 - (1+0+0)/3 = -1/3
    torch.testing.assert_close(
        ADVANTAGES.get("rloo")(rewards),
        t([[1, -1 / 3, -1 / 3, -1 / 3], [1 / 3, 1 / 3, -1, 1 / 3]]),
        **TOL,
    )


@pytest.mark.parametrize("name", ["grpo", "drgrpo", "rloo"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_all_equal_groups_get_exactly_zero(name, dtype):
    # 0.1 repeated: the mean is not exactly 0.1 in floating point, yet A must be exactly 0
    rewards = torch.tensor([[0.1, 0.1, 0.1], [1, 1, 1], [0, 0, 0], [1, 0, 1]], dtype=dtype)
    adv = ADVANTAGES.get(name)(rewards)
    assert adv.dtype == dtype
    assert torch.equal(adv[:3], torch.zeros(3, 3, dtype=dtype))
    assert torch.isfinite(adv).all() and (adv[3] != 0).all()


# ---------------------------------------------------------------- focal weight


def test_focal_weight_by_hand():
    rewards = t([[1, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    mu = success_rate(rewards)
    torch.testing.assert_close(mu, t([[0.25], [0.75], [0.0], [1.0]]), **TOL)
    torch.testing.assert_close(
        focal_weight(mu, 0.5), t([[math.sqrt(0.75)], [0.5], [1.0], [0.0]]), **TOL
    )
    torch.testing.assert_close(focal_weight(mu, 1.0), t([[0.75], [0.25], [1.0], [0.0]]), **TOL)
    # the paper's N = 8, gamma = 0.5 values for X = 1..7: 0.935 ... 0.354
    x = torch.arange(1, 8, dtype=torch.float64)[:, None] / 8
    torch.testing.assert_close(
        focal_weight(x, 0.5).squeeze(),
        t([0.935, 0.866, 0.791, 0.707, 0.612, 0.500, 0.354]),
        atol=1e-3,
        rtol=0,
    )
    # -1/+1 rewards (categorical simulation): mu = X/N still
    torch.testing.assert_close(success_rate(t([[1, -1, -1, -1]])), t([[0.25]]), **TOL)
    # non-binary: fraction at the group maximum
    torch.testing.assert_close(success_rate(t([[0.2, 0.7, 0.7, 0.1]]), None), t([[0.5]]), **TOL)
    with pytest.raises(ValueError, match="gamma must be >= 0"):
        focal_weight(mu, -1.0)


def test_focal_multiplies_every_member_and_carries_no_gradient():
    rewards = t([[1.0, 0, 0, 0]]).requires_grad_()
    algo = AlgoConfig(advantage="grpo")
    adv, metrics = group_advantages(rewards, algo, FocalConfig(gamma=1.0))
    base, _ = group_advantages(rewards, algo, FocalConfig(gamma=0.0))
    torch.testing.assert_close(adv, 0.75 * base, **TOL)
    assert metrics["focal_weight_mean"].item() == pytest.approx(0.75)
    # even from an input that carries a gradient, the weight does not
    mu = t([[0.25], [0.5]]).requires_grad_()
    for gamma in (0.0, 0.5, 1.0):
        g = focal_weight(mu, gamma)
        assert not g.requires_grad
        torch.testing.assert_close(g, (1 - mu.detach()) ** gamma, **TOL)


@settings(max_examples=200, deadline=None)
@given(
    p=st.integers(1, 6),
    g=st.integers(2, 16),
    seed=st.integers(0, 2**31),
    estimator=st.sampled_from(["grpo", "drgrpo", "rloo"]),
)
def test_gamma_zero_is_the_base_method_bit_for_bit(p, g, seed, estimator):
    gen = torch.Generator().manual_seed(seed)
    rewards = torch.randint(0, 2, (p, g), generator=gen).float()
    algo = AlgoConfig(advantage=estimator)
    with_focal, _ = group_advantages(rewards, algo, FocalConfig(gamma=0.0))
    assert torch.equal(with_focal, ADVANTAGES.get(estimator)(rewards))


@settings(max_examples=200, deadline=None)
@given(
    mu=st.lists(st.floats(0, 1), min_size=2, max_size=20),
    gamma=st.floats(0.01, 4),
)
def test_focal_weight_in_unit_interval_and_non_increasing(mu, gamma):
    mu_t = torch.tensor(sorted(mu), dtype=torch.float64)
    g = focal_weight(mu_t, gamma)
    assert ((g >= 0) & (g <= 1)).all()
    assert (g[1:] <= g[:-1]).all()


# ---------------------------------------------------------------- losses

# Two sequences, T = 3, the second one 2 tokens long. Ratios rho and advantages:
RATIO = [[1.0, 1.3, 0.7], [0.9, 1.25, 1.0]]
LOGP = [[-0.5, -1.0, -2.0], [-0.3, -0.7, -1.0]]
MASK = [[1, 1, 1], [1, 1, 0]]
ADV = [1.0, -2.0]


def _inputs(requires_grad=False):
    logp = t(LOGP).requires_grad_(requires_grad)
    old_logp = t(LOGP) - torch.log(t(RATIO))
    return dict(logp=logp, old_logp=old_logp, advantages=t(ADV), mask=t(MASK))


def test_grpo_clip_loss_by_hand():
    # A = +1: rho 1.0 -> min(1.0, 1.0) = 1.0; 1.3 -> min(1.3, 1.2) = 1.2; 0.7 -> min(0.7, 0.8) = 0.7
    # A = -2: rho 0.9 -> min(-1.8, -1.8) = -1.8; 1.25 -> min(-2.5, -2.4) = -2.5
    # token losses: -1.0 -1.2 -0.7 +1.8 +2.5 (sum 1.4 over 5 tokens)
    loss, m = POLICY_LOSSES.get("clip")(**_inputs())
    assert loss.item() == pytest.approx(1.4 / 5, abs=1e-6)
    assert m["clipfrac_high"].item() == pytest.approx(1 / 5)  # rho 1.3 with A > 0
    assert m["clipfrac_low"].item() == 0.0  # rho 0.7 has A > 0: not clipped
    assert m["ratio_mean"].item() == pytest.approx((1.0 + 1.3 + 0.7 + 0.9 + 1.25) / 5)
    # seq-mean-token-mean: (-2.9 / 3 + 4.3 / 2) / 2; Dr. GRPO's norm: 1.4 / (2 sequences * T=3)
    loss, _ = POLICY_LOSSES.get("clip")(**_inputs(), agg="seq-mean-token-mean")
    assert loss.item() == pytest.approx((-2.9 / 3 + 4.3 / 2) / 2, abs=1e-6)
    loss, _ = POLICY_LOSSES.get("clip")(**_inputs(), agg="seq-mean-token-sum-norm")
    assert loss.item() == pytest.approx(1.4 / 6, abs=1e-6)


def test_dapo_clip_higher_by_hand():
    # eps_high 0.28: rho 1.3 with A = +1 -> min(1.3, 1.28) = 1.28; the rest as GRPO
    loss, m = POLICY_LOSSES.get("clip")(**_inputs(), clip_low=0.2, clip_high=0.28)
    assert loss.item() == pytest.approx((-1.0 - 1.28 - 0.7 + 1.8 + 2.5) / 5, abs=1e-6)
    assert m["clipfrac_high"].item() == pytest.approx(1 / 5)


def test_cispo_loss_by_hand():
    # -w A logp with w = clip(rho, 0, 6): -(1.0*1*-0.5 + 1.3*1*-1.0 + 0.7*1*-2.0
    #                                        + 0.9*-2*-0.3 + 1.25*-2*-0.7) / 5 = 0.91 / 5
    loss, m = POLICY_LOSSES.get("cispo")(**_inputs())
    assert loss.item() == pytest.approx(0.91 / 5, abs=1e-6)
    assert m["clipfrac_high"].item() == 0.0
    # a ratio of 7 is truncated to 6
    inp = _inputs()
    inp["old_logp"] = inp["logp"] - math.log(7.0)
    loss, m = POLICY_LOSSES.get("cispo")(**inp)
    assert m["clipfrac_high"].item() == 1.0
    expected = -(6 * (-0.5 - 1.0 - 2.0) + 6 * -2 * (-0.3 - 0.7)) / 5
    assert loss.item() == pytest.approx(expected, abs=1e-6)


def test_kl_k3_by_hand_and_in_loss():
    # k3 at d = ref - logp = 0.1: e^0.1 - 0.1 - 1
    k = math.exp(0.1) - 0.1 - 1
    logp = t([[-1.0, -2.0]])
    assert kl_k3(logp, logp + 0.1).squeeze().tolist() == pytest.approx([k, k])
    inp = _inputs()
    base, _ = POLICY_LOSSES.get("clip")(**inp)
    with_kl, m = POLICY_LOSSES.get("clip")(**inp, ref_logp=inp["logp"] + 0.1, kl_beta=0.5)
    assert with_kl.item() == pytest.approx(base.item() + 0.5 * k, abs=1e-6)
    assert m["kl_ref"].item() == pytest.approx(k)


def test_clipped_tokens_get_no_gradient_but_cispo_keeps_every_token():
    inp = _inputs(requires_grad=True)
    POLICY_LOSSES.get("clip")(**inp)[0].backward()
    grad = inp["logp"].grad
    # d/dlogp of -rho A / 5 = -rho A / 5 on unclipped tokens, 0 on the clipped one (rho 1.3, A>0)
    expected = t([[-1.0 / 5, 0.0, -0.7 / 5], [0.9 * 2 / 5, 1.25 * 2 / 5, 0.0]])
    torch.testing.assert_close(grad, expected, **TOL)

    inp = _inputs(requires_grad=True)
    POLICY_LOSSES.get("cispo")(**inp)[0].backward()
    # d/dlogp of -w A logp / 5 = -w A / 5 on every response token
    expected = t([[-1.0 / 5, -1.3 / 5, -0.7 / 5], [0.9 * 2 / 5, 1.25 * 2 / 5, 0.0]])
    torch.testing.assert_close(inp["logp"].grad, expected, **TOL)


def test_on_policy_gradients_of_clip_and_cispo_agree():
    """At rho = 1 (one update per step, as in the paper's Maze runs) both are REINFORCE."""
    logp = t(LOGP)
    grads = []
    for name in ("clip", "cispo"):
        lp = logp.clone().requires_grad_()
        POLICY_LOSSES.get(name)(logp=lp, old_logp=logp, advantages=t(ADV), mask=t(MASK))[
            0
        ].backward()
        grads.append(lp.grad)
    torch.testing.assert_close(grads[0], grads[1], **TOL)


@pytest.mark.parametrize("name", ["clip", "cispo"])
def test_gradcheck_float64(name):
    gen = torch.Generator().manual_seed(0)
    logp = (-torch.rand(4, 5, generator=gen, dtype=torch.float64) * 2).requires_grad_()
    # ratios well inside (0.85, 1.15), away from every clip boundary, where the loss is smooth
    log_ratio = (torch.rand(4, 5, generator=gen, dtype=torch.float64) - 0.5) * 0.3
    adv = torch.randn(4, generator=gen, dtype=torch.float64)
    mask = t([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 0]])
    ref = logp.detach() - 0.2
    old_fixed = logp.detach().clone() - log_ratio

    def loss(lp, agg):
        # CISPO's IS weight is detached by design, so its gradient is the derivative with the
        # weight held fixed: move old_logp with lp to keep the ratio (and the weight) constant.
        old = lp - log_ratio if name == "cispo" else old_fixed
        return POLICY_LOSSES.get(name)(
            logp=lp, old_logp=old, advantages=adv, mask=mask, ref_logp=ref, kl_beta=0.1, agg=agg
        )[0]

    for agg in AGGREGATIONS.names():
        assert torch.autograd.gradcheck(lambda lp, agg=agg: loss(lp, agg), (logp,))


@pytest.mark.parametrize("loss_name", ["clip", "cispo"])
def test_scaling_the_advantage_equals_scaling_the_objective(loss_name):
    """F-GRPO scales A (Eq. 13); the categorical simulation scales the objective (App. J).
    For g >= 0 they coincide, token by token."""
    inp = _inputs()
    g = t([0.4, 0.9])
    scaled_adv, _ = POLICY_LOSSES.get(loss_name)(**{**inp, "advantages": g * inp["advantages"]})
    per_seq = []
    for i in range(2):
        one = {k: v[i : i + 1] for k, v in inp.items()}
        loss, _ = POLICY_LOSSES.get(loss_name)(**one, agg="seq-mean-token-sum-norm")
        per_seq.append(g[i] * loss * 3)  # undo the /T of this aggregation: token sums
    assert scaled_adv.item() == pytest.approx(sum(per_seq).item() / 5, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(
    b=st.integers(1, 8),
    tlen=st.integers(1, 12),
    seed=st.integers(0, 2**31),
    name=st.sampled_from(["clip", "cispo"]),
    agg=st.sampled_from(["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"]),
)
def test_losses_finite_and_ignore_padding(b, tlen, seed, name, agg):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, tlen + 1, (b,), generator=gen)
    mask = (torch.arange(tlen)[None] < lengths[:, None]).float()
    logp = -torch.rand(b, tlen, generator=gen) * 5
    old = logp + torch.randn(b, tlen, generator=gen)
    adv = torch.randn(b, generator=gen) * 3
    loss, metrics = POLICY_LOSSES.get(name)(
        logp=logp, old_logp=old, advantages=adv, mask=mask, agg=agg
    )
    assert torch.isfinite(loss) and all(torch.isfinite(v) for v in metrics.values())
    # garbage in padded positions changes nothing
    junk = torch.where(mask.bool(), 0.0, 1e6)
    loss2, _ = POLICY_LOSSES.get(name)(
        logp=logp + junk, old_logp=old - junk, advantages=adv, mask=mask, agg=agg
    )
    assert loss2.item() == pytest.approx(loss.item(), rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------- composition


def test_policy_loss_reads_the_algo_config():
    dapo = AlgoConfig(name="dapo", clip_low=0.2, clip_high=0.28)
    loss, _ = policy_loss(dapo, **_inputs())
    assert loss.item() == pytest.approx((-1.0 - 1.28 - 0.7 + 1.8 + 2.5) / 5, abs=1e-6)
    with pytest.raises(ConfigError, match="unknown policy loss 'nope'; known: cispo, clip, "):
        policy_loss(AlgoConfig(loss="nope"), **_inputs())


def test_dynamic_sampling_filter():
    rewards = t([[1, 1, 1], [0, 1, 0], [0, 0, 0], [1, 0, 0]])
    assert keep_mixed_groups(rewards).tolist() == [False, True, False, True]


def test_group_metrics():
    rewards = t([[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]])
    _, m = group_advantages(rewards, AlgoConfig(), FocalConfig(gamma=1.0))
    assert m["frac_zero_adv_groups"].item() == 0.5
    assert m["frac_all_correct"].item() == 0.25 and m["frac_all_wrong"].item() == 0.25
    assert m["focal_weight_mean"].item() == pytest.approx((0.75 + 0.5) / 2)


def test_log_ratio_is_clamped_at_20_in_every_loss():
    logp = torch.tensor([[0.5, -100.0, 60.0]], dtype=torch.float64, requires_grad=True)
    old = torch.zeros(1, 3, dtype=torch.float64)
    lr = log_ratio(logp, old)
    assert lr.tolist() == [[0.5, -20.0, 20.0]]
    lr.sum().backward()
    assert logp.grad.tolist() == [[1.0, 0.0, 0.0]]  # no gradient through the clamped tokens
    for name in ("clip", "cispo"):
        loss, _ = POLICY_LOSSES.get(name)(
            logp=torch.tensor([[0.0, 95.0]]),
            old_logp=torch.tensor([[0.0, 0.0]]),
            advantages=torch.tensor([-1.0]),
            mask=torch.ones(1, 2),
            clip_low=0.2,
            clip_high=100.0,
            kl_beta=0.0,
            agg="token-mean",
        )
        assert torch.isfinite(loss), name
