"""`gru`: a conv encoder over the maze and a GRU decoder that attends to it.

    maze cells --embed + 2-D position--> residual dilated convs --> F  [P, H*W, d]
    h_0 = pool(F)                                      (attention with a learned query)
    h_t = GRU(embed(a_{t-1}), h_{t-1})                 (the GRU integrates its own moves)
    c_t = softmax(W_q h_t . W_k F / sqrt(d)) W_v F     (reads the maze where it thinks it is)
    logits_t = MLP([h_t, c_t (, F[pos_t] if sees_position)])

The maps that act on the maze alone are applied once per maze and shared by the G rollouts
of its group and all their steps (`MazeReads`): the query map is folded into the keys
(`h W_q^T . k = h . k W_q`) and the head's first layer into the values and the features
(`W_c (a V) = a (V W_c^T)`), so a generated token costs one `d x 3d` GRU matmul, two
`[G, H*W]` attention products and the head, and the update's forward is the same algebra.
Teacher forcing is one `nn.GRU` call (the GRU's input is only the previous action; torch's
fused sequence kernel, forward and backward, is faster than a loop of steps); a generated
token's GRU step (`_cell`) reads its input gates from a table of the 6 previous actions.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from mazerl.policy.base import POLICIES, SequencePolicy, previous_actions
from mazerl.policy.config import GruConfig
from mazerl.policy.tokens import N_ACTIONS, Prompts, sinusoid_2d


@dataclass
class MazeReads:
    """What every step reads of P mazes, the per-maze maps applied once.

    Attributes:
        keys: `[P, HW, d]` keys with the query map and `1/sqrt(d)` folded in
            (`scores = h . keys`).
        values: `[P, HW, d]` values through the head's context weights (the context's
            contribution to the head's hidden layer is `softmax(scores) @ values`).
        here: `[P, HW, d]` features through the head's position weights, or None unless
            `sees_position`.
        width: the grid's W (a cell's flat index is `row * W + col`).
    """

    keys: torch.Tensor
    values: torch.Tensor
    here: torch.Tensor | None
    width: int

    def select(self, keep: torch.Tensor) -> "MazeReads":
        """The reads of mazes `keep` (`[P']` long indices)."""
        here = None if self.here is None else self.here[keep]
        return MazeReads(self.keys[keep], self.values[keep], here, self.width)


@dataclass
class GruState:
    reads: MazeReads
    gates: torch.Tensor  # [N_ACTIONS + 1, 3d] the GRU's input gates of each previous action
    h: torch.Tensor  # [B, d]
    group_size: int  # the layout's rows per maze: G, or the width `select_rows` set
    slots: torch.Tensor | None = None  # [B] row b's place in the [P * group_size] layout; None: b


@POLICIES.register("gru")
class GruPolicy(SequencePolicy):
    config_class = GruConfig

    def __init__(self, cfg: GruConfig) -> None:
        super().__init__()
        d = cfg.hidden
        self.cfg = cfg
        self.cell_embed = nn.Embedding(4, d)
        self.pos_proj = nn.Linear(d, d, bias=False)
        self.convs = nn.ModuleList(
            nn.Conv2d(d, d, 3, padding=2 ** (k % 3), dilation=2 ** (k % 3))
            for k in range(cfg.encoder_layers)
        )
        self.norms = nn.ModuleList(nn.GroupNorm(1, d) for _ in range(cfg.encoder_layers))
        self.pool_query = nn.Parameter(torch.randn(d) / d**0.5)
        self.h0 = nn.Linear(d, d)
        self.action_embed = nn.Embedding(N_ACTIONS + 1, d)
        self.gru = nn.GRU(d, d, batch_first=True)
        self.wq, self.wk, self.wv = (nn.Linear(d, d, bias=False) for _ in range(3))
        head_in = 3 * d if cfg.sees_position else 2 * d
        self.head = nn.Sequential(nn.Linear(head_in, d), nn.GELU(), nn.Linear(d, N_ACTIONS))

    def encode(self, prompts: Prompts) -> torch.Tensor:
        """`[P, H*W, d]` cell features."""
        h, w = prompts.shape
        pos = self.pos_proj(sinusoid_2d(h, w, self.cfg.hidden, prompts.cells.device))
        x = (self.cell_embed(prompts.cells) + pos).permute(0, 3, 1, 2)
        for conv, norm in zip(self.convs, self.norms, strict=True):
            x = x + conv(F.gelu(norm(x)))
        return x.flatten(2).transpose(1, 2)

    def _init(self, prompts: Prompts, group_size: int) -> tuple[MazeReads, torch.Tensor]:
        """The mazes' reads and the initial hidden state `[P * G, d]`."""
        feats = self.encode(prompts)
        d = feats.shape[-1]
        scores = feats @ self.pool_query / d**0.5  # [P, HW]
        pooled = (scores.softmax(-1)[..., None] * feats).sum(1)
        h = torch.tanh(self.h0(pooled)).repeat_interleave(group_size, 0)
        w1 = self.head[0].weight  # [d, 2d or 3d]: the hidden state's, the context's, F[pos]'s
        keys = (self.wk(feats) @ self.wq.weight) * d**-0.5
        values = self.wv(feats) @ w1[:, d : 2 * d].T
        here = feats @ w1[:, 2 * d :].T if self.cfg.sees_position else None
        return MazeReads(keys, values, here, prompts.shape[1]), h

    def _logits(self, out, reads: MazeReads, pos) -> torch.Tensor:
        """out `[P, N, d]` (N = G or G*T hidden states of each maze) -> logits `[P, N, 5]`;
        pos `[P, N, 2]` the cells (read only if `sees_position`)."""
        attn = torch.bmm(out, reads.keys.transpose(1, 2)).softmax(-1)  # [P, N, HW]
        hidden = torch.baddbmm(F.linear(out, self.head[0].weight[:, : out.shape[-1]],
                                        self.head[0].bias), attn, reads.values)  # fmt: skip
        if reads.here is not None:
            flat = (pos[..., 0] * reads.width + pos[..., 1]).reshape(out.shape[0], -1)
            hidden = hidden + reads.here.gather(1, flat[..., None].expand(-1, -1, out.shape[-1]))
        return self.head[2](self.head[1](hidden))

    def prefill(self, prompts: Prompts, group_size: int, max_len: int = 0) -> GruState:
        reads, h = self._init(prompts, group_size)
        return GruState(reads, self._gates(), h, group_size)

    def _gates(self) -> torch.Tensor:
        """`[N_ACTIONS + 1, 3d]`: the GRU's input gates `W_ih embed(a) + b_ih` of each
        previous action `a` (the GRU's only input)."""
        return F.linear(self.action_embed.weight, self.gru.weight_ih_l0, self.gru.bias_ih_l0)

    def _cell(self, gi: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """One GRU step, as `nn.GRU` computes it: input gates gi `[B, 3d]`, hidden state h
        `[B, d]` -> the next hidden state `[B, d]`."""
        d = h.shape[1]
        gh = F.linear(h, self.gru.weight_hh_l0, self.gru.bias_hh_l0)
        rz = torch.sigmoid(gi[:, : 2 * d] + gh[:, : 2 * d])
        n = torch.tanh(torch.addcmul(gi[:, 2 * d :], rz[:, :d], gh[:, 2 * d :]))
        return n + rz[:, d:] * (h - n)  # (1 - z) n + z h

    def step(self, state: GruState, prev: torch.Tensor, pos: torch.Tensor):
        d = state.h.shape[1]
        h = self._cell(state.gates.index_select(0, prev), state.h)
        p, g, slots = state.reads.keys.shape[0], state.group_size, state.slots
        out = h
        if slots is not None:  # selected rows: the maze reads run in the padded [P, width] layout
            out = h.new_zeros(p * g, d).index_copy_(0, slots, h)
            pos = None if pos is None else pos.new_zeros(p * g, 2).index_copy_(0, slots, pos)
        logits = self._logits(
            out.reshape(p, g, d), state.reads, None if pos is None else pos.reshape(p, g, 2)
        ).reshape(p * g, -1)
        if slots is not None:
            logits = logits[slots]
        return logits, GruState(state.reads, state.gates, h, g, slots)

    def select_rows(self, state: GruState, rows: torch.Tensor) -> GruState:
        """The state of rows `rows` (non-decreasing indices into the state's rows; a row taken
        k times becomes k rows); mazes none of them belongs to are dropped, and each maze's
        rows take the first slots of a layout as wide as the most rows any maze keeps."""
        g = state.group_size
        slots = (
            torch.arange(state.h.shape[0], device=rows.device)
            if state.slots is None
            else state.slots
        )
        keep, prompt = torch.unique(slots[rows] // g, return_inverse=True)  # [P'], [B']
        counts = torch.bincount(prompt, minlength=len(keep))
        width = int(counts.max())
        rank = torch.arange(len(rows), device=rows.device) - (counts.cumsum(0) - counts)[prompt]
        reads = state.reads if len(keep) == state.reads.keys.shape[0] else state.reads.select(keep)
        return GruState(reads, state.gates, state.h[rows], width, prompt * width + rank)

    def forward(self, prompts, group_size, actions, positions):
        reads, h0 = self._init(prompts, group_size)
        b, t = actions.shape
        out, _ = self.gru(self.action_embed(previous_actions(actions)), h0[None])  # [B, T, d]
        p = reads.keys.shape[0]
        pos = None if reads.here is None else positions.reshape(p, group_size * t, 2)
        logits = self._logits(out.reshape(p, group_size * t, -1), reads, pos)
        return logits.reshape(b, t, N_ACTIONS)
