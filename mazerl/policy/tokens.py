"""The maze-as-text token format of the paper's Maze setup (MaxRL tokenizer, vocab 32) and the
batched model input built from mazes:

    Prompt:   <bos> GRID_START  cells of row 0  NEWLINE  ...  cells of row H-1  GRID_END PATH_START
    Response: UP | DOWN | LEFT | RIGHT ...  DONE

Policies emit one of `N_ACTIONS = 5` response tokens per step; action ids 0-3 are the moves
(as in the env) and 4 is DONE (the stepper's stop action).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from mazerl.envs.maze import Maze

VOCAB = (
    ["<pad>", "<bos>", "<eos>", "<unk>", "GRID_START", "GRID_END", "PATH_START", "DONE"]
    + ["PATH", "WALL", "GOAL", "START", "NEWLINE", "UP", "DOWN", "LEFT", "RIGHT", "\n"]
    + [f"RESERVED_{i}" for i in range(14)]
)
TOKEN = {name: i for i, name in enumerate(VOCAB)}
VOCAB_SIZE = len(VOCAB)  # 32
RESPONSE_TOKENS = (TOKEN["UP"], TOKEN["DOWN"], TOKEN["LEFT"], TOKEN["RIGHT"], TOKEN["DONE"])
N_ACTIONS = len(RESPONSE_TOKENS)

# cell classes (index into the policies' cell embeddings) and their tokens
CELL_OPEN, CELL_WALL, CELL_START, CELL_GOAL = range(4)
CELL_TOKENS = torch.tensor([TOKEN["PATH"], TOKEN["WALL"], TOKEN["START"], TOKEN["GOAL"]])


@dataclass
class Prompts:
    """P mazes as model input, padded with walls to a common `(H, W)`.

    Attributes:
        cells: `[P, H, W]` long cell classes (`CELL_OPEN`, `CELL_WALL`, `CELL_START`,
            `CELL_GOAL`).
        start: `[P, 2]` long, each maze's start cell `(row, col)`.
    """

    cells: torch.Tensor
    start: torch.Tensor

    @property
    def shape(self) -> tuple[int, int]:
        return self.cells.shape[1], self.cells.shape[2]

    def tokens(self) -> torch.Tensor:
        """The prompts as token ids (module docstring).

        Returns:
            `[P, L]` long, L = H*W + (H-1) + 4.
        """
        p, h, _ = self.cells.shape
        cell_tok = CELL_TOKENS.to(self.cells.device)[self.cells]  # [P, H, W]
        newline = torch.full((p, h, 1), TOKEN["NEWLINE"], device=self.cells.device)
        rows = torch.cat([cell_tok, newline], dim=2).reshape(p, -1)[:, :-1]
        head = torch.tensor([TOKEN["<bos>"], TOKEN["GRID_START"]], device=self.cells.device)
        tail = torch.tensor([TOKEN["GRID_END"], TOKEN["PATH_START"]], device=self.cells.device)
        return torch.cat([head.expand(p, 2), rows, tail.expand(p, 2)], dim=1)

    def cell_index(self) -> torch.Tensor:
        """Where each cell's token is in `tokens()`.

        Returns:
            `[H, W]` long positions.
        """
        h, w = self.shape
        rows = torch.arange(h)[:, None] * (w + 1)
        return (2 + rows + torch.arange(w)[None, :]).to(self.cells.device)


def encode(mazes: Sequence[Maze], device: torch.device | str = "cpu") -> Prompts:
    """Batch mazes into `Prompts`.

    Args:
        mazes: P mazes, of any sizes.
        device: where the tensors go.

    Returns:
        The prompts, smaller grids padded with walls at the bottom/right to the largest
        `(H, W)`.
    """
    h = max(m.shape[0] for m in mazes)
    w = max(m.shape[1] for m in mazes)
    cells = np.full((len(mazes), h, w), CELL_WALL, dtype=np.int64)
    for i, m in enumerate(mazes):
        cells[i, : m.shape[0], : m.shape[1]] = np.where(m.grid == 1, CELL_WALL, CELL_OPEN)
        cells[(i, *m.start)] = CELL_START
        cells[(i, *m.goal)] = CELL_GOAL
    start = np.array([m.start for m in mazes], dtype=np.int64)
    return Prompts(torch.as_tensor(cells, device=device), torch.as_tensor(start, device=device))


def sinusoid_2d(h: int, w: int, dim: int, device=None) -> torch.Tensor:
    """Fixed 2-D position features, so that mazes larger than the training ones still get
    meaningful positions.

    Args:
        h: grid rows.
        w: grid columns.
        dim: features per cell (the first `4 * (dim // 4)` are set, the rest 0).
        device: where the tensor goes.

    Returns:
        `[H, W, dim]` features: sines and cosines of the row, then of the column.
    """
    quarter = dim // 4
    freq = torch.exp(-np.log(100.0) * torch.arange(quarter, device=device) / max(quarter, 1))
    r = torch.arange(h, device=device)[:, None] * freq
    c = torch.arange(w, device=device)[:, None] * freq
    row = torch.cat([r.sin(), r.cos()], -1)[:, None, :].expand(h, w, 2 * quarter)
    col = torch.cat([c.sin(), c.cos()], -1)[None, :, :].expand(h, w, 2 * quarter)
    out = torch.zeros(h, w, dim, device=device)
    out[..., : 4 * quarter] = torch.cat([row, col], -1)
    return out
