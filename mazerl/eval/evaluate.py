"""Evaluation sets and the evaluator.

Sets are fixed by `eval.seed` (the same mazes for every run of a sweep) and keyed per maze,
so any maze can be regenerated alone. Training mazes never equal an evaluation maze: the
trainer rejects any whose `Maze.key` is in `EvalSets.keys`.

For every set: sampled pass@k (unbiased, with standard error), exact pass@k from the
policy's exact success probability (one teacher-forced pass over each maze's routes),
success rate, coverage and per-maze success rates.
"""

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from mazerl.core.streams import STREAM_EVAL
from mazerl.envs.maze import Maze, replay
from mazerl.envs.render import render_rgb
from mazerl.envs.spec import MazeSpec, maze_spec
from mazerl.eval.passk import default_ks, exact_pass_at_k, pass_at_k, standard_error
from mazerl.policy.base import SequencePolicy
from mazerl.policy.tokens import encode
from mazerl.rollout import action_logp, generate


@dataclass
class EvalSet:
    name: str
    mazes: list[Maze]


def _set_maze(spec: MazeSpec, seed: int, name: str, i: int) -> Maze:
    return spec.sample(np.random.default_rng([seed, STREAM_EVAL, zlib.crc32(name.encode()), i]))


def build_sets(maze_cfg, eval_cfg) -> list[EvalSet]:
    """The configured evaluation sets: maze i of set S is drawn from
    `default_rng([eval.seed, STREAM_EVAL, crc32(S), i])`, independent of the run seed."""
    sets = []
    for s in eval_cfg.sets:
        spec = maze_spec(maze_cfg, s.size_delta, s.generator, s.start_goal)
        mazes = [_set_maze(spec, eval_cfg.seed, s.name, i) for i in range(s.num_mazes)]
        sets.append(EvalSet(s.name, mazes))
    return sets


def excluded_keys(sets: Sequence[EvalSet]) -> set[bytes]:
    """Keys training must avoid: every evaluation maze. Training mazes come from their own
    stream and skip these, so the evaluation size changes training only where a training
    maze would have equalled an evaluation maze (possible on tiny mazes only)."""
    return {m.key for s in sets for m in s.mazes}


@torch.no_grad()
def route_logprobs(
    policy: SequencePolicy, mazes: Sequence[Maze], temperature: float, device
) -> torch.Tensor:
    """`[M, R]` exact log-probability of each maze's routes under the sampling distribution
    (teacher forcing: the sum of the route's token log-probs); -inf where a maze has fewer
    than R routes. The episode ends on reaching the goal, so a route needs no DONE token."""
    r = max(len(m.routes) for m in mazes)
    length = max(len(route) for m in mazes for route in m.routes)
    actions = torch.zeros(len(mazes) * r, length, dtype=torch.long)
    positions = torch.zeros(len(mazes) * r, length, 2, dtype=torch.long)
    mask = torch.zeros(len(mazes) * r, length)
    valid = torch.zeros(len(mazes), r, dtype=torch.bool)
    for i, m in enumerate(mazes):
        for j in range(r):
            route = m.routes[min(j, len(m.routes) - 1)]
            cells = replay(m.grid, m.start, route)
            row = i * r + j
            actions[row, : len(route)] = torch.tensor(route)
            positions[row, : len(route)] = torch.tensor(cells[:-1])
            positions[row, len(route) :] = torch.tensor(cells[-1])
            mask[row, : len(route)] = 1
            valid[i, j] = j < len(m.routes)
    logits = policy(encode(mazes, device), r, actions.to(device), positions.to(device))
    token = action_logp(logits, actions.to(device), temperature).cpu() * mask
    seq = token.sum(-1).reshape(len(mazes), r)
    return seq.masked_fill(~valid, float("-inf"))


def evaluate_set(
    policy: SequencePolicy,
    eval_set: EvalSet,
    *,
    n: int,
    ks: Sequence[int],
    exact_ks: Sequence[int],
    temperature: float,
    allow_revisits: bool,
    generator: torch.Generator,
    batch_rollouts: int,
    device,
    images: int = 0,
) -> dict:
    """Metrics of one set: scalars under their TensorBoard names (without the `eval/<set>/`
    prefix), plus `per_maze` success rates, exact probabilities and `images`."""
    mazes = eval_set.mazes
    chunk = max(1, batch_rollouts // n)
    correct = np.zeros(len(mazes), dtype=np.int64)
    n_routes = max(len(m.routes) for m in mazes)
    route_counts = np.zeros((len(mazes), n_routes), dtype=np.int64)
    pictures = []
    policy.eval()
    for lo in range(0, len(mazes), chunk):
        part = mazes[lo : lo + chunk]
        r = generate(
            policy,
            part,
            n,
            temperature=temperature,
            allow_revisits=allow_revisits,
            generator=generator,
            device=device,
        )
        correct[lo : lo + len(part)] = r.rewards_by_group.sum(1).long().cpu().numpy()
        ids = r.route.reshape(len(part), n).cpu().numpy()
        maze_idx = np.broadcast_to(np.arange(lo, lo + len(part))[:, None], ids.shape)
        np.add.at(route_counts, (maze_idx[ids >= 0], ids[ids >= 0]), 1)
        for i in range(max(0, min(images - lo, len(part)))):
            paths = [
                replay(
                    part[i].grid,
                    part[i].start,
                    tuple(r.actions[i * n + j, : r.length[i * n + j]].tolist()),
                )
                for j in range(min(n, 8))
            ]
            pictures.append(render_rgb(part[i], paths))
    ks = [k for k in (ks or default_ks(n)) if k <= n]
    out: dict = {}
    for k in ks:
        per_maze = pass_at_k(np.full(len(mazes), n), correct, k)
        out[f"pass@{k}"] = float(per_maze.mean())
        out[f"pass@{k}_se"] = standard_error(per_maze)
    out["success_rate"] = float((correct / n).mean())
    out["coverage"] = float((correct > 0).mean())
    out["per_maze"] = {"successes": correct.tolist(), "n": n, "exact_p": None}
    if not allow_revisits:  # with revisits many sequences succeed: no exact value
        chunks = range(0, len(mazes), 256)
        logp = torch.cat(
            [route_logprobs(policy, mazes[lo : lo + 256], temperature, device) for lo in chunks]
        )
        mass = logp.exp().double()
        p_exact = mass.sum(-1).clamp(max=1.0).numpy()
        for k in exact_ks:
            out[f"exact_pass@{k}"] = float(exact_pass_at_k(p_exact, k).mean())
        out["per_maze"]["exact_p"] = p_exact.tolist()
        if n_routes > 1:
            out["per_maze"]["route_mass"] = mass.numpy().tolist()
            out["per_maze"]["route_valid"] = torch.isfinite(logp).numpy().tolist()
    if n_routes > 1:
        out["per_maze"]["route_counts"] = route_counts.tolist()
    out["images"] = pictures
    return out


def scalars(metrics: dict) -> dict[str, float]:
    """The scalar entries of `evaluate_set`'s result."""
    return {k: v for k, v in metrics.items() if isinstance(v, float)}
