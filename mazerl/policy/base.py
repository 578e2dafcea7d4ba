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
    whole response with gradients.

    Attributes:
        config_class: the policy's settings (`policy.*` keys), a `PolicyConfig` subclass.
    """

    config_class: type[PolicyConfig] = PolicyConfig

    def prefill(self, prompts: Prompts, group_size: int, max_len: int) -> Any:
        """The decoding state of the rollouts of a batch of prompts.

        Args:
            prompts: `P` encoded mazes.
            group_size: rollouts per prompt, G.
            max_len: the most tokens of a response.

        Returns:
            The state of `P * G` rollouts, row-major by prompt (rows `p * G ... p * G + G - 1`
            are prompt p's).
        """
        raise NotImplementedError

    def step(self, state: Any, prev: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """One decoding step.

        Only the returned state may be stepped again (states may share buffers, e.g. a KV
        cache).

        Args:
            state: the state from `prefill`, `select_rows` or the last `step`.
            prev: `[B]` long, the previous action (`BOS_ACTION` at the first step).
            pos: `[B, 2]` long, the current cell `(row, col)`; None unless `sees_position`.

        Returns:
            The next-action logits `[B, N_ACTIONS]` and the new state.
        """
        raise NotImplementedError

    def forward(
        self, prompts: Prompts, group_size: int, actions: torch.Tensor, positions: torch.Tensor
    ) -> torch.Tensor:
        """Teacher forcing: the logits of whole responses, with gradients.

        Args:
            prompts: `P` encoded mazes.
            group_size: rollouts per prompt, G (`B = P * G`, row-major by prompt).
            actions: `[B, T]` long, the actions taken.
            positions: `[B, T, 2]` long, the cell before each action.

        Returns:
            `[B, T, N_ACTIONS]` logits of every action given the ones before it.
        """
        raise NotImplementedError

    def select_rows(self, state: Any, rows: torch.Tensor) -> Any:
        """The decoding state of some rows only, so that generation stops paying for finished
        rows and runs rows with the same prefix once.

        Args:
            state: a decoding state.
            rows: `[B']` long, non-decreasing indices into the state's rows; a row given k
                times becomes k rows (one prefix whose rollouts go on differently).

        Returns:
            The state of those rows; None where a policy cannot (then every row keeps
            running, one policy row per row): a policy answers every call or none.
        """
        return None

    @property
    def sees_position(self) -> bool:
        """Whether `step` reads `pos` (otherwise the caller may pass None)."""
        return bool(self.cfg.sees_position)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def previous_actions(actions: torch.Tensor) -> torch.Tensor:
    """The previous action at each step, as `step` and `forward` read it.

    Args:
        actions: `[B, T]` long, the actions taken.

    Returns:
        `[B, T]`: `BOS_ACTION`, then the actions shifted right by one.
    """
    bos = torch.full_like(actions[:, :1], BOS_ACTION)
    return torch.cat([bos, actions[:, :-1]], dim=1)
