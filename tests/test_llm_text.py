"""mazerl.llm's text formats and verifier (core install only: no transformers needed)."""

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from mazerl.algos import ADVANTAGES, REWARD_TRANSFORMS, AlgoConfig, FocalConfig, group_advantages
from mazerl.core.config import load_option
from mazerl.core.errors import ConfigError, UserError
from mazerl.envs.layouts import parse, to_text
from mazerl.envs.maze import MOVE_NAMES
from mazerl.envs.spec import MazeSpec
from mazerl.llm.export import records
from mazerl.llm.objective import check_objective, estimator_names, focal_advantages
from mazerl.llm.text import answer, answer_prefix, grid_rows, prompt, sequence
from mazerl.llm.verifier import MAXRL_RULE_SOURCE, compute_score, judge, maze_reward

# one simple path: RIGHT x4, DOWN x2, LEFT x2; a dead end DOWN DOWN from S
DETOUR = parse("#######\n#S....#\n#.###.#\n#.#G..#\n#######\n")
SOLUTION = "RIGHT RIGHT RIGHT RIGHT DOWN DOWN LEFT LEFT"
# S on the grid's edge: UP or LEFT from S leaves the grid
EDGE = parse("S.#\n#.#\n#.G\n")


def test_maxrl_prompt_is_mazerls_token_grid_written_out():
    assert prompt(EDGE, "maxrl") == (
        "<bos> GRID_START START PATH WALL NEWLINE WALL PATH WALL NEWLINE WALL PATH GOAL "
        "GRID_END PATH_START"
    )
    assert answer(EDGE, "maxrl") == "RIGHT DOWN DOWN RIGHT DONE"
    assert answer_prefix(EDGE, "maxrl") == " RIGHT DOWN DOWN RIGHT"


def test_plain_prompt_shows_the_rows_and_asks_for_a_tag():
    text = prompt(DETOUR, "plain")
    assert "\n#######\n#S....#\n#.###.#\n#.#G..#\n#######\n" in text
    assert "<answer>" in text and "entering a cell twice" in text
    assert "entering a cell twice" not in prompt(DETOUR, "plain", allow_revisits=True)
    assert answer(DETOUR, "plain") == f"<answer>{SOLUTION}</answer>"


@pytest.mark.parametrize(
    ("fmt", "completion", "reward", "reason"),
    [
        ("maxrl", f"{SOLUTION} DONE", 1.0, "goal"),
        ("maxrl", f"  {SOLUTION.lower()}\n<eos> whatever", 1.0, "goal"),  # case, whitespace
        ("maxrl", f"{SOLUTION} UP UP junk", 1.0, "goal"),  # never read past the goal
        ("maxrl", "RIGHT RIGHT DONE RIGHT RIGHT", 0.0, "stopped before the goal"),
        ("maxrl", "RIGHT RIGHT", 0.0, "stopped before the goal"),
        ("maxrl", "", 0.0, "empty completion"),
        ("maxrl", " \n ", 0.0, "empty completion"),
        ("plain", "", 0.0, "empty completion"),
        ("maxrl", "DOWN DOWN UP UP " + SOLUTION, 0.0, "revisit"),  # the dead end and back
        ("maxrl", "RIGHT UP", 0.0, "wall"),
        ("maxrl", "RIGHT JUMP RIGHT", 0.0, "malformed: word 2 'JUMP' is not a move"),
        ("maxrl", "RIGHTRIGHT", 0.0, "malformed: word 1 'RIGHTRIGHT' is not a move"),
        ("maxrl", "RIGHT UP JUMP", 0.0, "wall"),  # the episode ended before the bad word
        ("plain", f"Sure. <answer>{SOLUTION}</answer>", 1.0, "goal"),
        ("plain", "<ANSWER> right, right,right , right down down left left", 1.0, "goal"),
        ("plain", f"{SOLUTION}", 0.0, "malformed: no <answer> tag"),
        ("plain", "<answer>RIGHT RIGHT</answer> RIGHT RIGHT", 0.0, "stopped before the goal"),
        (
            "plain",
            "<answer>RIGHT DONE RIGHT</answer>",
            0.0,
            "malformed: word 2 'DONE' is not a move",
        ),
    ],
)
def test_verifier_on_hand_written_answers(fmt, completion, reward, reason):
    (verdict,) = judge([DETOUR], [completion], fmt)
    assert (verdict.reward, verdict.reason) == (reward, reason)


def test_out_of_bounds_is_told_apart_from_a_wall():
    verdicts = judge([EDGE] * 3, ["UP", "LEFT", "DOWN"], "maxrl")
    assert [v.reason for v in verdicts] == ["out of bounds", "out of bounds", "wall"]


def test_allow_revisits_lets_a_detour_reach_the_goal():
    detour = "DOWN DOWN UP UP " + SOLUTION
    assert judge([DETOUR], [detour], "maxrl", allow_revisits=True)[0].reward == 1.0
    assert judge([DETOUR], [detour], "maxrl", allow_revisits=True, max_steps=5)[0].reason == (
        "out of steps"
    )


def test_trl_reward_function_reads_the_dataset_columns():
    layout = to_text(DETOUR)
    logged = {}
    chat = [{"role": "assistant", "content": f"<answer>{SOLUTION}"}]
    rewards = maze_reward(
        completions=[SOLUTION, "RIGHT UP", chat],
        maze=[layout] * 3,
        maze_format=["maxrl", "maxrl", "plain"],
        extra_info=[{"allow_revisits": False}] * 3,
        log_extra=lambda column, values: logged.update({column: values}),
        prompts=["p"] * 3,
        completion_ids=[[1]] * 3,
        solution=["x"] * 3,
    )
    assert rewards == [1.0, 0.0, 1.0]
    assert logged == {"maze_verdict": ["goal", "wall", "goal"]}


def test_verl_compute_score():
    layout = to_text(DETOUR)
    assert compute_score("mazerl-maxrl", SOLUTION, layout, {}) == {"score": 1.0, "reason": "goal"}
    assert compute_score("mazerl-plain", SOLUTION, layout, None)["score"] == 0.0
    revisit = "DOWN DOWN UP UP " + SOLUTION
    assert compute_score("mazerl-maxrl", revisit, layout, {"allow_revisits": True})["score"] == 1.0
    # any data_source whose ground truth is a maze is scored, in the maxrl format
    assert compute_score("someone/mazes", SOLUTION, layout)["score"] == 1.0
    bad = compute_score("mazerl-maxrl", SOLUTION, "#S#\n###\n#G#\n")
    assert bad["score"] == 0.0 and bad["reason"].startswith("unreadable ground truth:")


# EDGE as MaxRL's data writes a maze: the whole token sequence, rows split by NEWLINE, its
# answer after PATH_START (written out by hand)
EDGE_SEQUENCE = (
    "<bos> GRID_START START PATH WALL NEWLINE WALL PATH WALL NEWLINE WALL PATH GOAL GRID_END "
    "PATH_START RIGHT DOWN DOWN RIGHT DONE <eos>"
)
# a braid (two routes) in MaxRL's tokens: RIGHT RIGHT DOWN DOWN or DOWN DOWN RIGHT RIGHT
BRAID_SEQUENCE = (
    "<bos> GRID_START WALL WALL WALL WALL WALL NEWLINE WALL START PATH PATH WALL NEWLINE "
    "WALL PATH WALL PATH WALL NEWLINE WALL PATH PATH GOAL WALL NEWLINE WALL WALL WALL WALL WALL "
    "GRID_END PATH_START RIGHT RIGHT DOWN DOWN DONE <eos>"
)


@pytest.mark.parametrize(
    ("answer", "score", "reason"),
    [
        ("RIGHT DOWN DOWN RIGHT DONE", 1.0, "goal"),
        ("RIGHT DOWN DOWN RIGHT DONE <eos>", 1.0, "goal"),
        ("RIGHT DOWN DOWN RIGHT", 1.0, "goal"),  # mazerl: the goal ends the episode, DONE or not
        ("RIGHT DOWN DOWN DONE", 0.0, "stopped before the goal"),
        ("DOWN", 0.0, "wall"),
        ("UP", 0.0, "out of bounds"),
        ("RIGHT DOWN UP", 0.0, "revisit"),
        ("RIGHT <pad> DOWN DOWN RIGHT", 0.0, "stopped before the goal"),
        ("RIGHT PATH DOWN", 0.0, "malformed: word 2 'PATH' is not a move"),
    ],
)
def test_maxrl_data_is_scored_from_its_token_sequence(answer, score, reason):
    for source in ("maze", "maze_17x17", "mazerl-maxrl", "unknown"):
        assert compute_score(source, answer, EDGE_SEQUENCE, None) == {
            "score": score,
            "reason": reason,
        }


def test_maxrl_braid_scores_both_routes_and_the_sequence_reads_back():
    braid = compute_score("maze", "DOWN DOWN RIGHT RIGHT DONE", BRAID_SEQUENCE)
    assert braid == compute_score("maze", "RIGHT RIGHT DOWN DOWN DONE", BRAID_SEQUENCE)
    assert braid["score"] == 1.0
    assert grid_rows(EDGE_SEQUENCE) == ["S.#", "#.#", "#.G"]
    assert sequence(EDGE) == EDGE_SEQUENCE  # mazerl writes MaxRL's ground truth
    assert grid_rows(BRAID_SEQUENCE) == ["#####", "#S..#", "#.#.#", "#..G#", "#####"]


@pytest.mark.parametrize(
    ("truth", "reason"),
    [
        (None, "expected text, got NoneType"),
        ("72", "<ground truth>:1:1: unknown character '7' (use '#', '.', 'S', 'G')"),
        ("<bos> GRID_START WALL START PATH_START", "no GRID_END after GRID_START"),
        (
            "GRID_START START PATH NEWLINE GOAL GRID_END",
            "the grid is not a rectangle: rows of [1, 2] cells",
        ),
        ("GRID_START START GOAL START GRID_END", "2 START cells, expected one"),
        ("GRID_START START WALL GOAL GRID_END", "the goal is unreachable from the start"),
        ("GRID_START START RIGHT GOAL GRID_END", "grid word 'RIGHT' is not a cell or NEWLINE"),
    ],
)
def test_an_unreadable_ground_truth_scores_0_with_the_reason(truth, reason):
    assert compute_score("maze", "RIGHT DONE", truth, {}) == {
        "score": 0.0,
        "reason": f"unreadable ground truth: {reason}",
    }


def generator_style(maze, newline: str = "after") -> str:
    """`maze` as MaxRL's maze generator writes its ground truth, spelled here from the grid
    itself: `NEWLINE` after every row (`after`), or also before the first (`leading`), or
    twice between rows (`doubled`)."""
    rows = []
    for r, line in enumerate(maze.grid.tolist()):
        cells = ["START" if (r, c) == maze.start else "GOAL" if (r, c) == maze.goal else "WALL"
                 if wall else "PATH" for c, wall in enumerate(line)]  # fmt: skip
        rows.append(" ".join(cells))
    sep = {"after": " NEWLINE ", "leading": " NEWLINE ", "doubled": " NEWLINE NEWLINE "}[newline]
    grid = ("NEWLINE " if newline == "leading" else "") + sep.join(rows) + " NEWLINE"
    moves = " ".join(MOVE_NAMES[m] for m in maze.solution)
    return f"<bos> GRID_START {grid} GRID_END PATH_START {moves} DONE <eos>"


@pytest.mark.parametrize("newline", ["after", "leading", "doubled"])
def test_maxrl_generator_style_ground_truths_score_right(newline):
    """Grids of 7, 11 and 17 cells a side (17x17: MaxRL's maze data) with NEWLINE after every
    row: the solution scores 1, the solution less its last move 0, through verl's
    `compute_score` and TRL's `maze_reward` alike."""
    for size in (3, 5, 8):
        spec = MazeSpec(size=size, generator="prim")
        mazes = [spec.sample(np.random.default_rng(seed)) for seed in range(5)]
        assert {m.shape for m in mazes} == {(2 * size + 1, 2 * size + 1)}
        truths = [generator_style(m, newline) for m in mazes]
        right = [" ".join(MOVE_NAMES[a] for a in m.solution) + " DONE" for m in mazes]
        short = [" ".join(MOVE_NAMES[a] for a in m.solution[:-1]) + " DONE" for m in mazes]
        for truth, good, bad in zip(truths, right, short, strict=True):
            assert compute_score("maze", good, truth) == {"score": 1.0, "reason": "goal"}
            assert compute_score("maze", bad, truth) == {
                "score": 0.0,
                "reason": "stopped before the goal",
            }
        rewards = maze_reward(
            completions=right + short,
            reward_model=[{"style": "rule", "ground_truth": t} for t in truths * 2],
            data_source=["maze"] * 10,
        )
        assert rewards == [1.0] * 5 + [0.0] * 5


def test_a_grid_of_newlines_only_is_unreadable():
    assert compute_score("maze", "DONE", "GRID_START NEWLINE NEWLINE GRID_END") == {
        "score": 0.0,
        "reason": "unreadable ground truth: the grid has no cells",
    }


def test_trl_reward_scores_a_missing_completion_0_as_compute_score_does():
    logged = {}
    rewards = maze_reward(
        completions=[None, [], [{"role": "assistant", "content": None}], SOLUTION],
        maze=[to_text(DETOUR)] * 4,
        maze_format=["maxrl"] * 4,
        log_extra=lambda column, values: logged.update({column: values}),
    )
    assert rewards == [0.0, 0.0, 0.0, 1.0]
    assert logged["maze_verdict"] == ["not text"] * 3 + ["goal"]
    for missing in (None, b"RIGHT RIGHT", 3):
        assert compute_score("m", missing, to_text(DETOUR)) == {"score": 0.0, "reason": "not text"}
    assert compute_score("m", "", to_text(DETOUR))["reason"] == "empty completion"


def test_trl_reward_reads_maxrls_columns():
    logged = {}
    rewards = maze_reward(
        completions=["RIGHT DOWN DOWN RIGHT DONE", "DOWN", "RIGHT DONE"],
        reward_model=[{"style": "rule", "ground_truth": EDGE_SEQUENCE}] * 2 + [{}],
        data_source=["maze"] * 3,
        extra_info=[{"split": "train", "index": i} for i in range(3)],
        log_extra=lambda column, values: logged.update({column: values}),
    )
    assert rewards == [1.0, 0.0, 0.0]
    expected = ["goal", "wall", "unreadable ground truth: expected text, got NoneType"]
    assert logged == {"maze_verdict": expected}


def test_maxrl_export_round_trip_scores_its_own_rows():
    rows = records([EDGE, DETOUR], "maxrl", "train", "hand")
    assert rows[0]["reward_model"]["ground_truth"] == EDGE_SEQUENCE
    assert (
        rows[0]["extra_info"]["question"] == rows[0]["prompt"] == EDGE_SEQUENCE.split(" RIGHT")[0]
    )
    assert rows[0]["extra_info"]["answer"] == EDGE_SEQUENCE
    assert rows[0]["data_source"].startswith("maze")  # MaxRL's verl scores `maze*` sources
    for row in rows:
        truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
        assert compute_score(row["data_source"], row["solution"], truth, info)["score"] == 1.0
        assert compute_score(row["data_source"], "LEFT DONE", truth, info)["score"] == 0.0


def test_focal_advantages_by_hand():
    # group 1: 1 of 4 correct, mu 0.25; GRPO A = (r - 0.25) / std, std = sqrt(0.25) = 0.5
    # (unbiased: sum (r - mean)^2 / 3 = (0.5625 + 3 * 0.0625) / 3 = 0.25), g = 0.75^0.5
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    adv, g = focal_advantages(rewards, "grpo", 0.5)
    expected = torch.tensor([1.5, -0.5, -0.5, -0.5]) * 0.75**0.5
    assert torch.allclose(adv[0], expected, atol=1e-5)
    assert torch.equal(adv[1], torch.zeros(4))
    assert torch.allclose(g.squeeze(1), torch.tensor([0.75**0.5, 0.0]))
    adv_rloo, _ = focal_advantages(rewards, "rloo", 0.0)  # r - mean of the others
    assert torch.allclose(adv_rloo[0], torch.tensor([1.0, -1 / 3, -1 / 3, -1 / 3]))
    # W-REINFORCE's weights as hyperparameters: +0.1 correct, -1 wrong, g = 0.75^1 and 0^1
    weights = {"positive_weight": 0.1, "negative_weight": 1.0}
    adv_w, _ = focal_advantages(rewards, "w_reinforce", 1.0, **weights)
    assert torch.allclose(
        adv_w, torch.tensor([[0.1, -1.0, -1.0, -1.0]]) * torch.tensor([[0.75], [0.0]])
    )


def mazerl_method(name: str) -> AlgoConfig:
    """mazerl's own method `conf/algo/<name>.yaml` (what `mazerl-train algo=<name>` runs)."""
    return AlgoConfig(**OmegaConf.to_container(load_option("algo", name)))


@pytest.mark.parametrize("transform", REWARD_TRANSFORMS.names())
@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0])
def test_a_reward_transform_in_the_bridge_is_mazerls_method(transform, gamma):
    """PKPO (each reward transform) by name in the bridge: the transform, then its method's
    advantage estimator, then the focal weight, equal to mazerl's own `group_advantages` with
    `conf/algo/<name>.yaml` on the same groups (every count of correct samples of 8)."""
    method = mazerl_method(transform)
    assert transform in estimator_names() and method.reward_transform == transform
    g = torch.Generator().manual_seed(0)
    rewards = (torch.rand(64, 8, generator=g) < torch.linspace(0, 1, 64)[:, None]).float()
    assert set(rewards.sum(1).int().tolist()) == set(range(9))
    for kwargs in (method.reward_transform_kwargs, {"k": 2}):
        ours, _ = focal_advantages(rewards, transform, gamma, **kwargs)
        algo = AlgoConfig(**{**vars(method), "reward_transform_kwargs": kwargs})
        theirs, _ = group_advantages(rewards, algo, FocalConfig(gamma=gamma))
        torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=0)
        plain, _ = focal_advantages(rewards, method.advantage, gamma)  # without the transform
        assert (ours - plain).abs().max() > 0.1


@pytest.mark.parametrize(
    ("algo", "gamma", "kwargs", "message"),
    [
        (
            "ppo",
            0.5,
            {},
            f"unknown advantage estimator 'ppo'; known: {', '.join(estimator_names())}",
        ),
        (
            "pkpo",
            0.5,
            {"k": 2, "x": 1},
            "reward transform 'pkpo' takes no argument 'x'; its arguments: k",
        ),
        (
            "grpo",
            0.5,
            {"k": 4},
            "advantage estimator 'grpo' takes no argument 'k'; its arguments: eps",
        ),
        ("grpo", float("nan"), {}, "focal gamma must be a finite number >= 0, got nan"),
    ],
)
def test_check_objective_names_what_is_wrong(algo, gamma, kwargs, message):
    with pytest.raises(ConfigError) as e:
        check_objective(algo, gamma, kwargs)
    assert str(e.value) == message


def test_a_methods_hyperparameters_come_from_its_file_under_the_users():
    """passk and pkpo: k = 4 in conf/algo/{passk,pkpo}.yaml, W-REINFORCE 0.1 and 1 (its
    file), GRPO none; an argument given replaces the file's value only."""
    assert check_objective("passk", 0.5, {}) == {"k": 4}
    assert check_objective("pkpo", 0.5, {}) == {"k": 4}
    assert check_objective("pkpo", 0.5, {"k": 8}) == {"k": 8}
    assert check_objective("grpo", 0.5, {}) == {}
    assert check_objective("w_reinforce", 0.0, {"positive_weight": 0.5}) == {
        "positive_weight": 0.5,
        "negative_weight": 1.0,
    }


def test_an_estimator_without_a_method_file_names_the_missing_argument(monkeypatch):
    """A plug-in's estimator with a required argument and no conf/algo file: the line names
    the argument and --algo-arg."""

    def needs_k(rewards, k):
        return rewards * k

    monkeypatch.setitem(ADVANTAGES._entries, "needs_k_test", needs_k)
    with pytest.raises(ConfigError) as e:
        check_objective("needs_k_test", 0.5, {})
    assert str(e.value) == (
        "advantage estimator 'needs_k_test' needs the argument k: give it with --algo-arg k=VALUE"
    )
    assert check_objective("needs_k_test", 0.5, {"k": 2}) == {"k": 2}


def test_only_the_llm_package_and_its_app_import_the_extra():
    import ast
    from pathlib import Path

    import mazerl

    root = Path(mazerl.__file__).parent
    extra = {"transformers", "trl", "datasets", "accelerate", "verl", "tokenizers"}
    allowed = {root / "apps" / "llm.py"}
    wrong = []
    for path in root.rglob("*.py"):
        if root / "llm" in path.parents or path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            wrong += [f"{path.name}: {n}" for n in names if n.split(".")[0] in extra]
    assert not wrong


def test_bench_row_is_skipped_with_a_note_without_the_extra(monkeypatch):
    import sys

    from mazerl.apps.bench import table, trl_figure

    monkeypatch.setitem(sys.modules, "trl", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "mazerl.llm.speed", raising=False)
    row = trl_figure(prompts=2, group=2, steps=1, pairs=1)
    assert row["skipped"].startswith("needs the extra: pip install 'mazerl[llm]'")
    assert "skipped: needs the extra" in table([row])


STEP = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}


def maxrl_judge(solution: str, truth: str) -> float:
    """MaxRL's `judge_maze` (`verl/utils/reward_score/maze.py` of tajwarfahim/maxrl) as read
    there, written out on its own terms, apart from mazerl's stepper: the words before the
    first `DONE` (none: 0) must each be UP, DOWN, LEFT or RIGHT as written (else 0); the grid
    is the words between GRID_START and GRID_END, a NEWLINE ending a row (empty rows skipped);
    the moves are walked from START: leaving the grid or entering a WALL scores 0, the first
    arrival at GOAL 1, moves that run out before it 0. Revisits are allowed."""
    words = solution.split()
    if "DONE" not in words:
        return 0.0
    moves = words[: words.index("DONE")]
    if any(m not in STEP for m in moves):
        return 0.0
    tokens = truth.split()
    rows, row = [], []
    for word in tokens[tokens.index("GRID_START") + 1 : tokens.index("GRID_END")]:
        if word != "NEWLINE":
            row.append(word)
        elif row:
            rows, row = [*rows, row], []
    rows += [row] if row else []
    cells = {x: (r, c) for r, line in enumerate(rows) for c, x in enumerate(line)}
    (r, c), goal = cells["START"], cells["GOAL"]
    for move in moves:
        r, c = r + STEP[move][0], c + STEP[move][1]
        if not (0 <= r < len(rows) and 0 <= c < len(rows[0])) or rows[r][c] == "WALL":
            return 0.0
        if (r, c) == goal:
            return 1.0
    return 0.0


# EDGE (S . # / # . # / # . G), its route RIGHT DOWN DOWN RIGHT: (answer, MaxRL's score,
# mazerl's verdict), each worked out by hand on the grid
RULE_CASES = [
    ("RIGHT DOWN DOWN RIGHT DONE", 1.0, (1.0, "goal")),
    ("  RIGHT DOWN DOWN RIGHT DONE <eos>", 1.0, (1.0, "goal")),
    ("RIGHT DOWN DOWN RIGHT DONE DONE", 1.0, (1.0, "goal")),
    ("RIGHT DOWN DOWN RIGHT", 0.0, (1.0, "goal")),  # MaxRL: DONE required
    ("RIGHT DOWN DOWN RIGHT <eos>", 0.0, (1.0, "goal")),
    ("RIGHT DOWN UP DOWN DOWN RIGHT DONE", 1.0, (0.0, "revisit")),  # MaxRL: revisits allowed
    ("RIGHT LEFT RIGHT DOWN DOWN RIGHT DONE", 1.0, (0.0, "revisit")),
    ("RIGHT DOWN DOWN RIGHT UP DONE", 1.0, (1.0, "goal")),  # the first arrival wins
    ("RIGHT DOWN DOWN RIGHT LEFT LEFT DONE", 1.0, (1.0, "goal")),
    ("RIGHT DOWN DOWN RIGHT junk DONE", 0.0, (1.0, "goal")),  # MaxRL reads up to DONE
    ("right down down right DONE", 0.0, (1.0, "goal")),  # MaxRL: upper case only
    ("RIGHT DOWN <pad> DOWN RIGHT DONE", 0.0, (0.0, "stopped before the goal")),
    ("RIGHT DOWN DONE DOWN RIGHT", 0.0, (0.0, "stopped before the goal")),
    ("DONE RIGHT DOWN DOWN RIGHT", 0.0, (0.0, "stopped before the goal")),
    ("UP DONE", 0.0, (0.0, "out of bounds")),
    ("DOWN DONE", 0.0, (0.0, "wall")),
    ("RIGHT RIGHT DONE", 0.0, (0.0, "wall")),
    ("", 0.0, (0.0, "empty completion")),
]


@pytest.mark.parametrize(("answer_", "maxrl", "mazerl"), RULE_CASES)
def test_maxrls_rule_where_asked_and_mazerls_by_default(answer_, maxrl, mazerl):
    """MaxRL's rule by `extra_info["rule"]`, by the data_source `mazerl-maxrl-judge` and in
    TRL's `maze_reward`; mazerl's otherwise. Both against the hand-worked scores, and MaxRL's
    against the reading of its judge."""
    assert maxrl_judge(answer_, EDGE_SEQUENCE) == maxrl
    for source, info in (("maze", {"rule": "maxrl"}), (MAXRL_RULE_SOURCE, None)):
        assert compute_score(source, answer_, EDGE_SEQUENCE, info)["score"] == maxrl
    assert maze_reward(
        completions=[answer_],
        reward_model=[{"ground_truth": EDGE_SEQUENCE}],
        data_source=["maze"],
        extra_info=[{"rule": "maxrl"}],
    ) == [maxrl]
    default = compute_score("maze", answer_, EDGE_SEQUENCE, {"allow_revisits": False})
    assert (default["score"], default["reason"]) == mazerl


def test_maxrls_rule_agrees_with_its_judge_on_many_answers():
    """2,000 answers on ten 5x5-cell mazes and a braid, MaxRL's ground truths: random words
    (moves, DONE, lower case, special tokens), and each route with a detour (a revisit) spliced
    in or junk after the goal; scored as the reading of MaxRL's judge scores them."""
    rng = np.random.default_rng(0)
    spec = MazeSpec(size=5, generator="prim")
    mazes = [spec.sample(np.random.default_rng(seed)) for seed in range(10)]
    truths = [sequence(m) for m in mazes] + [BRAID_SEQUENCE]
    routes = [[MOVE_NAMES[a] for a in m.solution] for m in mazes] + [["RIGHT"] * 2 + ["DOWN"] * 2]
    words = [*MOVE_NAMES, *MOVE_NAMES, "DONE", "right", "<eos>", "PATH"]
    back = {"UP": "DOWN", "DOWN": "UP", "LEFT": "RIGHT", "RIGHT": "LEFT"}
    cases = []
    for _ in range(2000):
        i = int(rng.integers(len(truths)))
        route = list(routes[i])
        kind = rng.integers(3)
        if kind == 0:
            answer_ = list(rng.choice(words, size=int(rng.integers(0, 16))))
        else:
            cut = int(rng.integers(1, len(route)))
            step = route[cut - 1]
            answer_ = [*route[:cut], back[step], step, *route[cut:]]  # back and forth: a revisit
            answer_ += ["DONE"] if kind == 1 else [str(rng.choice(words)), "DONE"]
        cases.append((" ".join(answer_), truths[i]))
    expected = [maxrl_judge(a, t) for a, t in cases]
    got = maze_reward(  # all at once (TRL's entry point); compute_score on a part of them
        completions=[a for a, _ in cases],
        reward_model=[{"ground_truth": t} for _, t in cases],
        data_source=["maze"] * len(cases),
        extra_info=[{"rule": "maxrl"}] * len(cases),
    )
    assert got == expected
    some = [compute_score("maze", a, t, {"rule": "maxrl"})["score"] for a, t in cases[:100]]
    assert some == expected[:100]
    assert 300 < sum(expected) < 1900  # both outcomes, many times


def test_export_with_maxrls_rule_marks_its_rows():
    rows = records([EDGE], "maxrl", "train", "hand", rule="maxrl")
    row = rows[0]
    assert row["data_source"] == MAXRL_RULE_SOURCE and row["extra_info"]["rule"] == "maxrl"
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    assert compute_score(row["data_source"], row["solution"], truth, info)["score"] == 1.0
    no_done = row["solution"].removesuffix(" DONE")
    assert compute_score(row["data_source"], no_done, truth, info) == {
        "score": 0.0,
        "reason": "no DONE",
    }
    assert records([EDGE], "maxrl", "train", "hand")[0]["extra_info"]["rule"] == "mazerl"
    with pytest.raises(UserError, match="MaxRL's rule reads the maxrl format only, not plain"):
        records([EDGE], "plain", "train", "hand", rule="maxrl")
    with pytest.raises(UserError, match="unknown rule 'x'; known: mazerl, maxrl"):
        records([EDGE], "maxrl", "train", "hand", rule="x")


def test_an_lm_evaluation_is_keyed_by_metric_and_written_under_the_names_on_disk(tmp_path):
    """The language-model evaluation's values are keyed by `Metric`; `write_run` writes the
    names `metrics.json` and `eval/step_0000000.json` have always held, and the printed line
    shows the `pass` and `exact_pass` values, standard errors left out."""
    import json

    from mazerl.apps.llm import figures
    from mazerl.eval.evaluate import SetResult
    from mazerl.eval.metric_names import Metric
    from mazerl.llm.exact import LmSetResult, write_run

    pass1, exact4, gap = (
        Metric("pass", k=1),
        Metric("exact_pass", k=4),
        Metric("noncanonical_success_rate"),
    )
    values = {pass1: 0.5, pass1.se(): 0.25, exact4: 0.75, exact4.se(): 0.125, gap: 0.0}
    per = {"successes": [1, 3], "n": 4, "exact_p": [0.25, 0.5]}
    result = LmSetResult(values, per, mazes={"sampled": 2, "exact": 5}, max_new_tokens=9)
    write_run(tmp_path, {"id": result}, {"command": "eval"}, ["model=m"])
    final = json.loads((tmp_path / "metrics.json").read_text())["final"]
    assert final == {
        "eval/id/pass@1": 0.5,
        "eval/id/pass@1_se": 0.25,
        "eval/id/exact_pass@4": 0.75,
        "eval/id/exact_pass@4_se": 0.125,
        "eval/id/noncanonical_success_rate": 0.0,
    }
    saved = json.loads((tmp_path / "eval" / "step_0000000.json").read_text())
    assert saved == {
        "id": {
            "pass@1": 0.5,
            "pass@1_se": 0.25,
            "exact_pass@4": 0.75,
            "exact_pass@4_se": 0.125,
            "noncanonical_success_rate": 0.0,
            "mazes": {"sampled": 2, "exact": 5},
            "max_new_tokens": 9,
            "per_maze": per,
        }
    }
    # read back, the set's metrics are metrics.json's (its facts, `mazes` and the length
    # limit, are none)
    back = SetResult.from_json(saved["id"]).on_set("id")
    assert {m.name: v for m, v in back.items()} == final
    assert (
        figures(result, 4)
        == "sampled (2 mazes, n 4): pass@1 0.500; exact (5 mazes): exact_pass@4 0.750"
    )
