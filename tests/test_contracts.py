"""The contract every registered part keeps, checked for each name its registry holds: a new
policy, maze generator, advantage estimator or evaluation metric is tested here the moment it
registers (a module of its package, `mazerl.core.registry`), without naming it anywhere."""

import numpy as np
import pytest
import torch
from conftest import estimator_kwargs, example_inputs

from mazerl.algos import ADVANTAGES
from mazerl.algos.advantages import declares_all_equal_zero
from mazerl.envs import generators
from mazerl.envs.maze import replay, simple_paths
from mazerl.envs.spec import MazeSpec
from mazerl.eval.evaluate import is_scalar, sampled_metrics
from mazerl.eval.metric_names import Metric
from mazerl.eval.metrics import METRICS
from mazerl.policy import POLICIES, build_policy
from mazerl.policy.base import BOS_ACTION
from mazerl.policy.tokens import encode
from mazerl.rollout import Rollouts, distinct_rows, generate, log_softmax, score, teacher_forced

# ---------------------------------------------------------------- policies


def small_policy(name: str, sees_position: bool):
    """The policy `name` at width 32 (every policy has `hidden`), other settings its defaults."""
    torch.manual_seed(0)
    config = POLICIES.get(name).config_class(hidden=32, sees_position=sees_position)
    return build_policy(config).eval()


@pytest.mark.parametrize("sees_position", [False, True], ids=["prompt", "position"])
@pytest.mark.parametrize("name", POLICIES.names())
def test_policy_cached_decoding_equals_teacher_forcing(name, sees_position):
    policy = small_policy(name, sees_position)
    mazes = [MazeSpec(size=4).sample(np.random.default_rng(i)) for i in range(3)]
    g = 2
    rows = [m.solution for m in mazes for _ in range(g)]
    actions, positions, _ = teacher_forced(mazes, rows, g)
    prompts = encode(mazes)
    with torch.no_grad():
        forced = policy(prompts, g, actions, positions)
        state = policy.prefill(prompts, g, actions.shape[1])
        prev = torch.full((len(actions),), BOS_ACTION)
        stepped = []
        for t in range(actions.shape[1]):
            logits, state = policy.step(state, prev, positions[:, t])
            stepped.append(logits)
            prev = actions[:, t]
    assert forced.shape == (6, actions.shape[1], 5)
    torch.testing.assert_close(torch.stack(stepped, 1), forced, atol=2e-5, rtol=1e-4)
    # the rollouts of one maze share its prompt: identical first-step logits
    torch.testing.assert_close(forced[0, 0], forced[1, 0])


@pytest.mark.parametrize("sees_position", [False, True], ids=["prompt", "position"])
@pytest.mark.parametrize("name", POLICIES.names())
def test_policy_scores_what_it_sampled_and_differentiates(name, sees_position):
    policy = small_policy(name, sees_position)
    mazes = [MazeSpec(size=3).sample(np.random.default_rng(i)) for i in range(4)]
    r = generate(policy, mazes, 3, generator=torch.Generator().manual_seed(0))
    logp, entropy = score(policy, r)
    assert logp.shape == r.logp.shape == r.mask.shape == (12, r.actions.shape[1])
    torch.testing.assert_close(logp.detach(), r.logp, atol=2e-5, rtol=1e-4)
    assert ((entropy >= 0) & (entropy <= np.log(5) + 1e-5)).all()
    assert (logp[r.mask == 0] == 0).all()
    logp.sum().backward()  # the update can differentiate through it
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.parameters())


@pytest.mark.parametrize("name", POLICIES.names())
def test_policy_scores_each_distinct_response_once_with_every_rows_gradient(name):
    policy = small_policy(name, True)
    mazes = [MazeSpec(size=4).sample(np.random.default_rng(i)) for i in range(3)]
    s0, s1, s2 = (m.solution for m in mazes)
    # distinct responses per group of 4: maze 0 two (the solution three times, a prefix),
    # maze 1 three (the solution, its 1-move prefix twice, its 2-move prefix), maze 2 one
    moves = [s0, s0[:2], s0, s0] + [s1, s1[:1], s1[:1], s1[:2]] + [s2] * 4
    actions, positions, mask = teacher_forced(mazes, moves, 4)
    b, t = actions.shape
    zeros = torch.zeros(b)
    r = Rollouts(
        mazes, encode(mazes), 4, actions, positions, mask, torch.zeros(b, t), zeros,
        zeros.long(), zeros.long(), mask.sum(1).long(),
    )  # fmt: skip
    layout, width, slot = distinct_rows(r, t)
    assert width == 3
    assert (layout // 4 == torch.arange(3).repeat_interleave(3)).all()  # each maze its slots
    assert (actions[layout[slot]] == actions).all()  # every row reads its own response
    assert len(set(slot.tolist())) == 2 + 3 + 1
    # against the pass over every row: the same log-probs and the same gradient, repeated
    # responses weighted differently
    weights = torch.linspace(-1.0, 1.0, b)[:, None]
    logp, _ = score(policy, r)
    (weights * logp).sum().backward()
    got = [p.grad.clone() for p in policy.parameters()]
    policy.zero_grad()
    every = log_softmax(policy(r.prompts, 4, actions, positions)).gather(-1, actions[..., None])
    (weights * every.squeeze(-1) * mask).sum().backward()
    torch.testing.assert_close(logp.detach(), every.squeeze(-1).detach() * mask)
    for mine, full in zip(got, (p.grad for p in policy.parameters()), strict=True):
        torch.testing.assert_close(mine, full, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- maze generators


@pytest.mark.parametrize("name", generators.GENERATORS.names())
def test_generator_carves_a_spanning_tree_from_its_seed(name):
    for h, w, seed in [(2, 2, 0), (3, 5, 1), (6, 4, 2), (7, 7, 3)]:
        maze = generators.generate(name, h, w, np.random.default_rng(seed), "corners")
        assert maze.shape == (2 * h + 1, 2 * w + 1)
        assert int((maze.grid == 0).sum()) == h * w + (h * w - 1)  # cells + one wall per edge
        assert len(simple_paths(maze.grid, maze.start, maze.goal, limit=2)) == 1
        assert replay(maze.grid, maze.start, maze.solution)[-1] == maze.goal
        again = generators.generate(name, h, w, np.random.default_rng(seed), "corners")
        assert again.key == maze.key  # all randomness from the generator given


# ---------------------------------------------------------------- advantage estimators


@pytest.mark.parametrize("name", ADVANTAGES.names())
def test_estimator_shape_finite_equivariant_and_all_equal_groups(name):
    kwargs = estimator_kwargs(name)
    rewards = torch.tensor(
        [[1, 0, 0, 0, 1, 0, 0, 0], [1, 1, 1, 0, 1, 1, 1, 1], [0] * 8, [1] * 8], dtype=torch.float32
    )
    inputs = example_inputs(name, rewards)
    adv = ADVANTAGES.call(name, rewards, **kwargs, **inputs)
    assert adv.shape == rewards.shape and adv.dtype == rewards.dtype
    assert torch.isfinite(adv).all()
    # a group's members are exchangeable: permuting the rewards (and each sample's inputs)
    # permutes the advantages
    perm = torch.tensor([3, 0, 7, 1, 6, 2, 5, 4])
    permuted = {k: v[:, perm] if v.dim() == 2 else v for k, v in inputs.items()}
    again = ADVANTAGES.call(name, rewards[:, perm], **kwargs, **permuted)
    torch.testing.assert_close(again, adv[:, perm])
    # a correct sample never gets less than a wrong one of the same group
    for row in range(2):
        right, wrong = adv[row][rewards[row] > 0], adv[row][rewards[row] == 0]
        assert right.min() >= wrong.max()
    if declares_all_equal_zero(name):  # what the update's row skipping relies on
        assert torch.equal(adv[2:], torch.zeros(2, 8))


# ---------------------------------------------------------------- evaluation metrics


@pytest.mark.parametrize("name", METRICS.names())
def test_metric_is_a_real_number_of_the_set_in_sampled_metrics(name):
    n = 8
    correct = np.array([0, 3, 8, 1, 0, 5])
    value = METRICS.get(name)(correct, n)
    assert is_scalar(value) and np.isfinite(float(value))
    # a metric of the set: the order of its mazes does not matter
    assert float(METRICS.get(name)(correct[::-1].copy(), n)) == float(value)
    assert sampled_metrics(correct, n, [1])[Metric(name)] == float(value)
