"""Braid mazes with K known routes, route ids, exact route masses, tail-miss measurement."""

import json

import numpy as np
import pytest
import torch
from conftest import scalars
from hypothesis import given, settings
from hypothesis import strategies as st

from mazerl.algos.tail_miss import tail_miss
from mazerl.core.errors import ConfigError
from mazerl.envs import layouts
from mazerl.envs.batch import MazeBatch
from mazerl.envs.maze import replay, simple_paths
from mazerl.envs.maze_env import MazeEnv
from mazerl.envs.spec import MazeSpec, MazeTask
from mazerl.eval.evaluate import route_logprobs
from mazerl.eval.routes import rare_routes, tail_miss_stats
from mazerl.policy import build_policy
from mazerl.policy.gru import GruConfig
from mazerl.policy.tokens import N_ACTIONS, encode
from mazerl.train import collect
from mazerl.train.collect import TrainingMazes


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(5, 7),
    data=st.data(),
    profile=st.sampled_from(["equal", "short_common"]),
    seed=st.integers(0, 2**31),
)
def test_braid_mazes_have_exactly_k_simple_routes(size, data, profile, seed):
    # many routes of one equal length need room: up to 4 here (8 is tested below)
    routes = data.draw(st.integers(2, 4 if profile == "equal" else 8))
    maze = MazeSpec(size=size, routes=routes, route_lengths=profile).sample(
        np.random.default_rng(seed)
    )
    found = simple_paths(maze.grid, maze.start, maze.goal, limit=routes + 1)
    assert len(found) == routes and tuple(found) == maze.routes
    lengths = [len(r) for r in maze.routes]
    if profile == "equal":
        assert len(set(lengths)) == 1
    else:
        assert all(other >= lengths[0] + 4 for other in lengths[1:])
    for route in maze.routes:
        cells = replay(maze.grid, maze.start, route)
        assert cells[-1] == maze.goal and len(set(cells)) == len(cells)


def test_eight_equal_routes_and_an_impossible_request():
    maze = MazeSpec(size=6, routes=8).sample(np.random.default_rng(0))
    assert len(simple_paths(maze.grid, maze.start, maze.goal, limit=9)) == 8
    with pytest.raises(ConfigError, match="could not build 5-route braid mazes"):
        MazeSpec(size=4, routes=5).sample(np.random.default_rng(0))


def test_cached_training_mazes_are_the_fresh_draws_generated_once(tmp_path, monkeypatch):
    spec = MazeSpec(size=4, routes=2)
    excluded = {spec.sample(np.random.default_rng(i)).key for i in range(20)}
    fresh = TrainingMazes(MazeTask(spec), excluded, seed=3)
    cache = tmp_path / "train_mazes"
    first = TrainingMazes(MazeTask(spec), excluded, seed=3, cache_dir=cache, block=4)
    # iterations 0-9: three blocks of 4 (the last one partly used)
    drawn = [first.draw(5, it, 0) for it in range(10)]
    assert [[m.key for m in d] for d in drawn] == [
        [m.key for m in fresh.draw(5, it, 0)] for it in range(10)
    ]
    assert len(list(cache.glob("*/seed3_block*.pkl"))) == 3
    assert not excluded & {m.key for d in drawn for m in d}

    calls = []
    real = collect.sample_mazes
    monkeypatch.setattr(collect, "sample_mazes", lambda *a: calls.append(a[3:]) or real(*a))
    again = TrainingMazes(MazeTask(spec), excluded, seed=3, cache_dir=cache, block=4)
    assert [m.key for m in again.draw(5, 9, 0)] == [m.key for m in drawn[9]]
    assert [m.key for m in again.draw(5, 1, 0)] == [m.key for m in drawn[1]]
    pool, fresh_stream = collect.STREAM_TRAIN_POOL, collect.STREAM_TRAIN_MAZES
    assert calls == [(3, pool), (3, fresh_stream, 0, 0)]  # the constructor's checks only
    # prepared, a draw reads no file (the loop prepares before the step, which does no I/O)
    again.prepare(5, 9)  # block 2 is read here
    monkeypatch.setattr(collect, "cached_pickle", lambda *a: pytest.fail("a file read"))
    assert [m.key for m in again.draw(5, 9, 0)] == [m.key for m in drawn[9]]
    monkeypatch.undo()
    monkeypatch.setattr(collect, "sample_mazes", lambda *a: calls.append(a[3:]) or real(*a))
    # later sampling rounds (DAPO refills) are generated, not read; another seed has its files
    again.draw(5, 1, 1)
    TrainingMazes(MazeTask(spec), excluded, seed=4, cache_dir=cache, block=4).draw(5, 1, 0)
    assert calls[2:] == [
        (3, fresh_stream, 1, 1),
        (4, pool),
        (4, fresh_stream, 0, 0),
        *[(4, fresh_stream, it, 0) for it in range(4)],
    ]


def test_route_ids_agree_between_env_stepper_and_exact_masses():
    maze = MazeSpec(size=5, routes=4, route_lengths="short_common").sample(np.random.default_rng(3))
    env = MazeEnv(layout=maze)
    batch = MazeBatch([maze] * len(maze.routes))
    length = max(map(len, maze.routes))
    final = torch.full((len(maze.routes),), -1)
    for t in range(length):
        actions = [r[t] if t < len(r) else 0 for r in maze.routes]
        step = batch.step(torch.tensor(actions))
        final = torch.where(step.route >= 0, step.route, final)
    assert batch.success.all() and final.tolist() == list(range(len(maze.routes)))
    for k, route in enumerate(maze.routes):
        env.reset()
        for a in route:
            _, reward, term, _, info = env.step(a)
        assert (reward, term, info["route"]) == (1.0, True, k)
    # the exact mass of route k is the product of the policy's probabilities along route k
    torch.manual_seed(0)
    policy = build_policy(GruConfig(hidden=16, encoder_layers=2)).eval()
    logp = route_logprobs(policy, [maze], 1.0, "cpu")[0]
    for k, route in enumerate(maze.routes):
        cells = replay(maze.grid, maze.start, route)
        actions = torch.tensor([route])
        positions = torch.tensor([cells[:-1]])
        with torch.no_grad():
            step_logp = torch.log_softmax(policy(encode([maze]), 1, actions, positions), -1)
        by_hand = step_logp[0, torch.arange(len(route)), actions[0]].sum()
        assert logp[k].item() == pytest.approx(by_hand.item(), abs=1e-5)


def test_route_masses_sum_to_the_exact_success_probability():
    """Enumerate every episode of a tiny two-route maze under a random policy: the leaves'
    probabilities sum to 1, and the successful leaves are exactly the routes."""
    maze = layouts.parse("#####\n#S..#\n#.#.#\n#..G#\n#####\n", routes=2)
    torch.manual_seed(1)
    policy = build_policy(GruConfig(hidden=16, encoder_layers=2)).eval()
    prompts = encode([maze])
    leaves = {"success": 0.0, "failure": 0.0}
    successes = {}

    def next_probs(prefix, cells):
        actions = torch.tensor([[*prefix, 0]])
        positions = torch.tensor([cells])
        with torch.no_grad():
            return torch.softmax(policy(prompts, 1, actions, positions)[0, -1].double(), -1)

    def explore(prefix, cells, prob):
        probs = next_probs(prefix, cells)
        for a in range(N_ACTIONS):
            env = MazeEnv(layout=maze)
            env.reset()
            term = trunc = False
            for b in (*prefix, a):
                if b == 4:  # DONE ends the episode without reward
                    term, reward = True, 0.0
                    break
                _, reward, term, trunc, _ = env.step(b)
            p = prob * probs[a].item()
            if reward == 1.0:
                leaves["success"] += p
                successes[(*prefix, a)] = p
            elif term or trunc:
                leaves["failure"] += p
            else:
                explore((*prefix, a), [*cells, tuple(env.position)], p)

    explore((), [maze.start], 1.0)
    assert leaves["success"] + leaves["failure"] == pytest.approx(1.0, abs=1e-9)
    assert set(successes) == set(maze.routes)
    exact = route_logprobs(policy, [maze], 1.0, "cpu")[0].double().exp()
    assert exact.sum().item() == pytest.approx(leaves["success"], rel=1e-5)
    for k, route in enumerate(maze.routes):
        assert exact[k].item() == pytest.approx(successes[route], rel=1e-5)


def test_tail_miss_stats_by_hand():
    # two mazes, groups of 4; maze 0 has a rare route 1, maze 1 has none
    rewards = torch.tensor([[1.0, 0, 1, 0], [1.0, 1, 0, 0]])
    route = torch.tensor([0, -1, 0, -1, 0, 0, -1, -1])  # maze 0 never sampled route 1
    base = np.array([[0.5, 0.01], [0.4, 0.3]])
    valid = np.ones((2, 2), dtype=bool)
    rare = rare_routes(base, valid)
    assert rare.tolist() == [[False, True], [False, False]]  # 0.01 < 0.2 * 0.51
    mass = np.array([[0.6, 0.05], [0.5, 0.3]])
    out = tail_miss_stats(rewards, route, rare, mass)
    assert out["tail_miss_rate"] == 1.0  # maze 0: mixed and no rare route
    assert out["tail_miss_closed_form"] == pytest.approx(tail_miss(4, 0.65, 0.05))
    assert out["train_rare_mass"] == pytest.approx(0.025)


def test_trainer_logs_route_metrics_on_braid_mazes(train, tmp_path):
    _, run = train(
        "maze=braid",
        "maze.size=4",
        "maze.routes=2",
        "train.iterations=3",
        "train.eval_every=0",
        "eval.n=8",
        "eval.sets.0.num_mazes=6",
        "eval.sets.1.num_mazes=4",
        "eval.sets.2.num_mazes=4",
        run_dir=tmp_path / "braid",
    )
    tags = scalars(run)
    for tag in (
        "routes/tail_miss_rate",
        "routes/tail_miss_closed_form",
        "routes/train_rare_mass",
        "routes/train_success_mass",
    ):
        assert [s for s, _ in tags[tag]] == [1, 2, 3]
    final = json.loads((run / "metrics.json").read_text())["final"]
    for k in (
        "rare_mass",
        "common_mass",
        "forgotten",
        "distinct_found",
        "mass_route_0",
        "mass_route_1",
    ):
        assert f"routes/id/{k}" in final
    assert 0 <= final["routes/id/distinct_found"] <= 2
