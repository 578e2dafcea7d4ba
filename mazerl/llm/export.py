"""Mazes as a text dataset: one record per maze with its prompt, reference answer and keys.

Columns (every format):
    prompt, solution        the prompt and reference answer in `maze_format` (`mazerl.llm.text`);
                            with `chat`, the prompt is a conversation [{role: user, content}]
                            (TRL's conversational format, verl's `prompt`)
    maze                    the maze's layout text (`#`, `.`, `S`, `G`): what the verifier reads
    maze_format             `maxrl` or `plain`
    split, set, index       `train` / `id` / `ood` (or the user's), the source's name, position
    key                     16 hex digits of sha256(Maze.key): the maze's content
    mazes_hash              the set's `mazes_hash`, as in mazerl's `eval/step_*.json`, whose
                            per-maze lists are in `index` order: join on (mazes_hash, index)
    data_source, reward_model, extra_info
                            verl's columns, laid out as MaxRL's maze data: `mazerl-<format>`
                            (a `maze` prefix, as MaxRL's sources; `mazerl-maxrl-judge` with
                            MaxRL's rule), {style: rule, ground_truth}, {split, set, index,
                            key, allow_revisits, rule, question, answer}: `rule` the verifier's
                            rule for the row (`mazerl`, or `maxrl`: MaxRL's `judge_maze`). The
                            ground truth is MaxRL's whole token sequence (`text.sequence`) in
                            `maxrl`, the layout text in `plain`; `question` is the prompt text,
                            `answer` the ground truth (MaxRL's SFT script reads those two).

MaxRL's verl reads the prompt as a conversation (verl's `RLHFDataset` applies the tokenizer's
chat template to it): export with `chat` for verl; the maze tokenizer's template
(`models.maze_tokenizer`) renders it back to the prompt text.

Written with Hugging Face `datasets` as JSON lines (`.jsonl`, `.json`) or Parquet (`.parquet`),
atomically: a failed write leaves no file behind.
"""

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from mazerl.core.errors import UserError
from mazerl.envs.layouts import to_text
from mazerl.envs.maze import Maze
from mazerl.eval.evaluate import mazes_hash
from mazerl.llm.text import answer, check_format, prompt, sequence
from mazerl.llm.verifier import DATA_SOURCE, MAXRL_RULE_SOURCE, RULES

SUFFIXES = (".jsonl", ".json", ".parquet")


def maze_key(maze: Maze) -> str:
    """16 hex digits naming a maze's grid, start and goal."""
    return hashlib.sha256(maze.key).hexdigest()[:16]


def records(
    mazes: Sequence[Maze],
    fmt: str,
    split: str,
    set_name: str,
    allow_revisits: bool = False,
    chat: bool = False,
    rule: str = "mazerl",
) -> list[dict]:
    """One record per maze (columns in the module docstring); `rule` the verifier's rule
    (`mazerl` or `maxrl`, which reads `maxrl` answers only); a `UserError` for another."""
    check_format(fmt)
    if rule not in RULES:
        raise UserError(f"unknown rule {rule!r}; known: {', '.join(RULES)}")
    if rule == "maxrl" and fmt != "maxrl":
        raise UserError(f"MaxRL's rule reads the maxrl format only, not {fmt}")
    if rule == "maxrl" and allow_revisits:
        raise UserError("MaxRL's rule always allows revisits: leave out --allow-revisits")
    joined = mazes_hash(mazes)
    out = []
    for i, maze in enumerate(mazes):
        layout, key = to_text(maze), maze_key(maze)
        info = {"split": split, "set": set_name, "index": i, "key": key}
        text = prompt(maze, fmt, allow_revisits)
        truth = sequence(maze) if fmt == "maxrl" else layout
        out.append(
            {
                "prompt": [{"role": "user", "content": text}] if chat else text,
                "solution": answer(maze, fmt),
                "maze": layout,
                "maze_format": fmt,
                **info,
                "mazes_hash": joined,
                "data_source": MAXRL_RULE_SOURCE if rule == "maxrl" else DATA_SOURCE[fmt],
                "reward_model": {"style": "rule", "ground_truth": truth},
                "extra_info": {
                    **info,
                    "allow_revisits": allow_revisits,
                    "rule": rule,
                    "question": text,
                    "answer": truth,
                },
            }
        )
    return out


def check_output(path: Path) -> Path:
    """`path` if its suffix is a known format and its folder exists; else a `UserError`."""
    if path.suffix not in SUFFIXES:
        raise UserError(f"{path}: unknown output format {path.suffix!r}; use {', '.join(SUFFIXES)}")
    if not path.parent.is_dir():
        raise UserError(f"{path}: folder {path.parent} does not exist")
    return path


def write(rows: list[dict], path: Path) -> None:
    """Write `rows` to `path` (JSON lines or Parquet by suffix) through a temporary file."""
    from datasets import Dataset, disable_progress_bars

    check_output(path)
    disable_progress_bars()
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        dataset = Dataset.from_list(rows)
        if path.suffix == ".parquet":
            dataset.to_parquet(str(tmp))
        else:
            dataset.to_json(str(tmp), lines=True)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
