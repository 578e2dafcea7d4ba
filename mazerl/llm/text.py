"""Mazes as text: the prompt, the reference answer and how a model's answer is read, per format.

`maxrl`, MaxRL's token grid (the paper's setup; the words of `mazerl.policy.tokens.VOCAB`, so
the prompt is mazerl's own token encoding written out):

    prompt    <bos> GRID_START WALL WALL ... NEWLINE ... GRID_END PATH_START
    answer    RIGHT RIGHT DOWN ... DONE
    sequence  prompt answer <eos>      (MaxRL's data: its ground truth; `grid_rows` reads it)

`plain`, for a chat model: instructions, the maze as text rows (`#` wall, `.` open, `S` start,
`G` goal, as mazerl's layout files) and the answer form:

    answer  <answer>RIGHT RIGHT DOWN ...</answer>

Reading an answer (`read_moves`) gives the moves up to the first stop. Both formats tolerate any
whitespace (spaces, tabs, newlines) between words and any letter case (`right`, `Right`). In
`maxrl` the answer is the whole completion: it stops at `DONE` or at a special-token word such
as `<eos>`; any other word is malformed. In `plain` the answer is the text after the first
`<answer>` tag (text before it is ignored) up to `</answer>` (optional), words separated by
whitespace or commas. The verifier reads only as far as the episode lasts (mazerl's rule: it
ends at the goal, a wall or a revisit), so what follows the end is never read.
"""

import re
from dataclasses import dataclass

from mazerl.envs.layouts import to_text
from mazerl.envs.maze import MOVE_NAMES, Maze
from mazerl.policy.tokens import VOCAB, encode

FORMATS = ("maxrl", "plain")
MOVE_OF_WORD = {name: move for move, name in enumerate(MOVE_NAMES)}
CELL_OF_WORD = {"WALL": "#", "PATH": ".", "START": "S", "GOAL": "G"}  # token -> layout character
SPECIAL_WORD = re.compile(r"<[^<>\s]+>")
ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown maze text format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def prompt(maze: Maze, fmt: str, allow_revisits: bool = False) -> str:
    """The prompt of `maze` in format `fmt`."""
    if check_format(fmt) == "maxrl":
        return " ".join(VOCAB[t] for t in encode([maze]).tokens()[0].tolist())
    rows = to_text(maze).splitlines()[-maze.shape[0] :]  # without a `routes: K` header
    revisit = "" if allow_revisits else ", entering a cell twice"
    return (
        "Find the path through this maze from S (start) to G (goal). '#' is a wall, '.' an open "
        "cell. Move one cell at a time: UP, DOWN, LEFT or RIGHT. Entering a wall, leaving the "
        f"grid{revisit} or stopping before G fails.\n\n"
        + "\n".join(rows)
        + "\n\nGive the moves in order, separated by spaces, inside <answer></answer>, for "
        "example <answer>DOWN RIGHT</answer>."
    )


def answer(maze: Maze, fmt: str) -> str:
    """The reference answer (the shortest route; the unique one in a perfect maze)."""
    moves = " ".join(MOVE_NAMES[m] for m in maze.solution)
    return f"{moves} DONE" if check_format(fmt) == "maxrl" else f"<answer>{moves}</answer>"


def sequence(maze: Maze) -> str:
    """MaxRL's whole token sequence of `maze`, the ground truth of its maze data: the `maxrl`
    prompt, the reference answer and `<eos>`."""
    return f"{prompt(maze, 'maxrl')} {answer(maze, 'maxrl')} <eos>"


def grid_rows(text: str) -> list[str]:
    """The layout rows of the grid in a MaxRL token sequence.

    The words between `GRID_START` and the next `GRID_END` are read, rows split at `NEWLINE`;
    empty rows are skipped, as MaxRL's judge does (its maze generator writes `NEWLINE` after
    every row, the last one included), so a leading, trailing or doubled `NEWLINE` reads the
    same grid. Words around the grid are not read.

    Args:
        text: a MaxRL token sequence (`<bos> GRID_START ... GRID_END PATH_START ...`).

    Returns:
        The grid's rows of `#` (wall), `.` (open), `S` (start) and `G` (goal), as mazerl's
        layout files; none when the grid has no cell.

    Raises:
        ValueError: `GRID_START` or `GRID_END` is missing, or a grid word is not a cell or
            `NEWLINE` (the message names the first such word).
    """
    words = text.split()
    if "GRID_START" not in words:
        raise ValueError("no GRID_START")
    first = words.index("GRID_START") + 1
    if "GRID_END" not in words[first:]:
        raise ValueError("no GRID_END after GRID_START")
    rows = [""]
    for word in words[first : words.index("GRID_END", first)]:
        if word == "NEWLINE":
            rows.append("")
        elif word in CELL_OF_WORD:
            rows[-1] += CELL_OF_WORD[word]
        else:
            raise ValueError(f"grid word {word[:20]!r} is not a cell or NEWLINE")
    return [row for row in rows if row]


def answer_prefix(maze: Maze, fmt: str, route: int = 0) -> str:
    """The reference completion up to the last move of route `route` (0: the solution), as the
    model emits it after the prompt (a leading space in `maxrl`, whose words are
    space-separated). Every completion that starts with it succeeds, whatever follows: the
    episode has ended at the goal."""
    moves = " ".join(MOVE_NAMES[m] for m in maze.routes[route])
    return continuation(moves if check_format(fmt) == "maxrl" else f"<answer>{moves}", fmt)


def continuation(text: str, fmt: str) -> str:
    """Answer text as the model emits it right after the prompt: after a space in `maxrl`,
    whose words are space-separated (the prompt ends with `PATH_START`), as is in `plain`."""
    return f" {text}" if check_format(fmt) == "maxrl" else text


@dataclass(frozen=True)
class Reading:
    """The moves read from an answer (0-3, in order) and why reading stopped: `end` (the text
    or the answer tag ended), `stop` (a stop word: DONE or a special token), or
    `malformed: <what>` (no answer tag, or a word that is not a move)."""

    moves: tuple[int, ...]
    stop: str


def read_moves(text: str, fmt: str) -> Reading:
    """Read the moves of an answer in format `fmt` (see the module docstring)."""
    if check_format(fmt) == "plain":
        opened = ANSWER_OPEN.search(text)
        if opened is None:
            return Reading((), "malformed: no <answer> tag")
        body = text[opened.end() :]
        closed = ANSWER_CLOSE.search(body)
        words = re.split(r"[\s,]+", body[: closed.start()] if closed else body)
    else:
        words = text.split()
    moves = []
    for i, word in enumerate(w for w in words if w):
        upper = word.upper()
        if upper in MOVE_OF_WORD:
            moves.append(MOVE_OF_WORD[upper])
        elif fmt == "maxrl" and (upper == "DONE" or SPECIAL_WORD.fullmatch(word)):
            return Reading(tuple(moves), "stop")
        else:
            return Reading(tuple(moves), f"malformed: word {i + 1} {word[:20]!r} is not a move")
    return Reading(tuple(moves), "end")
