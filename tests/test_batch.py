"""The batched stepper produces the single env's transitions, step for step."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given, settings
from hypothesis import strategies as st

import mazerl
from mazerl.core.errors import ConfigError
from mazerl.envs import layouts
from mazerl.envs.batch import DONE_ALREADY, STOP_ACTION, MazeBatch, MazeVectorEnv
from mazerl.envs.generators import GENERATORS
from mazerl.envs.maze import EVENTS, STOP
from mazerl.envs.maze_env import MazeEnv


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 12),
    size=st.integers(2, 5),
    generator=st.sampled_from(GENERATORS.names()),
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


def _pair(n, **options):
    """The same envs through both of `gym.make_vec`'s paths: SyncVectorEnv over `MazeEnv`
    copies, and our `vector_entry_point`."""
    sync = gym.make_vec(mazerl.ENV_ID, num_envs=n, vectorization_mode="sync", **options)
    ours = gym.make_vec(mazerl.ENV_ID, n, vectorization_mode="vector_entry_point", **options)
    assert isinstance(ours, MazeVectorEnv)
    return sync, ours


def _run_in_parallel(sync, ours, seed, steps, solve_bias=0.8):
    """Step both envs with the same actions (mostly each maze's solution, so that goals,
    walls, revisits, truncations and autoresets all happen) and assert identical results:
    observations, rewards, flags, every info key with its `_key` mask and dtype, and renders.
    Returns how often each event happened, and "truncated": how often an episode was."""
    out_s, out_o = sync.reset(seed=seed), ours.reset(seed=seed)
    assert data_equivalence(out_s, out_o, exact=True)
    assert data_equivalence(sync.render(), ours.render(), exact=True)
    rng = np.random.default_rng(seed)
    seen = dict.fromkeys((*EVENTS, "truncated"), 0)
    for _ in range(steps):
        actions = rng.integers(4, size=sync.num_envs)
        for i, env in enumerate(sync.envs):
            solution, t = env.unwrapped.maze.solution, out_s[-1]["steps"][i]
            if t < len(solution) and rng.random() < solve_bias:
                actions[i] = solution[t]
        out_s, out_o = sync.step(actions), ours.step(actions)
        assert data_equivalence(out_s, out_o, exact=True)
        assert data_equivalence(sync.render(), ours.render(), exact=True)
        for event in out_o[-1]["event"]:
            seen[event] += 1
        seen["truncated"] += int(out_o[3].sum())
    return seen


VECTOR_OPTIONS = [
    dict(size=3, generator="wilson"),
    dict(size=3, generator="kruskal", allow_revisits=True, max_steps=5),
    dict(height=2, width=4, generator="dfs", start_goal="random", render_mode="rgb_array"),
    dict(layout="zigzag", render_mode="ansi", max_steps=6),
    dict(layout="zigzag", render_mode="rgb_array", allow_revisits=True, max_steps=20),
    dict(size=4, routes=2, route_lengths="short_common", render_mode="ansi"),
]


@pytest.mark.parametrize("options", VECTOR_OPTIONS, ids=str)
def test_vector_env_matches_sync_vector_env(options):
    """Same options, same transitions, info keys and masks, and frames, through autoresets."""
    sync, ours = _pair(5, **options)
    assert ours.render_mode == sync.render_mode == options.get("render_mode")
    assert ours.metadata["render_modes"] == sync.metadata["render_modes"] == ["ansi", "rgb_array"]
    assert ours.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    seen = _run_in_parallel(sync, ours, seed=3, steps=80)
    assert seen["goal"] + seen["truncated"] >= 5 and seen["wall"] + seen["revisit"] >= 5
    assert (seen["truncated"] > 0) == ("max_steps" in options)


def test_vector_env_info_masks_are_sync_vector_envs():
    sync, ours = _pair(3, size=2)
    _, info = ours.reset(seed=0)
    assert set(info) == {"event", "_event", "steps", "_steps", "route", "_route"}
    assert all(info[f"_{k}"].dtype == bool and info[f"_{k}"].all() for k in ("event", "steps"))
    assert data_equivalence(sync.reset(seed=0), ours.reset(seed=0), exact=True)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), size=st.integers(2, 4), max_steps=st.integers(1, 9))
def test_vector_env_matches_sync_vector_env_any_seed(seed, size, max_steps):
    sync, ours = _pair(4, size=size, max_steps=max_steps, render_mode="ansi")
    _run_in_parallel(sync, ours, seed, steps=25, solve_bias=0.5)


def test_vector_env_refuses_what_the_single_env_refuses():
    for bad, message in (
        (dict(max_steps=0), "max_steps must be a positive integer"),
        (dict(render_mode="video"), "render_mode"),
        (dict(generator="nope"), "unknown generator 'nope'"),
    ):
        with pytest.raises(ValueError, match=message):
            MazeEnv(**bad)
        with pytest.raises(ValueError, match=message):
            MazeVectorEnv(2, **bad)
    with pytest.raises(TypeError, match="colour"):
        MazeVectorEnv(2, colour="red")
    for n in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match=f"num_envs must be a positive integer, got {n}"):
            gym.make_vec(mazerl.ENV_ID, num_envs=n, vectorization_mode="vector_entry_point")


def test_vector_env_refuses_invalid_actions_and_step_before_reset():
    env = MazeVectorEnv(3, layout="tiny")
    with pytest.raises(ResetNeeded, match="before reset"):
        env.step([0, 0, 0])
    env.reset(seed=0)
    for bad in ([4, 0, 0], [0, -1, 0], [0.0, 1.0, 3.0], [0, 1], [[0, 1, 2]]):
        with pytest.raises(ValueError, match=r"expected 3 integers in 0\.\.3"):
            env.step(bad)
    _, _, terminated, _, info = env.step(np.array([0, 3, 3], dtype=np.int32))
    assert terminated.tolist() == [True, False, False] and info["event"][0] == "wall"


def test_batch_max_steps_is_positive_or_default():
    tiny = layouts.load("tiny")
    assert MazeBatch([tiny]).max_steps.tolist() == [tiny.num_open - 1]
    assert MazeBatch([tiny], max_steps=1).step(torch.tensor([3])).truncated.tolist() == [True]
    with pytest.raises(ConfigError, match="got 0"):
        MazeBatch([tiny], max_steps=0)
