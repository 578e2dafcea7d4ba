"""Methods as compositions (estimator + optional reward transform + per-token surrogate +
terms + one aggregation), each against its formula by hand and, where the authors released
code, against that code's computation rewritten here."""

import itertools
import math

import pytest
import torch
import yaml
from conftest import GradCapture, example_inputs
from omegaconf import OmegaConf

from mazerl.algos import (
    ADVANTAGES,
    POLICY_LOSSES,
    REWARD_TRANSFORMS,
    AlgoConfig,
    FocalConfig,
    check_algo,
    group_advantages,
    policy_loss,
    reads_every_row,
)
from mazerl.algos.advantages import declares_all_equal_zero
from mazerl.apps.schema import register_configs
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import ConfigError

TOL = dict(atol=1e-9, rtol=0)


def t(x, dtype=torch.float64):
    return torch.tensor(x, dtype=dtype)


# ---------------------------------------------------------------- the composition


def _tokens():
    """Two sequences, T = 3 (the second 2 tokens long), on-policy (rho = 1)."""
    logp = t([[-0.5, -1.0, -2.0], [-0.3, -0.7, -1.0]])
    return dict(logp=logp, old_logp=logp.clone(), advantages=t([1.0, -2.0]),
                mask=t([[1, 1, 1], [1, 1, 0]]))  # fmt: skip


def test_entropy_bonus_is_one_term_added_to_every_loss():
    # at rho = 1 the clip surrogate is -A per token: -1, -1, -1, +2, +2 (sum 1 over 5 tokens);
    # the entropy bonus adds -c H_t per token: H = 0.5 everywhere, c = 0.01
    entropy = torch.full((2, 3), 0.5, dtype=torch.float64)
    for loss in ("clip", "cispo", "linear"):
        base, _ = policy_loss(AlgoConfig(loss=loss), **_tokens(), entropy=entropy)
        bonus, m = policy_loss(
            AlgoConfig(loss=loss, entropy_coef=0.01), **_tokens(), entropy=entropy
        )
        assert bonus.item() == pytest.approx(base.item() - 0.01 * 0.5, abs=1e-12), loss
        assert m["entropy"].item() == 0.5
    loss, _ = policy_loss(AlgoConfig(entropy_coef=0.01), **_tokens(), entropy=entropy)
    assert loss.item() == pytest.approx(1 / 5 - 0.005, abs=1e-12)
    with pytest.raises(ConfigError, match="needs the policy's per-token entropy"):
        policy_loss(AlgoConfig(entropy_coef=0.01), **_tokens())  # no entropy given


def test_the_skip_rule_follows_from_the_terms():
    assert not reads_every_row(AlgoConfig())
    assert reads_every_row(AlgoConfig(kl_beta=0.1))  # the KL term is non-zero on every row
    assert reads_every_row(AlgoConfig(entropy_coef=0.001))  # so is the entropy bonus


def test_check_algo_names_the_key_and_the_problem():
    check_algo(AlgoConfig(), 8)
    with pytest.raises(ConfigError, match=r"^algo.advantage_kwargs: advantage estimator 'grpo' "
                       r"takes no argument 'epss'; its parameters: rewards, eps$"):  # fmt: skip
        check_algo(AlgoConfig(advantage_kwargs={"epss": 1e-6}), 8)
    with pytest.raises(ConfigError, match=r"^algo.loss_kwargs: policy loss 'clip' takes no arg"):
        check_algo(AlgoConfig(loss_kwargs={"clip_hgih": 0.3}), 8)
    with pytest.raises(ConfigError, match=r"^algo.reward_transform_kwargs: given, but algo.rew"):
        check_algo(AlgoConfig(reward_transform_kwargs={"k": 2}), 8)


def test_an_estimator_checks_its_own_values_and_declares_all_equal_groups(monkeypatch):
    """A parameter without a default must be given; a value the estimator refuses is one line
    naming the key; DAPO's filter refuses an estimator that signals all-equal groups."""

    def scaled(rewards, *, scale):
        if scale <= 0:
            raise ConfigError(f"scale must be > 0, got {scale!r}")
        return rewards * scale

    # registered without `estimator`: it does not declare that all-equal groups get 0
    monkeypatch.setitem(ADVANTAGES._entries, "scaled_for_test", scaled)
    algo = AlgoConfig(advantage="scaled_for_test")
    with pytest.raises(ConfigError, match=r"^algo.advantage_kwargs: advantage estimator "
                       "'scaled_for_test' needs the argument 'scale'$"):  # fmt: skip
        check_algo(algo, 4)
    algo.advantage_kwargs = {"scale": -1.0}
    with pytest.raises(ConfigError, match=r"^algo.advantage_kwargs: scale must be > 0, got -1.0$"):
        check_algo(algo, 4)
    algo.advantage_kwargs = {"scale": 2.0}
    check_algo(algo, 4)
    algo.dynamic_sampling = True
    with pytest.raises(ConfigError, match=r"^algo.dynamic_sampling must be false with algo.adv"):
        check_algo(algo, 4)
    # an all-wrong group keeps its (non-zero) advantage and counts as a non-zero group
    adv, m = group_advantages(t([[1.0, 0.0], [1.0, 1.0]]), algo, FocalConfig(gamma=0.0))
    assert adv.tolist() == [[2.0, 0.0], [2.0, 2.0]] and m["frac_zero_adv_groups"].item() == 0
    assert not declares_all_equal_zero("scaled_for_test") and declares_all_equal_zero("grpo")


@pytest.mark.parametrize("name", ADVANTAGES.names())
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_estimators_that_declare_it_give_all_equal_groups_exactly_zero(name, dtype):
    if not declares_all_equal_zero(name):
        pytest.skip(f"{name} gives all-equal groups a signal")
    kwargs = {"passk": {"k": 2}}.get(name, {})
    rewards = torch.tensor([[1, 1, 1], [0, 0, 0], [1, 0, 0]], dtype=dtype)
    adv = ADVANTAGES.get(name)(rewards, **kwargs, **example_inputs(name, rewards))
    assert adv.dtype == dtype and torch.equal(adv[:2], torch.zeros(2, 3, dtype=dtype))
    assert torch.isfinite(adv).all() and (adv[2] != 0).any()


def test_a_reward_transform_feeds_the_estimator_and_focal_reads_the_rewards(monkeypatch):
    monkeypatch.setitem(REWARD_TRANSFORMS._entries, "double_for_test", lambda r, *, by: r * by)
    algo = AlgoConfig(advantage="drgrpo", reward_transform="double_for_test",
                      reward_transform_kwargs={"by": 3.0})  # fmt: skip
    # r = [1, 0, 0, 0] -> [3, 0, 0, 0], mean 0.75: A = [2.25, -0.75, ...]; mu_hat = 1/4 from
    # the rewards (not 3/4 of the transformed ones): g = (3/4)^1
    adv, _ = group_advantages(t([[1.0, 0.0, 0.0, 0.0]]), algo, FocalConfig(gamma=1.0))
    torch.testing.assert_close(adv, 0.75 * t([[2.25, -0.75, -0.75, -0.75]]), **TOL)


def test_a_loss_takes_only_what_its_surrogate_declares():
    assert POLICY_LOSSES.parameters("linear") == [
        "logp", "old_logp", "advantages", "mask", "ref_logp", "entropy", "norm_mask",
        "kl_beta", "entropy_coef", "agg",
    ]  # fmt: skip
    assert POLICY_LOSSES.parameters("clip")[-2:] == ["clip_low", "clip_high"]


def _reference_maxrl(group: list[float]) -> list[float]:
    """tajwarfahim/maxrl, verl/trainer/ppo/core_algos.py, compute_maxrl_outcome_advantage
    (lines 402-441): score - mean over the group, divided by (mean + epsilon), epsilon 1e-6."""
    mean = sum(group) / len(group)
    return [(r - mean) / (mean + 1e-6) for r in group]


# ---------------------------------------------------------------- MaxRL


def test_maxrl_by_hand_and_against_the_authors_code():
    rewards = t([[1, 0, 0, 0], [1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0]])
    adv = ADVANTAGES.get("maxrl")(rewards)
    # c of N correct: N/c - 1 for a correct sample, -1 for a wrong one (up to eps)
    by_hand = [[3, -1, -1, -1], [1 / 3, 1 / 3, -1, 1 / 3], [0] * 4, [0] * 4, [1, -1, 1, -1]]
    torch.testing.assert_close(adv, t(by_hand), atol=1e-4, rtol=0)
    reference = [_reference_maxrl(g) for g in rewards.tolist()]
    torch.testing.assert_close(adv, t(reference), atol=1e-12, rtol=0)
    assert torch.equal(adv[2:4], torch.zeros(2, 4, dtype=torch.float64))  # exactly 0


def _algo(name: str) -> AlgoConfig:
    """The method `algo=<name>` (its YAML over its base's) as an `AlgoConfig`."""
    from hydra import compose, initialize_config_dir

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        algo = compose("config", overrides=[f"algo={name}"]).algo
    return AlgoConfig(**OmegaConf.to_container(algo))


def test_maxrl_config_composes_with_focal():
    algo = _algo("maxrl")
    check_algo(algo, 8)
    # [1, 0, 0, 0] with gamma 0.5: g = sqrt(3/4) times (3, -1, -1, -1)
    adv, _ = group_advantages(t([[1.0, 0, 0, 0]]), algo, FocalConfig(gamma=0.5))
    by_hand = math.sqrt(0.75) * t([[3.0, -1.0, -1.0, -1.0]])
    torch.testing.assert_close(adv, by_hand, atol=1e-4, rtol=0)


# ---------------------------------------------------------------- W-REINFORCE, PSR, NSR


def _reference_psr_nsr(group: list[float], advantage: str, weight: float) -> list[float]:
    """TianHongZXY/RLVR-Decomposed, verl/trainer/ppo/core_algos.py,
    compute_psr_nsr_outcome_advantage (lines 111-153), outcome reward, gamma 1: the return is
    the reward; 'positive' keeps it, 'negative' subtracts 1, 'weighted' multiplies a correct
    one (score 1) by the weight and subtracts 1 from a wrong one (score 0). For 'positive'
    ('negative') ray_trainer.py (lines 1192-1197) drops the wrong (correct) rows from the
    batch: they add nothing, as rows with A = 0 (here 0.0)."""
    if advantage == "positive":
        return [r if r == 1 else 0.0 for r in group]
    if advantage == "negative":
        return [r - 1 if r == 0 else 0.0 for r in group]
    return [r * weight if r == 1 else r - 1 for r in group]


@pytest.mark.parametrize(
    ("name", "advantage"), [("w_reinforce", "weighted"), ("psr", "positive"), ("nsr", "negative")]
)
def test_w_reinforce_psr_nsr_by_hand_and_against_the_authors_code(name, advantage):
    rewards = t([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    algo = _algo(name)
    check_algo(algo, 4)
    adv, metrics = group_advantages(rewards, algo, FocalConfig(gamma=0.0))
    by_hand = {
        "w_reinforce": [[0.1, -1, -1, -1], [-1] * 4, [0.1] * 4],
        "psr": [[1, 0, 0, 0], [0] * 4, [1] * 4],
        "nsr": [[0, -1, -1, -1], [-1] * 4, [0] * 4],
    }[name]
    torch.testing.assert_close(adv, t(by_hand), **TOL)
    reference = [_reference_psr_nsr(g, advantage, 0.1) for g in rewards.tolist()]
    torch.testing.assert_close(adv, t(reference), **TOL)
    # all-equal groups keep a signal (except the half a side's weight of 0 silences)
    zero_groups = {"w_reinforce": 0, "psr": 1 / 3, "nsr": 1 / 3}[name]
    assert metrics["frac_zero_adv_groups"].item() == pytest.approx(zero_groups)


def test_w_reinforce_composes_with_focal_and_refuses_bad_weights():
    algo = _algo("w_reinforce")
    # gamma 1: g = 1 - mu: 3/4 for [1, 0, 0, 0], 1 for all-wrong, 0 for all-correct
    adv, _ = group_advantages(t([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]), algo, FocalConfig(1.0))
    by_hand = [[0.075, -0.75, -0.75, -0.75], [-1] * 4, [0] * 4]
    torch.testing.assert_close(adv, t(by_hand), **TOL)
    for bad in (-0.1, float("inf"), float("nan"), "a lot"):
        algo.advantage_kwargs = {"positive_weight": bad, "negative_weight": 1.0}
        with pytest.raises(ConfigError, match=r"^algo.advantage_kwargs: positive_weight must be a "
                           r"finite number >= 0, got "):  # fmt: skip
            check_algo(algo, 8)
    algo.advantage_kwargs = {"positive_weight": 0.1, "negative_weight": 1.0, "lambda": 0.1}
    with pytest.raises(ConfigError, match=r"takes no argument 'lambda'; its parameters: rewards, "
                       "positive_weight, negative_weight$"):  # fmt: skip
        check_algo(algo, 8)
    algo.advantage_kwargs = {"positive_weight": 0.1, "negative_weight": 1.0}
    algo.dynamic_sampling = True
    with pytest.raises(ConfigError, match="gives all-equal groups a non-zero advantage"):
        check_algo(algo, 8)


# ---------------------------------------------------------------- Pass@k Training


def _reference_passk(group: list[float], k: int) -> list[float]:
    """RUCAIBox/Passk_Training, code/passk_adv.py, calc_adv (lines 10-20): rho = 1 -
    comb(n - c, k) / comb(n, k), sigma = sqrt(rho (1 - rho)), adv_p = (1 - rho) / (sigma +
    1e-6), adv_n = (1 - rho - comb(n - c - 1, k - 1) / comb(n - 1, k - 1)) / (sigma + 1e-6);
    correct (== 1) samples get adv_p, then every value equal to 0 gets adv_n (scipy's comb
    is 0 for a negative or too small top, as `comb` below)."""

    def comb(a: int, b: int) -> int:
        return math.comb(a, b) if a >= 0 else 0

    n, c = len(group), sum(1 for r in group if r == 1)
    rho = 1 - comb(n - c, k) / comb(n, k)
    sigma = math.sqrt(rho * (1 - rho))
    adv_p = (1 - rho) / (sigma + 1e-6)
    adv_n = (1 - rho - comb(n - c - 1, k - 1) / comb(n - 1, k - 1)) / (sigma + 1e-6)
    new_val = [adv_p if r == 1 else r for r in group]
    return [adv_n if v == 0 else v for v in new_val]


def test_passk_by_hand():
    # N = 4, c = 1, k = 2: R = 1 - C(3,2)/C(4,2) = 1/2, sigma = 1/2;
    # A_pos = (1/2) / (1/2 + 1e-6); A_neg = (1/2 - C(2,1)/C(3,1)) / (1/2 + 1e-6) = (-1/6) / ...
    adv = ADVANTAGES.get("passk")(t([[1, 0, 0, 0]]), k=2)
    s = 0.5 + 1e-6
    torch.testing.assert_close(adv, t([[0.5 / s, -1 / 6 / s, -1 / 6 / s, -1 / 6 / s]]), **TOL)
    # N = 4, c = 3, k = 2: N - c = 1 < k, every pair holds a correct one: A = 0 for all
    assert torch.equal(ADVANTAGES.get("passk")(t([[1, 1, 0, 1]]), k=2), torch.zeros(1, 4).double())
    # k = 1 is GRPO with the population std: [1, 0, 0, 0]: mean 1/4, std sqrt(3)/4
    adv = ADVANTAGES.get("passk")(t([[1, 0, 0, 0]]), k=1)
    s = math.sqrt(3) / 4 + 1e-6
    torch.testing.assert_close(adv, t([[0.75 / s, -0.25 / s, -0.25 / s, -0.25 / s]]), **TOL)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_passk_against_the_authors_code(k):
    n = 8
    groups = [[1.0] * c + [0.0] * (n - c) for c in range(n + 1)]
    groups.append([0, 1, 0, 0, 1, 0, 1, 0])  # order does not matter
    adv = ADVANTAGES.get("passk")(t(groups), k=k)
    reference = [_reference_passk(g, k) for g in groups]
    torch.testing.assert_close(adv, t(reference), atol=1e-9, rtol=1e-12)


def test_passk_k_must_fit_the_group():
    algo = _algo("passk")
    check_algo(algo, 4)
    with pytest.raises(ConfigError, match=r"^algo.advantage_kwargs: k must be an integer in "
                       r"\[1, the group size N=2\], got 4$"):  # fmt: skip
        check_algo(algo, 2)
    for bad in (0, 2.5, "four"):
        algo.advantage_kwargs = {"k": bad}
        with pytest.raises(ConfigError, match="k must be an integer in"):
            check_algo(algo, 8)


# ---------------------------------------------------------------- PKPO


def _subset_weights(group: list[float], k: int) -> list[float]:
    """The paper's definition, enumerated: sample i's coefficient in the gradient of the
    pass@k estimate (1 / C(N, k)) sum over k-subsets S of max_{j in S} f_j is
    (1 / C(N, k)) sum over the S holding i of max_{j in S} f_j."""
    n = len(group)
    weights = [0.0] * n
    for subset in itertools.combinations(range(n), k):
        best = max(group[j] for j in subset)
        for i in subset:
            weights[i] += best / math.comb(n, k)
    return weights


def test_pkpo_transform_by_hand_and_by_enumerating_subsets():
    # N = 4, c = 1, k = 2: correct 2/4; wrong (2/4)(1 - C(2,1)/C(3,1)) = 1/6
    s = REWARD_TRANSFORMS.get("pkpo")(t([[1, 0, 0, 0]]), k=2)
    torch.testing.assert_close(s, t([[0.5, 1 / 6, 1 / 6, 1 / 6]]), **TOL)
    groups = [[1.0] * c + [0.0] * (6 - c) for c in range(7)] + [[0, 1, 0, 0, 1, 0]]
    for k in range(1, 7):
        s = REWARD_TRANSFORMS.get("pkpo")(t(groups), k=k)
        torch.testing.assert_close(s, t([_subset_weights(g, k) for g in groups]), **TOL)


def test_pkpo_method_is_the_transform_then_the_leave_one_out_baseline():
    algo = _algo("pkpo")
    algo.reward_transform_kwargs = {"k": 2}
    check_algo(algo, 4)
    # s = [1/2, 1/6, 1/6, 1/6]: A_0 = 1/2 - 1/6 = 1/3, A_wrong = 1/6 - (1/2 + 2/6) / 3 = -1/9
    adv, _ = group_advantages(t([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]), algo, FocalConfig(0))
    by_hand = [[1 / 3, -1 / 9, -1 / 9, -1 / 9], [0] * 4, [0] * 4]
    torch.testing.assert_close(adv, t(by_hand), **TOL)
    assert torch.equal(adv[1:], torch.zeros(2, 4).double())  # all-equal groups: exactly 0
    algo.reward_transform_kwargs = {"k": 8}
    with pytest.raises(ConfigError, match=r"^algo.reward_transform_kwargs: k must be an integer "
                       r"in \[1, the group size N=4\], got 8$"):  # fmt: skip
        check_algo(algo, 4)


@pytest.mark.parametrize("n, k", [(8, 4), (6, 2), (5, 5)])
def test_pkpo_expected_gradient_is_n_minus_k_over_n_minus_1_of_the_unbiased_one(n, k):
    # a Bernoulli policy with success probability p = sigmoid(theta): d log pi(x) / d theta =
    # x - p, and pass@k = 1 - (1 - p)^k has d/dtheta = k p (1 - p)^k. Over all 2^N reward
    # vectors (probability p^c (1 - p)^(N - c)): the transformed rewards alone give it
    # exactly; after the leave-one-out baseline, (N - k) / (N - 1) of it
    algo = _algo("pkpo")
    algo.reward_transform_kwargs = {"k": k}
    x = t(list(itertools.product([0.0, 1.0], repeat=n)))  # [2^N, N]
    adv, _ = group_advantages(x, algo, FocalConfig(0))
    s = REWARD_TRANSFORMS.get("pkpo")(x, k=k)
    c = x.sum(1)
    for p in (0.1, 0.3, 0.7):
        prob = p**c * (1 - p) ** (n - c)  # [2^N]
        grad = k * p * (1 - p) ** k
        assert (prob * (s * (x - p)).sum(1)).sum().item() == pytest.approx(grad, rel=1e-9)
        expected = (n - k) / (n - 1) * grad  # 4/7 at N = 8, k = 4; 0 at k = N
        assert (prob * (adv * (x - p)).sum(1)).sum().item() == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------- entropy bonus


@pytest.fixture(scope="module")
def rollouts():
    """4 mazes x 4 rollouts of a small GRU; the first two groups all-equal (0 and 1)."""
    import numpy as np

    from mazerl.envs.spec import MazeSpec
    from mazerl.policy import build_policy
    from mazerl.policy.gru import GruConfig
    from mazerl.rollout import generate

    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=16, encoder_layers=1))
    mazes = [MazeSpec(size=3).sample(np.random.default_rng(i)) for i in range(4)]
    r = generate(policy, mazes, 4, generator=torch.Generator().manual_seed(1))
    r.reward = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0.0])
    return policy, r


def _update(policy, r, algo, skip: bool):
    from types import SimpleNamespace

    from mazerl.train.update import update

    train_cfg = SimpleNamespace(ppo_epochs=1, minibatches=1, temperature=1.0, grad_clip=1e9,
                                skip_zero_advantage=skip)  # fmt: skip
    adv, _ = group_advantages(r.rewards_by_group, algo, FocalConfig(gamma=0.0))
    opt = GradCapture(policy.parameters())
    metrics, _ = update(policy, None, opt, r, adv.flatten(), algo, train_cfg, seed=0, it=0)
    return opt.grads[0], metrics


def test_entropy_bonus_reads_every_row(rollouts):
    """GRPO skips the two all-equal groups; with the bonus every row is computed, and the
    gradient is the full computation's (skipping would drop the bonus of those rows)."""
    policy, r = rollouts
    _, grpo = _update(policy, r, _algo("grpo"), skip=True)
    assert grpo["update_rows_frac"] == 0.5
    algo = _algo("grpo_entropy")
    check_algo(algo, 4)
    assert algo.entropy_coef == 0.001 and reads_every_row(algo)
    fast, m = _update(policy, r, algo, skip=True)
    full, _ = _update(policy, r, algo, skip=False)
    assert m["update_rows_frac"] == 1.0 and torch.equal(fast, full)
    # the bonus changes the gradient: it is there
    plain, _ = _update(policy, r, _algo("grpo"), skip=False)
    assert (fast - plain).norm() > 1e-6 * plain.norm()


# ---------------------------------------------------------------- entropy advantage shaping


def test_entropy_adv_by_hand():
    # on-policy (rho = 1), token-mean over 5 tokens; A = +1 (row 0), -2 (row 1)
    entropy = t([[0.5, 5.0, 0.0], [1.0, 0.25, 9.0]], dtype=torch.float64).requires_grad_()
    inputs = _tokens()
    inputs["logp"].requires_grad_()
    algo = _algo("entropy_adv")
    check_algo(algo, 8)
    loss, m = policy_loss(algo, **inputs, entropy=entropy)
    # row 0: A + min(0.4 H, 1/2) = 1 + 0.2, 1 + 0.5 (capped), 1 + 0
    # row 1: -2 + min(0.4 H, 2/2) = -2 + 0.4, -2 + 0.1 (the padded token is masked)
    shaped = [1.2, 1.5, 1.0, -1.6, -1.9]
    assert loss.item() == pytest.approx(-sum(shaped) / 5, abs=1e-12)
    assert m["entropy_adv_bonus"].item() == pytest.approx((0.2 + 0.5 + 0 + 0.4 + 0.1) / 5)
    loss.backward()
    assert entropy.grad is None or torch.equal(entropy.grad, torch.zeros_like(entropy))
    # d loss / d logp = -A_t rho / 5 at rho = 1
    expected = -t([[1.2, 1.5, 1.0], [-1.6, -1.9, 0.0]]) / 5
    torch.testing.assert_close(inputs["logp"].grad, expected, **TOL)


def test_entropy_adv_keeps_zero_rows_skippable_and_checks_its_parameters(rollouts):
    policy, r = rollouts
    algo = _algo("entropy_adv")
    assert not reads_every_row(algo)
    fast, m = _update(policy, r, algo, skip=True)
    full, _ = _update(policy, r, algo, skip=False)
    assert m["update_rows_frac"] == 0.5
    assert (fast - full).norm() <= 1e-5 * full.norm()
    for key, bad in (("alpha", -0.4), ("alpha", float("nan")), ("kappa", 0.5)):
        algo.loss_kwargs = {"alpha": 0.4, "kappa": 2.0, key: bad}
        with pytest.raises(ConfigError, match=rf"^algo.loss_kwargs: {key} must be a finite"):
            check_algo(algo, 8)
    algo.loss_kwargs = {"alpha": 0.4, "kapa": 2.0}
    with pytest.raises(ConfigError, match="policy loss 'entropy_adv' takes no argument 'kapa'"):
        check_algo(algo, 8)


# ---------------------------------------------------------------- Clip-Cov


def _cov_tokens(shift_first: float = 0.0):
    """Two sequences (T = 3, the second 2 long), A = +3, -3. Over the 5 response tokens
    mean A = 3/5 and mean log pi = -5.8/5 = -1.16, so cov_t = (A - 0.6)(log pi + 1.16):
    row 0: 2.4 x (1.06, 0.96, -1.84) = 2.544, 2.304, -4.416;
    row 1: -3.6 x (-0.84, 0.66) = 3.024, -2.376.
    `shift_first` moves the first token's sampling log-prob (rho = e^shift there)."""
    logp = t([[-0.1, -0.2, -3.0], [-2.0, -0.5, 0.0]]).requires_grad_()
    old = logp.detach().clone()
    old[0, 0] -= shift_first
    return dict(logp=logp, old_logp=old, advantages=t([3.0, -3.0]),
                mask=t([[1, 1, 1], [1, 1, 0]]))  # fmt: skip


def _reference_clip_cov(inputs, clip_low, clip_high, cov_ratio, cov_low, cov_high) -> float:
    """verl/trainer/ppo/core_algos.py, compute_policy_loss_clip_cov (tajwarfahim/maxrl's copy,
    lines 1392-1477), token-mean, with every eligible token dropped (cov_ratio large enough
    that the random choice takes them all): pg1 = -A rho, pg2 = -A clip(rho); tokens with
    pg2 > pg1 are not eligible; eligible tokens with cov_low < cov < cov_high get corr 0; the
    loss is max(pg1, pg2) * corr averaged over the response tokens."""
    logp = inputs["logp"].detach().tolist()
    old, mask = inputs["old_logp"].tolist(), inputs["mask"].tolist()
    adv = inputs["advantages"].tolist()
    cells = [(b, j) for b in range(2) for j in range(3) if mask[b][j]]
    mean_a = sum(adv[b] for b, _ in cells) / len(cells)
    mean_lp = sum(logp[b][j] for b, j in cells) / len(cells)
    total, eligible = 0.0, []
    for b, j in cells:
        rho = math.exp(logp[b][j] - old[b][j])
        pg1, pg2 = -adv[b] * rho, -adv[b] * min(max(rho, 1 - clip_low), 1 + clip_high)
        cov = (adv[b] - mean_a) * (logp[b][j] - mean_lp)
        if not pg2 > pg1 and cov_low < cov < cov_high:
            eligible.append((b, j))
            continue
        total += max(pg1, pg2)
    assert len(eligible) <= max(int(cov_ratio * len(cells)), 1)  # all of them are dropped
    return total / len(cells)


def test_clip_cov_by_hand_and_against_verl():
    algo = _algo("clip_cov")
    check_algo(algo, 8)
    assert reads_every_row(algo)
    # cov_high 3: eligible (0, 0) 2.544 and (0, 1) 2.304; one of them (int(2e-4 * 5) -> 1) is
    # dropped: either way the loss is (-3 - 3 + 3 + 3) / 5 = 0 (each A = +3 token gives -3)
    algo.loss_kwargs = {"cov_ratio": 2e-4, "cov_low": 1.0, "cov_high": 3.0}
    for _ in range(5):
        loss, m = policy_loss(algo, **_cov_tokens())
        assert loss.item() == pytest.approx(0.0, abs=1e-12) and m["clipcov_frac"].item() == 0.2
    # cov_ratio 1: both dropped: (-3 + 3 + 3) / 5; their gradient is 0, the others' -A rho / 5
    algo.loss_kwargs = {"cov_ratio": 1.0, "cov_low": 1.0, "cov_high": 3.0}
    inputs = _cov_tokens()
    loss, _ = policy_loss(algo, **inputs)
    assert loss.item() == pytest.approx(3 / 5, abs=1e-12)
    assert loss.item() == pytest.approx(_reference_clip_cov(inputs, 1, 1, 1.0, 1, 3), abs=1e-12)
    loss.backward()
    torch.testing.assert_close(inputs["logp"].grad, t([[0, 0, -3 / 5], [3 / 5, 3 / 5, 0]]), **TOL)
    # the first token off-policy at rho = 2.5 (A > 0): PPO clips it at 1 + 1 = 2, so it is not
    # eligible and keeps max(-7.5, -6) = -6: (-6 + 0 - 3 + 3 + 3) / 5
    inputs = _cov_tokens(shift_first=math.log(2.5))
    loss, _ = policy_loss(algo, **inputs)
    assert loss.item() == pytest.approx(-3 / 5, abs=1e-12)
    assert loss.item() == pytest.approx(_reference_clip_cov(inputs, 1, 1, 1.0, 1, 3), abs=1e-12)
    for bad in ({"cov_ratio": 0.0}, {"cov_ratio": 1.5}, {"cov_low": 5.0, "cov_high": 1.0}):
        algo.loss_kwargs = {"cov_ratio": 2e-4, "cov_low": 1.0, "cov_high": 5.0, **bad}
        with pytest.raises(ConfigError, match=r"^algo.loss_kwargs: cov_"):
            check_algo(algo, 8)


def test_clip_cov_reads_every_row(rollouts):
    policy, r = rollouts
    _, m = _update(policy, r, _algo("clip_cov"), skip=True)
    assert m["update_rows_frac"] == 1.0


# ---------------------------------------------------------------- KL-Cov


def _reference_kl_cov(inputs, cov_ratio: float, kl_coef: float) -> float:
    """verl/trainer/ppo/core_algos.py, compute_policy_loss_kl_cov (tajwarfahim/maxrl's copy,
    lines 1480-1541), token-mean: pg = -A rho; over the valid tokens cov = (A - mean A)(log pi
    - mean log pi); the top max(1, int(#valid * ratio)) by cov get pg + kl_coef |log pi -
    log pi_old|."""
    logp = inputs["logp"].detach().tolist()
    old, mask = inputs["old_logp"].tolist(), inputs["mask"].tolist()
    adv = inputs["advantages"].tolist()
    cells = [(b, j) for b in range(2) for j in range(3) if mask[b][j]]
    mean_a = sum(adv[b] for b, _ in cells) / len(cells)
    mean_lp = sum(logp[b][j] for b, j in cells) / len(cells)
    cov = {c: (adv[c[0]] - mean_a) * (logp[c[0]][c[1]] - mean_lp) for c in cells}
    top = sorted(cells, key=cov.get, reverse=True)[: max(1, int(len(cells) * cov_ratio))]
    total = 0.0
    for b, j in cells:
        pg = -adv[b] * math.exp(logp[b][j] - old[b][j])
        total += pg + (kl_coef * abs(logp[b][j] - old[b][j]) if (b, j) in top else 0.0)
    return total / len(cells)


def test_kl_cov_by_hand_and_against_verl():
    algo = _algo("kl_cov")
    check_algo(algo, 8)
    assert reads_every_row(algo)
    # every token off-policy by log rho = 0.1; covariances as _cov_tokens: the top one of the
    # 5 tokens (int(5 * 2e-3) -> 1) is (1, 0), 3.024: it alone gets + 1 * 0.1
    inputs = _cov_tokens()
    inputs["old_logp"] = inputs["old_logp"] - 0.1
    loss, m = policy_loss(algo, **inputs)
    rho = math.exp(0.1)
    assert loss.item() == pytest.approx((-3 * rho * 3 + 3 * rho * 2 + 0.1) / 5, abs=1e-12)
    assert m["klcov_frac"].item() == pytest.approx(0.2)
    assert loss.item() == pytest.approx(_reference_kl_cov(inputs, 2e-3, 1.0), abs=1e-12)
    # cov_ratio 0.4: the top two, (1, 0) 3.024 and (0, 0) 2.544; kl_coef 0.5
    algo.loss_kwargs = {"cov_ratio": 0.4, "kl_coef": 0.5}
    loss, _ = policy_loss(algo, **inputs)
    assert loss.item() == pytest.approx((-3 * rho + 2 * 0.5 * 0.1) / 5, abs=1e-12)
    assert loss.item() == pytest.approx(_reference_kl_cov(inputs, 0.4, 0.5), abs=1e-12)
    loss.backward()
    # d/dlogp: -A rho / 5, plus 0.5 * sign(log rho) / 5 = 0.1 on the two penalised tokens
    expected = t([[-3 * rho + 0.5, -3 * rho, -3 * rho], [3 * rho + 0.5, 3 * rho, 0]]) / 5
    torch.testing.assert_close(inputs["logp"].grad, expected, **TOL)
    for bad in ({"cov_ratio": -1.0}, {"kl_coef": -1.0}, {"kl_coef": float("inf")}):
        algo.loss_kwargs = {"cov_ratio": 2e-3, "kl_coef": 1.0, **bad}
        with pytest.raises(ConfigError, match=r"^algo.loss_kwargs: (cov_ratio|kl_coef) must be"):
            check_algo(algo, 8)


def test_kl_cov_reads_every_row(rollouts):
    policy, r = rollouts
    _, m = _update(policy, r, _algo("kl_cov"), skip=True)
    assert m["update_rows_frac"] == 1.0


# ---------------------------------------------------------------- the leaderboard preset


def test_methods_preset_sweeps_every_method_on_the_study_evaluation():
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs, validate

    register_configs()
    params = yaml.safe_load((CONF_DIR / "experiment" / "methods.yaml").read_text())
    params = params["hydra"]["sweeper"]["params"]
    methods = params["algo"].split(",")
    assert set(methods) == {"grpo", "maxrl", "pkpo", "passk", "w_reinforce", "psr", "nsr",
                            "grpo_entropy", "entropy_adv", "clip_cov"}  # fmt: skip
    assert params["focal.gamma"] == "0,0.5" and params["train.group_size"] == "32,8"
    for name in methods:  # each method runs at the smaller N (k <= N)
        check_algo(_algo(name), 8)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", ["experiment=methods", "algo=pkpo", "train.group_size=8"])
    validate(cfg)
    assert cfg.algo.name == "pkpo" and cfg.train.iterations == 15000
    sizes = {s.name: s.num_mazes for s in cfg.eval.sets}
    assert sizes == {"id": 1024, "ood_large": 512, "ood_dfs": 512}
