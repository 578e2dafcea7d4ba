"""Group rollouts: P mazes x G samples generated together, scored by the batched stepper.

`generate` runs in inference mode with no Python loop over rollouts: each generated token is
one `policy.step` and one `MazeBatch.step` for all P*G rows. `score` recomputes the log-probs
of the sampled actions with gradients for the update.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from mazerl.core.phases import phase
from mazerl.envs.batch import MazeBatch
from mazerl.envs.maze import DELTAS, Maze, replay
from mazerl.policy.base import BOS_ACTION, SequencePolicy
from mazerl.policy.tokens import N_ACTIONS, Prompts, encode


@dataclass
class Rollouts:
    """B = P * G responses, row `p * G + i` is sample i of maze p.

    T is the longest possible response.

    Attributes:
        mazes: the P mazes.
        prompts: the P mazes, encoded.
        group_size: G, samples per maze.
        actions: `[B, T]` long, the actions taken (0-3 moves, 4 DONE).
        positions: `[B, T, 2]` long, the cell `(row, col)` before each action.
        mask: `[B, T]` float, 1 on the generated tokens.
        logp: `[B, T]` float, each action's log-prob under the sampling policy.
        reward: `[B]` float, 1 iff the goal was reached.
        event: `[B]` long, how each episode ended (an index into `EVENTS`).
        route: `[B]` long, the route id of a successful rollout, else -1.
        length: `[B]` long, generated tokens.
    """

    mazes: list[Maze]
    prompts: Prompts  # the P mazes
    group_size: int
    actions: torch.Tensor  # long
    positions: torch.Tensor  # long, the cell before each action
    mask: torch.Tensor  # float
    logp: torch.Tensor  # float, log-prob of each action under the sampling policy
    reward: torch.Tensor  # [B] float, 1 iff the goal was reached
    event: torch.Tensor  # [B] long, how each episode ended (index into EVENTS)
    route: torch.Tensor  # [B] long, route id of successful rollouts, else -1
    length: torch.Tensor  # [B] long, generated tokens

    @property
    def rewards_by_group(self) -> torch.Tensor:
        return self.reward.reshape(-1, self.group_size)

    @property
    def logp_mean(self) -> torch.Tensor:
        """`[P, G]` each response's mean token log-prob under the sampling policy (nats)."""
        mean = self.logp.sum(-1) / self.mask.sum(-1).clamp(min=1)
        return mean.reshape(-1, self.group_size)

    @property
    def used_length(self) -> int:
        return int(self.length.max().item()) if self.length.numel() else 0

    def select(self, prompts: torch.Tensor | list[int]) -> "Rollouts":
        """Some groups, whole.

        Args:
            prompts: the prompt (maze) indices kept, in the order given.

        Returns:
            The rollouts of those groups.
        """
        idx = torch.as_tensor(prompts, dtype=torch.long, device=self.actions.device)
        rows = (
            idx[:, None] * self.group_size + torch.arange(self.group_size, device=idx.device)
        ).flatten()
        return Rollouts(
            [self.mazes[i] for i in idx.tolist()],
            Prompts(self.prompts.cells[idx], self.prompts.start[idx]),
            self.group_size,
            *(getattr(self, f)[rows] for f in ROW_FIELDS),
        )

    @staticmethod
    def cat(parts: "Sequence[Rollouts]") -> "Rollouts":
        """Concatenate rollouts.

        Args:
            parts: rollouts of mazes with the same grid shape and group size.

        Returns:
            One `Rollouts`, the parts' groups in order, responses padded to the longest T.
        """
        t = max(p.actions.shape[1] for p in parts)
        padded = [
            [
                F.pad(
                    getattr(p, f),
                    (0, 0, 0, t - p.actions.shape[1])
                    if f == "positions"
                    else (0, t - p.actions.shape[1]),
                )
                if getattr(p, f).dim() > 1
                else getattr(p, f)
                for f in ROW_FIELDS
            ]
            for p in parts
        ]
        return Rollouts(
            [m for p in parts for m in p.mazes],
            Prompts(
                torch.cat([p.prompts.cells for p in parts]),
                torch.cat([p.prompts.start for p in parts]),
            ),
            parts[0].group_size,
            *(torch.cat(cols) for cols in zip(*padded, strict=True)),
        )


ROW_FIELDS = ("actions", "positions", "mask", "logp", "reward", "event", "route", "length")


def sample_actions(
    logits: torch.Tensor,
    temperature: float,
    top_p: float,
    generator: torch.Generator | None,
    u: torch.Tensor | None = None,
    greedy: bool = False,
) -> torch.Tensor:
    """Sample actions from `softmax(logits / temperature)`, optionally nucleus-truncated, or
    take the most likely ones (`greedy`).

    Inverse-CDF sampling on the unnormalised weights, one uniform number per row:
    action = #{k < K-1 : cdf_k <= u * cdf_K}, 8 tensor ops (8x faster than `torch.multinomial`
    for 5 actions on CPU; the log-probs are computed once after the loop, `action_logp`).

    Args:
        logits: `[B, K]` next-action logits.
        temperature: divides the logits, > 0.
        top_p: keep the smallest set of actions of mass >= top_p; 1: all.
        generator: draws `u` when it is None.
        u: `[B, 1]` uniform numbers in [0, 1), or None.
        greedy: the most likely action of each row (the first of equal ones), whatever the
            temperature and top_p; nothing is drawn.

    Returns:
        `[B]` long, the sampled actions.
    """
    if greedy:
        return logits.argmax(-1)
    z = logits.float() if temperature == 1.0 else logits.float() / temperature
    weights = (z - z.amax(-1, keepdim=True)).exp()
    if top_p < 1.0:
        sorted_w, order = weights.sort(-1, descending=True)
        cum = sorted_w.cumsum(-1)
        outside = cum - sorted_w >= top_p * cum[:, -1:]
        weights = weights.scatter(-1, order, sorted_w.masked_fill(outside, 0.0))
    cdf = weights.cumsum(-1)
    if u is None:
        u = torch.rand(len(cdf), 1, generator=generator, device=cdf.device)
    return (cdf[:, :-1] <= u * cdf[:, -1:]).sum(-1)


def log_softmax(z: torch.Tensor) -> torch.Tensor:
    """`log_softmax` over the last dim, written out: over 5 actions it is 3.5x faster than
    `torch.log_softmax` on CPU (which vectorises along that dim).

    Args:
        z: `[..., K]` logits.

    Returns:
        `[..., K]` log-probabilities.
    """
    z = z - z.amax(-1, keepdim=True).detach()
    return z - z.exp().sum(-1, keepdim=True).log()


def action_logp(logits: torch.Tensor, actions: torch.Tensor, temperature: float) -> torch.Tensor:
    """The policy's log-probs of actions, as verl takes them whatever top_p: under the
    untruncated tempered distribution `softmax(logits / temperature)`.

    Args:
        logits: `[..., K]` logits.
        actions: `[...]` long, the actions.
        temperature: divides the logits, > 0.

    Returns:
        float32 log-probs, shaped as `actions`.
    """
    logp = log_softmax(logits.float() / temperature)
    return logp.gather(-1, actions[..., None]).squeeze(-1)


def generate(
    policy: SequencePolicy,
    mazes: Sequence[Maze],
    group_size: int,
    *,
    temperature: float = 1.0,
    top_p: float = 1.0,
    allow_revisits: bool = False,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
    share: bool = True,
    greedy: bool = False,
) -> Rollouts:
    """Sample `group_size` responses for each maze.

    Runs in inference mode; the returned tensors are ordinary tensors, usable by the update.
    The same actions are sampled for the same generator state, shared or not (up to float
    rounding: the policy's logits of one prefix computed in a batch of another size).

    Args:
        policy: the policy that samples.
        mazes: the P mazes.
        group_size: G, responses per maze.
        temperature: divides the logits, > 0.
        top_p: nucleus sampling's mass; 1: the whole distribution.
        allow_revisits: whether entering a cell twice continues the episode.
        generator: the source of the samples' randomness (None: torch's global one).
        device: where the tensors go.
        share: run the policy once per distinct prefix of the unfinished rows of a maze,
            where the policy supports `select_rows` (`_decode`); False: once per row.
        greedy: take the most likely action at each token instead of sampling (greedy
            decoding): deterministic, nothing drawn from `generator` or torch's global one;
            the log-probs are still under `softmax(logits / temperature)`.

    Returns:
        The `P * G` rollouts, row `p * G + i` the i-th of maze p.
    """
    with phase("encode"):
        prompts = encode(mazes, device)
    with torch.inference_mode():
        out = _sample(
            policy, mazes, prompts, group_size, temperature, top_p, allow_revisits, generator,
            share, greedy,
        )  # fmt: skip
    return Rollouts(list(mazes), prompts, group_size, *(x.clone() for x in out))


def _sample(
    policy, mazes, prompts, group_size, temperature, top_p, allow_revisits, generator, share,
    greedy=False,
):  # fmt: skip
    """The generation loop (phases `encode`: the policy's prefill, `generate`: the rest): per
    token one policy step, one sample and one stepper advance;
    the per-step tensors are stacked once at the end, and everything derivable (log-probs,
    positions, mask, how episodes ended) comes after. One uniform number per row and step is
    drawn whether the policy runs per row or per prefix (`share`), so the samples do not
    depend on it."""
    device = prompts.cells.device
    with phase("generate"):
        rows = [m for m in mazes for _ in range(group_size)]
        batch = MazeBatch(rows, allow_revisits, None, device)
        t_max = int(batch.max_steps.max().item())
    with phase("encode"):  # the prompts' work: the policy's encoder
        state = policy.prefill(prompts, group_size, t_max)
    with phase("generate"):
        return _decode(
            policy, batch, state, group_size, t_max, temperature, top_p, generator, share, greedy
        )


def _decode(policy, batch, state, group_size, t_max, temperature, top_p, generator, share, greedy):
    """`_sample`'s token loop from the prefilled `state` of the rollouts of `batch` (`greedy`:
    the most likely action at each token).

    With `share`, the policy state holds one row per node, a distinct prefix of the unfinished
    rows of a maze: a maze's G rows start as one node, a node splits where its rows sample
    different actions, and a finished row leaves its node (`select_rows`). The policy runs
    once per node and each row samples from its node's logits with its own uniform number;
    a trained policy's rows mostly agree (at a leaderboard cell's start a group of 32 ends
    in about 5 distinct responses), so a step runs on a fraction of the rows."""
    device, b = batch.device, len(batch.mazes)
    prev = torch.full((b,), BOS_ACTION, dtype=torch.long, device=device)
    sees = policy.sees_position
    if share:  # one node per maze: the state of each maze's first row
        selected = policy.select_rows(state, torch.arange(0, b, group_size, device=device))
        share = selected is not None
    if share:
        state, rows = selected, torch.arange(b, device=device)  # the unfinished rows
        node, node_prev = rows // group_size, prev[::group_size]  # [rows], [nodes]
    step_logits, step_actions = [], []
    for _ in range(t_max):
        if not share:
            logits, state = policy.step(state, prev, batch.pos if sees else None)
            prev = sample_actions(logits, temperature, top_p, generator, greedy=greedy)
        else:
            pos = None
            if sees:  # a node's cell: that of its first row
                first = rows.new_full(node_prev.shape, b).scatter_reduce(0, node, rows, "amin")
                pos = batch.pos[first]
            logits, state = policy.step(state, node_prev, pos)  # [nodes, K]
            logits = logits[node]  # [rows, K]
            u = None if greedy else torch.rand(b, 1, generator=generator, device=device)[rows]
            action = sample_actions(logits, temperature, top_p, None, u, greedy=greedy)
            logits = logits.new_zeros(b, logits.shape[1]).index_copy_(0, rows, logits)
            prev = prev.index_copy(0, rows, action)
        step_logits.append(logits)
        step_actions.append(prev)
        batch.advance(prev)
        if bool(batch.done.all()):
            break
        if share:  # the next nodes: the distinct (node, action) of the unfinished rows
            live = (~batch.done[rows]).nonzero().squeeze(1)
            rows, nodes = rows[live], len(node_prev)
            key, node = torch.unique(node[live] * N_ACTIONS + prev[rows], return_inverse=True)
            parent, node_prev = key // N_ACTIONS, key % N_ACTIONS  # sorted: in maze order
            if not torch.equal(parent, torch.arange(nodes, device=device)):
                state = policy.select_rows(state, parent)
    pad = t_max - len(step_actions)  # responses are [B, t_max] whatever length was used
    length = batch.steps
    mask = (torch.arange(t_max, device=device)[None] < length[:, None]).float()
    # actions beyond each response are 0 (UP) whether or not rows were shared
    actions = F.pad(torch.stack(step_actions, 1), (0, pad)) * mask.long()
    logits = F.pad(torch.stack(step_logits, 1), (0, 0, 0, pad))
    return (
        actions,
        positions_before(actions, batch.start, (batch.H, batch.W)),
        mask,
        action_logp(logits, actions, temperature) * mask,
        batch.success.float(),
        batch.event,
        batch.route,
        length.clone(),
    )


def teacher_forced(
    mazes: Sequence[Maze], moves: Sequence[Sequence[int]], group_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Given move sequences as a batch for teacher forcing (`policy(prompts, group_size, ...)`).

    Used by SFT (demonstrations), exact route probabilities and the tests.

    Args:
        mazes: the mazes; row b is on maze `b // group_size`.
        moves: B move sequences; row b holds `moves[b]`.
        group_size: rows per maze.

    Returns:
        The actions `[B, T]` (long), the cell before each action `[B, T, 2]` (long; a move
        into a wall stays put, padding repeats the last cell) and the mask `[B, T]` (float)
        of the given moves, T the longest sequence.
    """
    b, t = len(moves), max(len(m) for m in moves)
    actions = torch.zeros(b, t, dtype=torch.long)
    positions = torch.zeros(b, t, 2, dtype=torch.long)
    mask = torch.zeros(b, t)
    for row, seq in enumerate(moves):
        maze = mazes[row // group_size]
        cells = replay(maze.grid, maze.start, tuple(seq))  # start, then after each legal move
        cells = cells + [cells[-1]] * (t + 1 - len(cells))  # [T + 1]: walls and padding stay
        actions[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        positions[row] = torch.tensor(cells[:t])
        mask[row, : len(seq)] = 1
    return actions, positions, mask


def positions_before(actions: torch.Tensor, start: torch.Tensor, shape) -> torch.Tensor:
    """The cell before each action: the start plus the earlier moves.

    An episode ends at its first wall or stop, so no later token needs another rule.

    Args:
        actions: `[B, T]` long, the actions (0-3 moves, 4 DONE).
        start: `[B, 2]` long, each row's start cell `(row, col)`.
        shape: the grid's `(H, W)`.

    Returns:
        `[B, T, 2]` long cells, clamped to the grid beyond the end of each response.
    """
    deltas = torch.tensor((*DELTAS, (0, 0)), dtype=torch.long, device=actions.device)
    steps = deltas[actions.clamp(max=len(DELTAS))]
    before = start[:, None] + steps.cumsum(1) - steps
    limit = torch.tensor([shape[0] - 1, shape[1] - 1], device=actions.device)
    return torch.minimum(before.clamp(min=0), limit)


def distinct_rows(rollouts: Rollouts, used: int) -> tuple[torch.Tensor, int, torch.Tensor]:
    """The distinct responses of each group, laid out for one teacher-forced pass.

    Rows of one maze with the same actions (and so the same cells) have the same logits, and
    a trained policy repeats itself: at a leaderboard cell's start about 15% of a group of 32
    is distinct. Each group's distinct responses fill G' = (the most in any group) slots,
    a group with fewer repeating its first.

    Args:
        rollouts: B = P * G responses.
        used: the response tokens compared (the longest response).

    Returns:
        `layout [P * G']` long, the row filling each slot; G'; `slot [B]` long, the slot
        holding each row's response.
    """
    b, g = rollouts.actions.shape[0], rollouts.group_size
    rows = torch.arange(b, device=rollouts.actions.device)
    maze = rows // g
    key = torch.cat(
        [maze[:, None], rollouts.actions[:, :used], rollouts.positions[:, :used].flatten(1)], 1
    )  # [B, 1 + 3 * used]
    # sorted rows: the distinct responses of maze 0, then maze 1, ...
    unique, inverse = torch.unique(key, dim=0, return_inverse=True)
    owner = unique[:, 0]  # [U] the maze of each distinct response
    counts = torch.bincount(owner, minlength=b // g)  # [P]
    width = int(counts.max())  # G'
    rank = torch.arange(len(unique), device=rows.device) - (counts.cumsum(0) - counts)[owner]
    place = owner * width + rank  # [U] each distinct response's slot
    first = rows.new_full((len(unique),), b).scatter_reduce(0, inverse, rows, "amin")  # [U]
    layout = (torch.arange(b // g, device=rows.device) * g).repeat_interleave(width)
    layout = layout.index_copy(0, place, first)  # [P * G']: unused slots hold row p * G
    return layout, width, place[inverse]


def score(
    policy: SequencePolicy, rollouts: Rollouts, temperature: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The taken actions' log-probs under the current policy, with gradients, for the update.

    The forward pass covers only the longest response and each group's distinct responses
    once (`distinct_rows`); each row reads its response's log-probs, so a repeated response's
    gradient is the sum over its rows, as in the pass over every row (up to float rounding).
    The result is padded back to T.

    Args:
        policy: the policy being trained.
        rollouts: the sampled responses.
        temperature: divides the logits, as when sampling.

    Returns:
        The log-probs `[B, T]` and the per-token entropies `[B, T]` (nats), both zero beyond
        each response.
    """
    used = max(rollouts.used_length, 1)
    layout, width, slot = distinct_rows(rollouts, used)
    actions = rollouts.actions[layout, :used]  # [P * G', used]
    logits = policy(rollouts.prompts, width, actions, rollouts.positions[layout, :used])
    logp_all = log_softmax(logits.float() / temperature)  # [P * G', used, K]
    logp = logp_all.gather(-1, actions[..., None]).squeeze(-1)[slot]  # [B, used]
    entropy = -(logp_all.exp() * logp_all).sum(-1)[slot]
    pad = rollouts.actions.shape[1] - used
    mask = rollouts.mask
    return F.pad(logp, (0, pad)) * mask, F.pad(entropy, (0, pad)) * mask
