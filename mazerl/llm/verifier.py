"""The maze verifier on model text, with the signatures TRL and verl call.

A completion is read as moves (`mazerl.llm.text.read_moves`) and stepped by mazerl's own
batched stepper (`MazeBatch`, the rule every mazerl policy is scored by): reward 1 when the
episode reaches the goal, else 0. The episode ends at the goal, a wall (stepping off the grid
counts as a wall, reported as `out of bounds`), a revisit (unless `allow_revisits`), or after
`max_steps`; moves after the end are never read. A completion whose moves run out first scores
0: `stopped before the goal` after a stop word or the end of the text, or its reading's
`malformed: ...` reason. Nothing raises on model output: every completion gets a reward and a
reason that can be logged.

- TRL: `maze_reward(completions, maze, **kwargs)` (a `reward_funcs` entry; `maze` and
  `maze_format` are dataset columns of `mazerl-llm export`, the reasons go to TRL's completion
  table through its `log_extra`).
- verl: `compute_score(data_source, solution_str, ground_truth, extra_info)`, ground truth the
  maze's layout text, the format from `data_source` (`mazerl-maxrl`, `mazerl-plain`); returns
  `{"score", "reason"}` (verl logs the extra key).
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from mazerl.envs.batch import STOP_ACTION, MazeBatch
from mazerl.envs.layouts import parse
from mazerl.envs.maze import DELTAS, EVENTS, GOAL, MOVE, STOP, WALL, Maze, replay
from mazerl.llm.text import FORMATS, read_moves

DATA_SOURCE = {fmt: f"mazerl-{fmt}" for fmt in FORMATS}  # verl's data_source column
FORMAT_OF_SOURCE = {source: fmt for fmt, source in DATA_SOURCE.items()}


@dataclass(frozen=True)
class Verdict:
    """reward: 1.0 or 0.0; reason: `goal`, `wall`, `out of bounds`, `revisit`, `out of steps`,
    `stopped before the goal` or `malformed: ...`."""

    reward: float
    reason: str


def judge(
    mazes: Sequence[Maze],
    texts: Sequence[str],
    fmt: str,
    allow_revisits: bool = False,
    max_steps: int | None = None,
) -> list[Verdict]:
    """One `Verdict` per `(maze, completion text)` pair, all stepped together."""
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


def off_grid(maze: Maze, moves: Sequence[int]) -> bool:
    """Whether the move that hit a wall left the grid (`replay` stops before the wall)."""
    cells = replay(maze.grid, maze.start, tuple(moves))
    (r, c), (dr, dc) = cells[-1], DELTAS[moves[len(cells) - 1]]
    return not (0 <= r + dr < maze.shape[0] and 0 <= c + dc < maze.shape[1])


@functools.lru_cache(maxsize=4096)
def maze_of(text: str) -> Maze:
    """A maze from its layout text (the `maze` column), parsed and validated once."""
    return parse(text, "<maze column>")


def completion_text(completion) -> str:
    """A TRL completion: text, or a conversation whose last message is the answer."""
    return completion if isinstance(completion, str) else completion[-1]["content"]


def maze_reward(
    completions: list,
    maze: list[str],
    maze_format: list[str],
    extra_info: list[dict] | None = None,
    log_extra=None,
    **kwargs,
) -> list[float]:
    """TRL `reward_funcs` entry: one reward per completion. `maze`, `maze_format` and
    `extra_info` (its `allow_revisits`, default false) are the dataset's columns, repeated per
    completion by TRL; the verdicts' reasons are logged as the `maze_verdict` column of TRL's
    completion table when TRL passes `log_extra`. Other columns and TRL's extra arguments
    (`prompts`, `completion_ids`, `trainer_state`, ...) are ignored."""
    allow = [bool((e or {}).get("allow_revisits", False)) for e in extra_info or [{}] * len(maze)]
    verdicts: list[Verdict | None] = [None] * len(completions)
    for fmt, allowed in set(zip(maze_format, allow, strict=True)):
        rows = [i for i in range(len(maze)) if (maze_format[i], allow[i]) == (fmt, allowed)]
        texts = [completion_text(completions[i]) for i in rows]
        found = judge([maze_of(maze[i]) for i in rows], texts, fmt, allowed)
        for i, v in zip(rows, found, strict=True):
            verdicts[i] = v
    if log_extra is not None:
        log_extra("maze_verdict", [v.reason for v in verdicts])
    return [v.reward for v in verdicts]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """verl's custom reward function (`custom_reward_function.path` to this file's module,
    `name: compute_score`): `{"score": 0.0 or 1.0, "reason": ...}`. `extra_info` may carry
    `allow_revisits`; an unknown `data_source` or an invalid maze scores 0 with the reason."""
    fmt = FORMAT_OF_SOURCE.get(data_source)
    if fmt is None:
        return {"score": 0.0, "reason": f"not a mazerl data_source: {data_source!r}"}
    try:
        maze = maze_of(ground_truth)
    except ValueError as e:
        return {"score": 0.0, "reason": f"invalid ground truth: {e}"}
    allow_revisits = bool((extra_info or {}).get("allow_revisits", False))
    verdict = judge([maze], [solution_str], fmt, allow_revisits)[0]
    return {"score": verdict.reward, "reason": verdict.reason}
