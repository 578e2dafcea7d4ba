"""mazerl.llm's text formats and verifier (core install only: no transformers needed)."""

import pytest
import torch

from mazerl.envs.layouts import parse, to_text
from mazerl.llm.objective import focal_advantages
from mazerl.llm.text import answer, answer_prefix, prompt
from mazerl.llm.verifier import compute_score, judge, maze_reward

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
        ("maxrl", "", 0.0, "stopped before the goal"),
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
    assert compute_score("gsm8k", SOLUTION, layout)["reason"] == "not a mazerl data_source: 'gsm8k'"
    bad = compute_score("mazerl-maxrl", SOLUTION, "#S#\n###\n#G#\n")
    assert bad["score"] == 0.0 and bad["reason"].startswith("invalid ground truth:")


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
