"""`gru`: a conv encoder over the maze and a GRU decoder that attends to it.

    maze cells --embed + 2-D position--> residual dilated convs --> F  [P, H*W, d]
    h_0 = pool(F)                                      (attention with a learned query)
    h_t = GRU(embed(a_{t-1}), h_{t-1})                 (the GRU integrates its own moves)
    c_t = softmax(W_q h_t . W_k F / sqrt(d)) W_v F     (reads the maze where it thinks it is)
    logits_t = MLP([h_t, c_t (, F[pos_t] if sees_position)])

The GRU's input is only the previous action, so teacher forcing is one fused `nn.GRU` call.
The keys and values are computed once per maze and shared by the G rollouts of its group.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from mazerl.policy.base import POLICIES, SequencePolicy, previous_actions
from mazerl.policy.config import GruConfig
from mazerl.policy.tokens import N_ACTIONS, Prompts, sinusoid_2d


@dataclass
class GruState:
    keys: torch.Tensor  # [P, HW, d]
    values: torch.Tensor  # [P, HW, d]
    features: torch.Tensor  # [P, HW, d]
    h: torch.Tensor  # [1, B, d]
    group_size: int
    width: int
    slots: torch.Tensor | None = None  # [B] row b's place in the [P * G] layout; None: b


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

    def _init(self, prompts: Prompts, group_size: int):
        feats = self.encode(prompts)
        scores = feats @ self.pool_query / feats.shape[-1] ** 0.5  # [P, HW]
        pooled = (scores.softmax(-1)[..., None] * feats).sum(1)
        h = torch.tanh(self.h0(pooled)).repeat_interleave(group_size, 0)
        return feats, self.wk(feats), self.wv(feats), h

    def _read(self, q, keys, values, feats, pos, width):
        """q `[P, G*T, d]` -> context `[P, G*T, d]` and the features at `pos`. Attention is
        called 4-D (one head): the 3-D call falls back to the math path, 1.5-2x slower."""
        ctx = F.scaled_dot_product_attention(q[:, None], keys[:, None], values[:, None])[:, 0]
        if not self.cfg.sees_position:
            return (ctx,)
        flat = (pos[..., 0] * width + pos[..., 1]).reshape(q.shape[0], -1)  # [P, G*T]
        here = feats.gather(1, flat[..., None].expand(-1, -1, feats.shape[-1]))
        return ctx, here

    def prefill(self, prompts: Prompts, group_size: int, max_len: int = 0) -> GruState:
        feats, keys, values, h = self._init(prompts, group_size)
        return GruState(keys, values, feats, h[None], group_size, prompts.shape[1])

    def step(self, state: GruState, prev: torch.Tensor, pos: torch.Tensor):
        out, h = self.gru(self.action_embed(prev)[:, None], state.h)  # [B, 1, d]
        out = out[:, 0]
        p, g, slots = state.keys.shape[0], state.group_size, state.slots
        q = self.wq(out)
        if slots is not None:  # compacted rows: the maze reads run in the padded [P, G] layout
            q = q.new_zeros(p * g, q.shape[-1]).index_copy_(0, slots, q)
            pos = None if pos is None else pos.new_zeros(p * g, 2).index_copy_(0, slots, pos)
        parts = self._read(
            q.reshape(p, g, -1), state.keys, state.values, state.features, pos, state.width
        )
        parts = [
            x.reshape(p * g, -1) if slots is None else x.reshape(p * g, -1)[slots] for x in parts
        ]
        logits = self.head(torch.cat([out, *parts], -1))
        return logits, GruState(state.keys, state.values, state.features, h, g, state.width, slots)

    def select_rows(self, state: GruState, rows: torch.Tensor) -> GruState:
        """The state of rows `rows` (sorted indices into the state's rows); mazes none of
        them belongs to are dropped."""
        g = state.group_size
        slots = (
            torch.arange(state.h.shape[1], device=rows.device)
            if state.slots is None
            else state.slots
        )
        slots = slots[rows]
        keep, prompt = torch.unique(slots // g, return_inverse=True)
        return GruState(
            state.keys[keep], state.values[keep], state.features[keep], state.h[:, rows], g,
            state.width, prompt * g + slots % g,
        )  # fmt: skip

    def forward(self, prompts, group_size, actions, positions):
        feats, keys, values, h0 = self._init(prompts, group_size)
        b, t = actions.shape
        out, _ = self.gru(self.action_embed(previous_actions(actions)), h0[None])  # [B, T, d]
        p = keys.shape[0]
        q = self.wq(out).reshape(p, group_size * t, -1)
        parts = self._read(q, keys, values, feats, positions, prompts.shape[1])
        x = torch.cat([out.reshape(p, group_size * t, -1), *parts], -1)
        return self.head(x).reshape(b, t, N_ACTIONS)
