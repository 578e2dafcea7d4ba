"""The Gymnasium env: registration, checker, episodes, rendering."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env, data_equivalence

import mazerl
from mazerl.core.errors import ConfigError
from mazerl.envs import generators, layouts
from mazerl.envs.maze import DOWN, LEFT, RIGHT, UP
from mazerl.envs.maze_env import MazeEnv
from mazerl.envs.spec import MazeConfig, MazeSpec, eval_set_spec


@pytest.mark.parametrize("generator", generators.GENERATORS.names())
def test_check_env_every_generator(generator):
    """Clean: Gymnasium's checker raises nothing and warns nothing."""
    for routes in (1, 2):
        env = gym.make(
            mazerl.ENV_ID, generator=generator, size=4, routes=routes, render_mode="rgb_array"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)


@pytest.mark.parametrize("layout", sorted(layouts.shipped_layouts()))
def test_check_env_every_layout(layout):
    env = gym.make(mazerl.ENV_ID, layout=layout, render_mode="ansi")
    check_env(env.unwrapped)


def test_the_env_takes_the_maze_spec_a_run_builds_from_its_settings():
    settings = MazeConfig(height=3, width=6, generator="kruskal", start_goal="random", routes=2)
    spec = MazeSpec.of(settings)
    assert spec == MazeSpec(height=3, width=6, generator="kruskal", start_goal="random", routes=2)
    env = gym.make(mazerl.ENV_ID, maze_spec=spec, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    by_fields = gym.make(
        mazerl.ENV_ID, height=3, width=6, generator="kruskal", start_goal="random", routes=2
    )
    for seed in (0, 1, 2):
        env.reset(seed=seed)
        by_fields.reset(seed=seed)
        drawn = spec.sample(np.random.default_rng(seed))
        assert env.unwrapped.maze.key == by_fields.unwrapped.maze.key == drawn.key
        assert len(drawn.routes) == 2 and drawn.shape == (7, 13)
    vec = gym.make_vec(mazerl.ENV_ID, 3, vectorization_mode="vector_entry_point", maze_spec=spec)
    obs, _ = vec.reset(seed=5)
    assert obs["grid"].shape == (3, 3, 7, 13)
    with pytest.raises(ValueError, match=r"maze_spec or its fields \(size\), not both"):
        gym.make(mazerl.ENV_ID, maze_spec=spec, size=4)
    with pytest.raises(TypeError, match="maze_spec must be a MazeSpec, got 5"):
        MazeEnv(5)


def test_rectangular_maze_and_observation():
    env = gym.make(mazerl.ENV_ID, height=3, width=6, generator="kruskal")
    obs, info = env.reset(seed=1)
    assert obs["grid"].shape == (3, 7, 13)
    maze = env.unwrapped.maze
    assert (obs["grid"][0] == maze.grid).all()
    assert obs["grid"][1, maze.start[0], maze.start[1]] == 1
    assert obs["grid"][2].sum() == 1 and obs["grid"][2][maze.goal] == 1
    assert tuple(obs["position"]) == maze.start
    assert info == {"event": "move", "steps": 0, "route": -1}


@pytest.mark.parametrize("generator", generators.GENERATORS.names())
def test_solution_replay_reaches_goal_with_reward_one(generator):
    env = gym.make(mazerl.ENV_ID, generator=generator, size=6, start_goal="random")
    for seed in range(5):
        env.reset(seed=seed)
        maze = env.unwrapped.maze
        total = 0.0
        for i, a in enumerate(maze.solution):
            _, r, terminated, truncated, info = env.step(a)
            total += r
            assert terminated == (i == len(maze.solution) - 1) and not truncated
        assert total == 1.0 and info["event"] == "goal" and info["route"] == 0


def test_wall_revisit_and_truncation():
    env = gym.make(mazerl.ENV_ID, layout="tiny")  # S at (1,1), path RIGHT RIGHT DOWN DOWN ...
    env.reset()
    _, r, term, _, info = env.step(UP)
    assert (r, term, info["event"]) == (0.0, True, "wall")
    assert tuple(env.unwrapped.position) == (1, 1)
    env.reset()
    env.step(RIGHT)
    _, r, term, _, info = env.step(LEFT)
    assert (r, term, info["event"]) == (0.0, True, "revisit")

    loose = gym.make(mazerl.ENV_ID, layout="tiny", allow_revisits=True, max_steps=3)
    loose.reset()
    for a, expect_trunc in ((RIGHT, False), (LEFT, False), (RIGHT, True)):
        _, r, term, trunc, info = loose.step(a)
        assert not term and trunc == expect_trunc and info["event"] == "move"


def test_detour_is_rewarded_only_with_revisits_allowed():
    detour = (RIGHT, LEFT, RIGHT, RIGHT, DOWN, DOWN, LEFT, LEFT)
    for allow, expected in ((True, (1.0, -1)), (False, (0.0, -1))):
        env = gym.make(mazerl.ENV_ID, layout="tiny", allow_revisits=allow)
        env.reset()
        total = 0.0
        for a in detour:
            _, r, term, _, info = env.step(a)
            total += r
            if term:
                break
        assert (total, info["route"]) == expected


def test_same_seed_same_episode():
    a = gym.make(mazerl.ENV_ID, size=5)
    b = gym.make(mazerl.ENV_ID, size=5)
    rng = np.random.default_rng(0)
    obs_a, _ = a.reset(seed=7)
    obs_b, _ = b.reset(seed=7)
    assert data_equivalence(obs_a, obs_b)
    for _ in range(30):
        act = int(rng.integers(4))
        ra, rb = a.step(act), b.step(act)
        assert data_equivalence(ra, rb)
        if ra[2] or ra[3]:
            ra, rb = a.reset(), b.reset()
            assert data_equivalence(ra, rb)


def test_render_modes():
    env = gym.make(mazerl.ENV_ID, layout="tiny", render_mode="ansi")
    env.reset()
    env.step(RIGHT)
    assert env.render() == "#####\n#S@ #\n### #\n#G  #\n#####\n"
    env = gym.make(mazerl.ENV_ID, size=3, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (7 * 8, 7 * 8, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # wall, open, start, goal


def test_record_video_accepts_frames(tmp_path):
    env = gym.wrappers.RecordVideo(
        gym.make(mazerl.ENV_ID, size=3, render_mode="rgb_array"), str(tmp_path / "videos")
    )
    env.reset(seed=0)
    for a in env.unwrapped.maze.solution:
        env.step(a)
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown generator 'nope'"):
        gym.make(mazerl.ENV_ID, generator="nope")
    with pytest.raises(ValueError, match="render_mode"):
        gym.make(mazerl.ENV_ID, render_mode="video")
    with pytest.raises(ValueError, match="not a shipped layout"):
        gym.make(mazerl.ENV_ID, layout="no-such-layout")


@pytest.mark.parametrize("action", [4, -1, 1.0, "0", None, np.float32(2), np.array([1])])
def test_invalid_actions_raise(action):
    env = MazeEnv(layout="tiny")
    env.reset()
    with pytest.raises(ValueError, match=r"invalid action .*expected an integer in 0\.\.3"):
        env.step(action)
    assert env.step(np.int64(RIGHT))[-1]["event"] == "move"  # numpy integers are actions


def test_step_after_the_episode_ended_raises_reset_needed():
    env = gym.make(mazerl.ENV_ID, layout="tiny", max_steps=2)
    env.reset()
    assert env.step(UP)[2]  # a wall: terminated
    with pytest.raises(ResetNeeded, match="after the episode ended"):
        env.step(RIGHT)
    env.reset()  # a reset starts a fresh episode
    assert env.step(RIGHT)[-1]["event"] == "move"
    assert env.step(RIGHT)[3]  # truncated at max_steps=2 also ends it
    with pytest.raises(ResetNeeded, match="after the episode ended"):
        env.step(DOWN)
    with pytest.raises(ResetNeeded, match="before reset"):
        MazeEnv(layout="tiny").step(RIGHT)


def test_max_steps_is_positive_or_the_default():
    tiny = layouts.load("tiny")
    env = MazeEnv(layout="tiny")
    env.reset()
    assert env.max_steps == tiny.num_open - 1
    env = MazeEnv(layout="tiny", max_steps=1)
    env.reset()
    assert env.step(RIGHT)[3]
    for bad in (0, -3, 1.5, True, "5"):
        with pytest.raises(ConfigError, match=f"max_steps must be a positive integer.*got {bad!r}"):
            MazeEnv(layout="tiny", max_steps=bad)


def test_an_evaluation_sets_spec_is_the_runs_with_the_sets_changes():
    """`eval_set_spec` is the one way from a set config to its mazes: the run's spec with the
    set's changes (every other field carried over), which the env takes as it is."""
    from dataclasses import replace

    from mazerl.eval.config import EvalSetConfig

    spec = MazeSpec(size=4, height=3, width=6, generator="kruskal", start_goal="farthest",
                    routes=2, route_lengths="short_common")  # fmt: skip
    big = eval_set_spec(spec, EvalSetConfig(name="big", size_delta=2, generator="dfs"))
    assert big == replace(spec, height=5, width=8, generator="dfs")
    env = gym.make(mazerl.ENV_ID, maze_spec=big)
    obs, _ = env.reset(seed=0)
    assert obs["grid"].shape == (3, 11, 17)  # 2 * 5 + 1 rows, 2 * 8 + 1 columns
    assert env.unwrapped.maze.key == big.sample(np.random.default_rng(0)).key
    assert len(env.unwrapped.maze.routes) == 2
    assert eval_set_spec(spec, EvalSetConfig(name="id")) is spec
    perfect = replace(spec, routes=1)
    tiny = eval_set_spec(perfect, EvalSetConfig(name="tiny", layout="tiny"))
    assert tiny == replace(perfect, layout="tiny")
    assert [m.key for m in tiny.collection] == [layouts.load("tiny").key]
