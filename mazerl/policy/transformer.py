"""`transformer`: a decoder-only transformer over [maze tokens, move tokens], Qwen2-style.

RMSNorm, RoPE, grouped-query attention (`kv_heads` < `heads`), SiLU-gated FFN, tied
input/output embeddings over the 32-token vocabulary (the output is restricted to the 5
response tokens). `conf/policy/transformer_paper.yaml` is the paper's model (4 layers, hidden
256, FFN 1024, 4 heads, 2 KV heads, RoPE theta 1e6: about 3.9M parameters).

The prompt is processed once per maze; its keys and values are shared by the G rollouts of
the group (no copy), both in cached decoding (`step`, one token at a time) and in the
teacher-forced update (`forward`). Response tokens attend to the shared prompt and causally
to their own earlier tokens.

Initialisation: token embeddings N(0, 0.02) as in Qwen2; the Linear layers keep PyTorch's
default (Kaiming-uniform, bound 1/sqrt(fan_in)), where Qwen2 draws them from N(0, 0.02). The
RL experiments start from an SFT base model, so the initialisation only shapes SFT.

Shapes: P prompts, G rollouts each, B = P * G rows; L prompt tokens, T response tokens;
d = hidden, h query heads and kvh key/value heads of hd = d / h dimensions.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from mazerl.policy.base import BOS_ACTION, POLICIES, SequencePolicy
from mazerl.policy.config import TransformerConfig
from mazerl.policy.tokens import RESPONSE_TOKENS, VOCAB_SIZE, Prompts, sinusoid_2d


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def rope(x: torch.Tensor, pos: torch.Tensor, theta: float) -> torch.Tensor:
    """Rotate `x [..., T, hd]` by positions `pos [T]` or `[B, 1, T]`-broadcastable."""
    hd = x.shape[-1]
    inv = theta ** (-torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd)
    ang = pos.float()[..., None] * inv  # [..., T, hd/2]
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
    return x * cos.to(x.dtype) + torch.cat([-x2, x1], -1) * sin.to(x.dtype)


def shared_prefix_attention(q, kp, vp, kr, vr, group_size: int) -> torch.Tensor:
    """Attention of response queries over a per-prompt prefix and their own keys.

    q `[B, h, T, hd]` (B = P * G), prefix kp/vp `[P, kvh, L, hd]`, response kr/vr
    `[B, kvh, S, hd]` with S >= T; query i sits at response index S - T + i and sees response
    keys j <= S - T + i. Returns `[B, h, T, hd]`.
    """
    b, h, t, hd = q.shape
    p, kvh, length, _ = kp.shape
    rep, g, s = h // kvh, group_size, kr.shape[2]
    scale = 1.0 / math.sqrt(hd)
    # prefix scores, computed per prompt: [P, kvh, G*rep*T, L]
    qp = q.reshape(p, g, kvh, rep, t, hd).transpose(1, 2).reshape(p, kvh, g * rep * t, hd)
    sp = (qp @ kp.transpose(-1, -2)) * scale
    sp = sp.reshape(p, kvh, g, rep, t, length).transpose(1, 2).reshape(b, kvh, rep, t, length)
    # own scores: [B, kvh, rep*T, S], causal; the query heads of a KV group are folded into
    # the rows so that this is a plain batched matmul (no broadcast copy of the cache)
    qr = q.reshape(b, kvh, rep * t, hd)
    sr = (qr @ kr.transpose(-1, -2)).reshape(b, kvh, rep, t, s) * scale
    allowed = (
        torch.arange(s, device=q.device)[None]
        <= (s - t + torch.arange(t, device=q.device))[:, None]
    )
    sr = sr.masked_fill(~allowed, float("-inf"))
    w = torch.cat([sp, sr], -1).softmax(-1)
    wp = w[..., :length].reshape(p, g, kvh, rep, t, length).transpose(1, 2)
    out_p = (wp.reshape(p, kvh, g * rep * t, length) @ vp).reshape(p, kvh, g, rep, t, hd)
    out_p = out_p.transpose(1, 2).reshape(b, kvh, rep, t, hd)
    out_r = (w[..., length:].reshape(b, kvh, rep * t, s) @ vr).reshape(b, kvh, rep, t, hd)
    return (out_p + out_r).reshape(b, h, t, hd)


class Block(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        d, self.h, self.kvh = cfg.hidden, cfg.heads, cfg.kv_heads
        self.hd, self.theta = d // cfg.heads, cfg.rope_theta
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, self.h * self.hd)
        self.k = nn.Linear(d, self.kvh * self.hd)
        self.v = nn.Linear(d, self.kvh * self.hd)
        self.o = nn.Linear(self.h * self.hd, d, bias=False)
        self.gate = nn.Linear(d, cfg.ffn, bias=False)
        self.up = nn.Linear(d, cfg.ffn, bias=False)
        self.down = nn.Linear(cfg.ffn, d, bias=False)

    def _qkv(self, x, pos):
        """`x [B, T, d]` at positions `pos` -> rotated q `[B, h, T, hd]`, k and v `[B, kvh, T,
        hd]`."""
        b, t, _ = x.shape
        y = self.attn_norm(x)
        q = (
            self.q(y).reshape(b, t, self.h, self.hd).transpose(1, 2)
        )  # [B, T, h*hd] -> [B, h, T, hd]
        k = self.k(y).reshape(b, t, self.kvh, self.hd).transpose(1, 2)  # -> [B, kvh, T, hd]
        v = self.v(y).reshape(b, t, self.kvh, self.hd).transpose(1, 2)  # -> [B, kvh, T, hd]
        return rope(q, pos, self.theta), rope(k, pos, self.theta), v

    def _finish(self, x, att):
        """Residual attention output `att [B, h, T, hd]`, then the gated FFN: `[B, T, d]`."""
        x = x + self.o(att.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1))  # [B, T, h*hd]
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))

    def prompt(self, x, pos):
        """Causal self-attention over the prompt `[P, L, d]`; returns output, K, V."""
        q, k, v = self._qkv(x, pos)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self._finish(x, att), k, v

    def response(self, x, pos, kp, vp, group_size, cache=None, t=0):
        """Response tokens `[B, T, d]` (response indices t..t+T-1) over the shared prompt
        K/V and, causally, the response's own keys: from `cache` (K, V `[B, kvh, T_max, hd]`,
        written in place at t..t+T-1) when decoding, else these T tokens alone."""
        q, k, v = self._qkv(x, pos)
        if cache is not None:
            cache[0][:, :, t : t + k.shape[2]] = k
            cache[1][:, :, t : t + k.shape[2]] = v
            k, v = cache[0][:, :, : t + k.shape[2]], cache[1][:, :, : t + k.shape[2]]
        return self._finish(x, shared_prefix_attention(q, kp, vp, k, v, group_size))


@dataclass(frozen=True)
class TransformerState:
    """Decoding state. `step` returns a new state; the per-layer response K/V buffers are
    shared between a state and its successor (each step writes its own index), so only the
    newest state may be stepped."""

    prompt_kv: list  # per layer (K, V) `[P, kvh, L, hd]`
    cache: list | None  # per layer (K, V) `[B, kvh, T_max, hd]`; None: teacher forcing
    first_logits: torch.Tensor  # [B, N_ACTIONS], logits of the first action
    length: int  # prompt length L
    t: int  # response tokens fed so far
    group_size: int
    grid: tuple[int, int]


@POLICIES.register("transformer")
class TransformerPolicy(SequencePolicy):
    config_class = TransformerConfig

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.hidden
        self.embed = nn.Embedding(VOCAB_SIZE, d)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(d)
        self.pos_proj = nn.Linear(d, d, bias=False) if cfg.pos2d or cfg.sees_position else None
        self.register_buffer("response_ids", torch.tensor(RESPONSE_TOKENS), persistent=False)

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) @ self.embed.weight[self.response_ids].T

    def _pos_features(self, pos: torch.Tensor, grid: tuple[int, int]) -> torch.Tensor:
        table = self.pos_proj(sinusoid_2d(*grid, self.cfg.hidden, pos.device))
        return table[pos[..., 0], pos[..., 1]]

    def _prompt(self, prompts: Prompts):
        """Run the prompt once: per-layer K/V and the logits of the first action `[P, 5]`."""
        tokens = prompts.tokens()  # [P, L]
        x = self.embed(tokens)
        if self.cfg.pos2d:
            h, w = prompts.shape
            cells = self.pos_proj(sinusoid_2d(h, w, self.cfg.hidden, tokens.device))
            index = prompts.cell_index().reshape(-1)
            x = x.index_add(1, index, cells.reshape(1, h * w, -1).expand(len(x), -1, -1))
        if self.cfg.sees_position:  # before its first move the agent stands on the start
            last = self._pos_features(prompts.start, prompts.shape)
            x = torch.cat([x[:, :-1], x[:, -1:] + last[:, None]], 1)
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        kv = []
        for block in self.blocks:
            x, k, v = block.prompt(x, pos)
            kv.append((k, v))
        return kv, self._logits(x[:, -1])

    def _response(self, prev, pos, state: TransformerState):
        """Feed response tokens `prev [B, T]` (response indices state.t ..) -> logits
        `[B, T, 5]`; `pos [B, T, 2]` is the cell after each of those moves, fed when
        `sees_position`."""
        x = self.embed(self.response_ids[prev])  # [B, T, d]
        if self.cfg.sees_position:
            x = x + self._pos_features(pos, state.grid)
        abs_pos = state.length + state.t + torch.arange(prev.shape[1], device=prev.device)
        for i, block in enumerate(self.blocks):
            cache = None if state.cache is None else state.cache[i]
            x = block.response(x, abs_pos, *state.prompt_kv[i], state.group_size, cache, state.t)
        return self._logits(x)

    def prefill(self, prompts: Prompts, group_size: int, max_len: int = 0) -> TransformerState:
        kv, first = self._prompt(prompts)
        b = first.shape[0] * group_size
        blk = self.blocks[0]
        shape = (b, blk.kvh, max(max_len, 1), blk.hd)
        caches = [(first.new_zeros(shape), first.new_zeros(shape)) for _ in self.blocks]
        length = prompts.tokens().shape[1]
        first = first.repeat_interleave(group_size, 0)
        return TransformerState(kv, caches, first, length, 0, group_size, prompts.shape)

    def step(self, state: TransformerState, prev: torch.Tensor, pos: torch.Tensor):
        if bool((prev == BOS_ACTION).all()):  # the first action: logits from the prompt pass
            return state.first_logits, state
        # [B] -> [B, 1]: one response token per row
        logits = self._response(prev[:, None], None if pos is None else pos[:, None], state)
        return logits[:, 0], dataclasses.replace(state, t=state.t + 1)

    def forward(self, prompts, group_size, actions, positions):
        kv, first = self._prompt(prompts)
        first = first.repeat_interleave(group_size, 0)[:, None]  # [P, 5] -> [B, 1, 5]
        if actions.shape[1] == 1:
            return first
        length = prompts.tokens().shape[1]
        state = TransformerState(kv, None, first[:, 0], length, 0, group_size, prompts.shape)
        # action j is fed to predict action j + 1: [B, T - 1] -> logits [B, T - 1, 5]
        rest = self._response(actions[:, :-1], positions[:, 1:], state)
        return torch.cat([first, rest], 1)
