"""The interface every sequence policy implements, and the policy registry.

A policy reads a maze prompt and emits response actions (`tokens.N_ACTIONS` = 4 moves + DONE)
one at a time, seeing only the prompt and its own previous actions; with
`sees_position=True` it is also given its current `(row, col)` at each step.

Work that depends only on the prompt is done once per maze (`prefill`) and shared by the G
rollouts of its group, both when sampling (`step`) and in the teacher-forced update
(`forward`).
"""

from typing import Any

import torch
from torch import nn

from mazerl.policy.config import POLICIES, PolicyConfig, policy_name  # noqa: F401  (the API)
from mazerl.policy.tokens import Prompts

BOS_ACTION = 5  # "previous action" at the first response step


class SequencePolicy(nn.Module):
    """Base class: `prefill` once per prompt, `step` per generated token, `forward` to score a
    whole response with gradients."""

    config_class: type[PolicyConfig] = PolicyConfig

    def prefill(self, prompts: Prompts, group_size: int, max_len: int) -> Any:
        """Decoding state for `P * group_size` rollouts of `P` prompts (row-major by prompt),
        for responses of at most `max_len` tokens."""
        raise NotImplementedError

    def step(self, state: Any, prev: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """`prev [B]` previous action (`BOS_ACTION` first), `pos [B, 2]` current cell (None
        unless `sees_position`) -> next-action logits `[B, N_ACTIONS]` and the new state. Only
        the returned state may be stepped again (states may share buffers, e.g. a KV cache)."""
        raise NotImplementedError

    def forward(
        self, prompts: Prompts, group_size: int, actions: torch.Tensor, positions: torch.Tensor
    ) -> torch.Tensor:
        """Teacher forcing: `actions [B, T]` taken, `positions [B, T, 2]` the cell before each
        action -> logits `[B, T, N_ACTIONS]` of every action given the ones before it."""
        raise NotImplementedError

    def select_rows(self, state: Any, rows: torch.Tensor) -> Any:
        """The decoding state of rows `rows` only (sorted indices into the state's rows), so
        that generation stops paying for finished rows; None where a policy cannot (then
        every row keeps running)."""
        return None

    @property
    def sees_position(self) -> bool:
        """Whether `step` reads `pos` (otherwise the caller may pass None)."""
        return bool(self.cfg.sees_position)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def previous_actions(actions: torch.Tensor) -> torch.Tensor:
    """`[B, T]` -> `[B, T]`: BOS then the actions shifted right by one."""
    bos = torch.full_like(actions[:, :1], BOS_ACTION)
    return torch.cat([bos, actions[:, :-1]], dim=1)
