"""The batched stepper produces the single env's transitions, step for step."""

import gymnasium as gym
import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import mazerl
from mazerl.envs import layouts
from mazerl.envs.batch import DONE_ALREADY, STOP_ACTION, MazeBatch, MazeVectorEnv
from mazerl.envs.maze_env import EVENTS, STOP, MazeEnv


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 12),
    size=st.integers(2, 5),
    generator=st.sampled_from(["dfs", "prim", "kruskal", "wilson"]),
    allow_revisits=st.booleans(),
    solve_bias=st.floats(0, 1),
)
def test_batch_matches_single_env(seed, n, size, generator, allow_revisits, solve_bias):
    """Random action sequences (biased towards the solution so that goals are reached too)."""
    rng = np.random.default_rng(seed)
    envs = [
        MazeEnv(size=size, generator=generator, start_goal="random", allow_revisits=allow_revisits)
        for _ in range(n)
    ]
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    batch = MazeBatch([env.maze for env in envs], allow_revisits=allow_revisits)
    alive = [True] * n
    for t in range(4 * size * size + 2):
        actions = []
        for env in envs:
            sol = env.maze.solution
            if t < len(sol) and rng.random() < solve_bias:
                actions.append(sol[t])
            else:
                actions.append(int(rng.integers(4)))
        step = batch.step(torch.tensor(actions))
        for i, env in enumerate(envs):
            if not alive[i]:
                assert step.event[i] == DONE_ALREADY and step.reward[i] == 0
                continue
            _, r, term, trunc, info = env.step(actions[i])
            assert step.reward[i].item() == r
            assert step.terminated[i].item() == term and step.truncated[i].item() == trunc
            assert EVENTS[step.event[i]] == info["event"]
            assert step.route[i].item() == info["route"]
            assert tuple(batch.pos[i].tolist()) == tuple(env.position)
            alive[i] = not (term or trunc)
        if not any(alive):
            break
    assert batch.done.tolist() == [not a for a in alive]


def test_stop_action_and_mixed_shapes():
    mazes = [layouts.load("tiny"), layouts.load("spiral")]  # 5x5 padded to 11x11
    batch = MazeBatch(mazes)
    step = batch.step(torch.tensor([STOP_ACTION, 3]))
    assert step.event.tolist() == [STOP, 0] and step.terminated.tolist() == [True, False]
    assert step.reward.tolist() == [0.0, 0.0]
    for a in mazes[1].solution[1:]:
        step = batch.step(torch.tensor([0, a]))
    assert step.reward.tolist() == [0.0, 1.0] and batch.success.tolist() == [False, True]
    # the padding outside the 5x5 maze is wall
    batch.reset()
    assert batch.walls.shape == (2, 11, 11) and batch.walls[0, 5:, :].all()


def test_route_ids_in_multi_route_maze():
    two = layouts.parse("#####\n#S..#\n#.#.#\n#..G#\n#####\n", routes=2)
    batch = MazeBatch([two, two])
    routes = [two.routes[1], two.routes[0]]
    for t in range(4):
        step = batch.step(torch.tensor([routes[0][t], routes[1][t]]))
    assert step.route.tolist() == [1, 0]


def _sync_env(n, **kw):
    return gym.vector.SyncVectorEnv([lambda: gym.make(mazerl.ENV_ID, **kw) for _ in range(n)])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), size=st.integers(2, 4))
def test_vector_env_matches_sync_vector_env_with_autoreset(seed, size):
    n = 6
    sync = _sync_env(n, size=size, generator="wilson")
    ours = gym.make_vec(
        mazerl.ENV_ID,
        num_envs=n,
        vectorization_mode="vector_entry_point",
        size=size,
        generator="wilson",
    )
    assert isinstance(ours, MazeVectorEnv)
    obs_s, _ = sync.reset(seed=seed)
    obs_o, _ = ours.reset(seed=seed)
    assert all(np.array_equal(obs_s[k], obs_o[k]) for k in obs_s)
    rng = np.random.default_rng(seed)
    for _ in range(60):  # random actions end episodes fast, so autoreset runs many times
        actions = rng.integers(4, size=n)
        out_s = sync.step(actions)
        out_o = ours.step(actions)
        for k in obs_s:
            assert np.array_equal(out_s[0][k], out_o[0][k])
        for a, b in zip(out_s[1:4], out_o[1:4], strict=True):
            assert np.array_equal(a, b)
        assert list(out_s[4]["event"]) == list(out_o[4]["event"])


def test_vector_env_with_a_fixed_layout_matches_sync_vector_env():
    """The vectorised in-place autoreset of fixed mazes gives the same transitions."""
    n = 8
    sync = _sync_env(n, layout="zigzag")
    ours = MazeVectorEnv(n, layout="zigzag")
    obs_s, _ = sync.reset(seed=0)
    obs_o, _ = ours.reset(seed=0)
    assert all(np.array_equal(obs_s[k], obs_o[k]) for k in obs_s)
    solution = layouts.load("zigzag").solution
    rng = np.random.default_rng(0)
    goals = 0
    for t in range(200):  # mostly the solution, so episodes reach the goal and reset too
        actions = np.where(
            rng.random(n) < 0.97, solution[t % len(solution)], rng.integers(4, size=n)
        )
        out_s, out_o = sync.step(actions), ours.step(actions)
        for k in obs_s:
            assert np.array_equal(out_s[0][k], out_o[0][k])
        for a, b in zip(out_s[1:4], out_o[1:4], strict=True):
            assert np.array_equal(a, b)
        goals += int(out_o[1].sum())
    assert goals > 0
