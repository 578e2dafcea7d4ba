"""The maze verifier on model text, with the signatures TRL and verl call.

A completion is read as moves (`mazerl.llm.text.read_moves`) and stepped by mazerl's own
batched stepper (`MazeBatch`, the rule every mazerl policy is scored by): reward 1 when the
episode reaches the goal, else 0. The episode ends at the goal, a wall (stepping off the grid
counts as a wall, reported as `out of bounds`), a revisit (unless `allow_revisits`), or after
`max_steps`; moves after the end are never read. A completion whose moves run out first scores
0: `stopped before the goal` after a stop word or the end of the text, or its reading's
`malformed: ...` reason; a completion with no words is an `empty completion`, one that is not
text (None, bytes, a message without text) `not text`. Nothing raises on model output: every
completion gets a reward and a reason that can be logged.

The ground truth is any text `maze_of` reads: mazerl's layout text (the `maze` column of
`mazerl-llm export`) or MaxRL's token sequence (`<bos> GRID_START ... GRID_END PATH_START
<moves> DONE <eos>`, the ground truth of MaxRL's released maze data and of mazerl's `maxrl`
export). One that is not a maze scores 0 with the reason `unreadable ground truth: ...`.

- TRL: `maze_reward(completions, maze, maze_format, ...)` (a `reward_funcs` entry; TRL passes
  the dataset's columns): mazerl's columns `maze` and `maze_format`, or verl's `reward_model`
  (its `ground_truth`) and `data_source` as MaxRL's data has them; the reasons go to TRL's
  completion table through its `log_extra`.
- verl: `compute_score(data_source, solution_str, ground_truth, extra_info)` returns
  `{"score", "reason"}` (verl logs the extra key). The answer format is `plain` for
  `data_source` `mazerl-plain`, else `maxrl`: `mazerl-maxrl`, MaxRL's `maze...` sources or any
  other source whose ground truth is a maze.

The rule is mazerl's unless a row asks for MaxRL's (`rule_of`: `extra_info["rule"] =
"maxrl"`, or the data_source `mazerl-maxrl-judge`; `mazerl-llm export --rule maxrl` writes
both). The two differ where MaxRL's `judge_maze` (`judge_maxrl`) scores 0 an answer without
`DONE` or with any other word before it (even after the goal), and scores a route that
revisits a cell; mazerl ends the episode at the goal (`DONE` not needed, nothing after it
read) and at a revisit (unless `allow_revisits`).
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from mazerl.envs.batch import STOP_ACTION, MazeBatch
from mazerl.envs.layouts import MAX_ROUTES, MAX_SIDE, parse
from mazerl.envs.maze import (
    DELTAS,
    EVENTS,
    GOAL,
    MOVE,
    MOVE_NAMES,
    STOP,
    WALL,
    Maze,
    replay,
    simple_paths,
)
from mazerl.llm.text import FORMATS, grid_rows, read_moves

DATA_SOURCE = {fmt: f"mazerl-{fmt}" for fmt in FORMATS}  # verl's data_source column
RULES = ("mazerl", "maxrl")  # mazerl's rule (the default) and MaxRL's `judge_maze`
# the data_source of a `maxrl` export scored by MaxRL's rule (`mazerl-llm export --rule maxrl`)
MAXRL_RULE_SOURCE = "mazerl-maxrl-judge"


@dataclass(frozen=True)
class Verdict:
    """reward: 1.0 or 0.0; reason: `goal`, `wall`, `out of bounds`, `revisit`, `out of steps`,
    `stopped before the goal`, `empty completion`, `not text`, `no DONE` (MaxRL's rule),
    `malformed: ...` or `unreadable ground truth: ...`."""

    reward: float
    reason: str


def judge(
    mazes: Sequence[Maze],
    texts: Sequence[str],
    fmt: str,
    allow_revisits: bool = False,
    max_steps: int | None = None,
) -> list[Verdict]:
    """One `Verdict` per `(maze, completion text)` pair by mazerl's rule, all stepped together;
    a text with no words is an `empty completion`."""
    readings = [read_moves(text, fmt) for text in texts]
    if not readings:
        return []
    batch = MazeBatch(mazes, allow_revisits=allow_revisits, max_steps=max_steps)
    length = max(len(r.moves) for r in readings)
    moves = torch.full((len(readings), length + 1), STOP_ACTION)  # a final stop for every row
    for i, r in enumerate(readings):
        moves[i, : len(r.moves)] = torch.tensor(r.moves, dtype=torch.long)
    for t in range(length + 1):
        batch.step(moves[:, t])
        if bool(batch.done.all()):
            break
    out = []
    for i, event in enumerate(batch.event.tolist()):
        if event == GOAL:
            out.append(Verdict(1.0, "goal"))
        elif not texts[i].strip():
            out.append(Verdict(0.0, "empty completion"))
        elif event == STOP:
            stop = readings[i].stop
            out.append(
                Verdict(0.0, stop if stop.startswith("malformed") else "stopped before the goal")
            )
        elif event == WALL and off_grid(mazes[i], readings[i].moves):
            out.append(Verdict(0.0, "out of bounds"))
        else:
            out.append(Verdict(0.0, "out of steps" if event == MOVE else EVENTS[event]))
    return out


def judge_maxrl(mazes: Sequence[Maze], texts: Sequence[str]) -> list[Verdict]:
    """One `Verdict` per `(maze, completion text)` pair by MaxRL's rule (its verl reward,
    `verl/utils/reward_score/maze.py: judge_maze`, tajwarfahim/maxrl).

    The words before the first `DONE` are the answer: none (`no DONE`) scores 0, and so does
    any of them that is not a move word as written, upper case (`malformed: ...`), even after
    the goal. The moves are stepped from the start with revisits allowed; the first arrival
    at the goal scores 1 (later moves are not stepped), a wall or the grid's edge 0, moves
    that run out before the goal 0. Nothing after `DONE` is read.
    """
    out: list[Verdict | None] = [None] * len(texts)
    answers = {}
    for i, text in enumerate(texts):
        words = text.split()
        if not words:
            out[i] = Verdict(0.0, "empty completion")
        elif "DONE" not in words:
            out[i] = Verdict(0.0, "no DONE")
        else:
            moves = words[: words.index("DONE")]
            bad = next((j for j, w in enumerate(moves) if w not in MOVE_NAMES), None)
            if bad is None:
                answers[i] = moves
            else:
                word = moves[bad][:20]
                out[i] = Verdict(0.0, f"malformed: word {bad + 1} {word!r} is not a move")
    if answers:
        rows = list(answers)
        limit = max(len(answers[i]) for i in rows) + 1  # never cut short: MaxRL has no limit
        found = judge(
            [mazes[i] for i in rows],
            [" ".join([*answers[i], "DONE"]) for i in rows],
            "maxrl",
            allow_revisits=True,
            max_steps=limit,
        )
        for i, verdict in zip(rows, found, strict=True):
            out[i] = verdict
    return out


def off_grid(maze: Maze, moves: Sequence[int]) -> bool:
    """Whether the move that hit a wall left the grid (`replay` stops before the wall)."""
    cells = replay(maze.grid, maze.start, tuple(moves))
    (r, c), (dr, dc) = cells[-1], DELTAS[moves[len(cells) - 1]]
    return not (0 <= r + dr < maze.shape[0] and 0 <= c + dc < maze.shape[1])


def format_of_source(data_source) -> str:
    """The answer format of a verl `data_source`: `plain` for `mazerl-plain`, else `maxrl`."""
    return "plain" if data_source == DATA_SOURCE["plain"] else "maxrl"


def maze_of(truth) -> Maze:
    """A maze from a ground truth: mazerl's layout text, or a MaxRL token sequence (any text
    with `GRID_START`; `text.grid_rows`). A `ValueError` says why it is not a maze."""
    if not isinstance(truth, str):
        raise ValueError(f"expected text, got {type(truth).__name__}")
    return maze_of_text(truth)


@functools.lru_cache(maxsize=4096)
def maze_of_text(text: str) -> Maze:
    """`maze_of` for text, parsed and validated once."""
    if "GRID_START" in text:
        return maze_of_rows(grid_rows(text))
    return parse(text, "<ground truth>")


def maze_of_rows(rows: list[str]) -> Maze:
    """A maze from layout rows (`#`, `.`, `S`, `G`) with however many routes it has, up to
    `MAX_ROUTES` (`layouts.parse` wants their number declared, as mazerl's own layouts do)."""
    if not rows:
        raise ValueError("the grid has no cells")
    widths = sorted({len(row) for row in rows})
    if widths[0] == 0 or len(widths) > 1:
        raise ValueError(f"the grid is not a rectangle: rows of {widths} cells")
    if max(len(rows), widths[0]) > MAX_SIDE:
        raise ValueError(f"the grid is {len(rows)}x{widths[0]}; at most {MAX_SIDE}x{MAX_SIDE}")
    grid = np.array([[ch == "#" for ch in row] for row in rows], dtype=np.uint8)
    ends = []
    for ch, word in (("S", "START"), ("G", "GOAL")):
        cells = [(r, c) for r, row in enumerate(rows) for c, x in enumerate(row) if x == ch]
        if len(cells) != 1:
            raise ValueError(f"{len(cells)} {word} cells, expected one")
        ends.append(cells[0])
    routes = simple_paths(grid, ends[0], ends[1], limit=MAX_ROUTES + 1)
    if not routes:
        raise ValueError("the goal is unreachable from the start")
    if len(routes) > MAX_ROUTES:
        raise ValueError(f"more than {MAX_ROUTES} routes from start to goal")
    return Maze(grid, ends[0], ends[1], tuple(routes), name="ground truth")


def ground_truth(reward_model):
    """The `ground_truth` of a verl `reward_model` entry (None when there is none)."""
    return reward_model.get("ground_truth") if isinstance(reward_model, dict) else None


def allows_revisits(extra_info) -> bool:
    """`extra_info["allow_revisits"]` when `extra_info` is a dict holding it, else false."""
    return isinstance(extra_info, dict) and bool(extra_info.get("allow_revisits", False))


def rule_of(data_source, extra_info) -> str:
    """The rule a row asks for: `extra_info["rule"]` where `extra_info` is a dict holding it,
    else `maxrl` for the data_source `mazerl-maxrl-judge` (`MAXRL_RULE_SOURCE`), else
    `mazerl`. Not checked here: `score` scores an unknown rule 0 with the reason."""
    if isinstance(extra_info, dict) and extra_info.get("rule") is not None:
        return extra_info["rule"]
    return "maxrl" if data_source == MAXRL_RULE_SOURCE else "mazerl"


def score(
    truths: Sequence,
    texts: Sequence[str | None],
    formats: Sequence[str],
    allow: Sequence[bool],
    rules: Sequence[str] | None = None,
) -> list[Verdict]:
    """One `Verdict` per row (its ground truth, completion text, format, `allow_revisits` and
    rule, default `mazerl`); rows alike are stepped together. A completion that is not text
    (None) scores 0 as `not text`, an unreadable ground truth as `unreadable ground truth:
    ...`, an unknown rule as `unknown rule ...`. MaxRL's rule (`judge_maxrl`) reads the
    `maxrl` words whatever the format and always allows revisits."""
    rules = rules or ["mazerl"] * len(texts)
    out: list[Verdict | None] = [None] * len(texts)
    mazes = {}
    for i, (truth, text, rule) in enumerate(zip(truths, texts, rules, strict=True)):
        if rule not in RULES:
            out[i] = Verdict(0.0, f"unknown rule {rule!r}; known: {', '.join(RULES)}")
            continue
        try:
            mazes[i] = maze_of(truth)
        except ValueError as e:
            out[i] = Verdict(0.0, f"unreadable ground truth: {e}")
            continue
        if text is None:
            out[i] = Verdict(0.0, "not text")
            del mazes[i]
    for key in {(rules[i], formats[i], allow[i]) for i in mazes}:
        rows = [i for i in mazes if (rules[i], formats[i], allow[i]) == key]
        rule, fmt, revisits = key
        pairs = [mazes[i] for i in rows], [texts[i] for i in rows]
        found = judge_maxrl(*pairs) if rule == "maxrl" else judge(*pairs, fmt, revisits)
        for i, verdict in zip(rows, found, strict=True):
            out[i] = verdict
    return out


def completion_text(completion) -> str | None:
    """The answer text of a TRL completion.

    Args:
        completion: text, or a conversation (a list of messages) whose last message's
            `content` is the answer.

    Returns:
        The text; None for anything else (None, bytes, an empty conversation, a message
        without text content), which then scores 0 as `not text`, as in `compute_score`.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list | tuple) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content")
        return content if isinstance(content, str) else None
    return None


def maze_reward(
    completions: list,
    maze: list[str] | None = None,
    maze_format: list[str] | None = None,
    reward_model: list[dict] | None = None,
    data_source: list[str] | None = None,
    extra_info: list[dict] | None = None,
    log_extra=None,
    **kwargs,
) -> list[float]:
    """TRL `reward_funcs` entry: one reward per completion, from the dataset's columns (TRL
    repeats them per completion): the ground truth is `maze` or else `reward_model`'s
    `ground_truth`, the format `maze_format` or else `format_of_source(data_source)`;
    `extra_info`'s `allow_revisits` (default false); the rule `rule_of(data_source,
    extra_info)`. The verdicts' reasons are logged as the `maze_verdict` column of TRL's
    completion table when TRL passes `log_extra`. Other columns and TRL's extra arguments
    (`prompts`, `completion_ids`, `trainer_state`, ...) are ignored."""
    n = len(completions)
    if maze is None:
        maze = [ground_truth(r) for r in reward_model or [None] * n]
    if maze_format is None:
        maze_format = [format_of_source(s) for s in data_source or [None] * n]
    infos = extra_info or [None] * n
    allow = [allows_revisits(e) for e in infos]
    rules = [rule_of(s, e) for s, e in zip(data_source or [None] * n, infos, strict=True)]
    texts = [completion_text(c) for c in completions]
    verdicts = score(maze, texts, maze_format, allow, rules)
    if log_extra is not None:
        log_extra("maze_verdict", [v.reason for v in verdicts])
    return [v.reward for v in verdicts]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """verl's custom reward function (`custom_reward_function.path=pkg://mazerl.llm.verifier`,
    `name=compute_score`): `{"score": 0.0 or 1.0, "reason": ...}`. `extra_info` may carry
    `allow_revisits` and `rule` (`maxrl`: MaxRL's `judge_maze`, `judge_maxrl`; also asked for
    by the data_source `mazerl-maxrl-judge`; default mazerl's rule); nothing raises (a
    ground truth that is not a maze, even None, scores 0 with the reason)."""
    text = solution_str if isinstance(solution_str, str) else None
    fmt = format_of_source(data_source)
    rule = rule_of(data_source, extra_info)
    (verdict,) = score([ground_truth], [text], [fmt], [allows_revisits(extra_info)], [rule])
    return {"score": verdict.reward, "reason": verdict.reason}
