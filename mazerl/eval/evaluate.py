"""Evaluation sets and the evaluator.

Sets are fixed by `eval.seed` (the same mazes for every run of a sweep) and keyed per maze,
so any maze can be regenerated alone. Training mazes never equal an evaluation maze: the
trainer rejects any whose `Maze.key` is in `EvalSets.keys`.

For every set: exact pass@k from the policy's exact success probability of every maze (one
teacher-forced pass over each maze's routes, cheap enough for thousands of mazes), with its
standard error across mazes; and, on the first `sampled_mazes` mazes of the set, sampled
pass@k (unbiased, with standard error), success rate and coverage as a cross-check. Per-maze
values (success counts, exact probabilities, route masses) are returned for `eval/*.json`.
A set's result is a `SetResult`: its values keyed by `Metric`; `SetResult.to_json` writes each
under its `Metric.key` (`pass@1`, `exact_pass@256_se`), the files' keys.
"""

import hashlib
import numbers
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from mazerl.core.errors import ConfigError
from mazerl.core.streams import STREAM_EVAL
from mazerl.envs.maze import EVENTS, Maze
from mazerl.envs.render import render_behaviour
from mazerl.envs.spec import MazeSpec, eval_set_spec
from mazerl.eval.metric_names import Metric, set_values
from mazerl.eval.metrics import METRICS
from mazerl.eval.passk import exact_pass_at_k, pass_at_k, sampled_ks, standard_error
from mazerl.policy.base import SequencePolicy
from mazerl.policy.tokens import encode
from mazerl.rollout import action_logp, generate, teacher_forced


@dataclass
class EvalSet:
    """One evaluation set.

    Attributes:
        name: the set's name (`eval/<name>/...` in TensorBoard).
        mazes: its mazes, in order.
    """

    name: str
    mazes: list[Maze]


@dataclass
class SetResult:
    """One evaluation set's result.

    Attributes:
        values: `{Metric: value}`, each metric named within the set (`Metric("pass", k=1)`:
            no set, no source), every value a float.
        per_maze: the per-maze values (`evaluate_set`); empty where none were kept.
        images: the behaviour pictures (`HWC` uint8 arrays); never saved.
    """

    values: dict[Metric, float]
    per_maze: dict = field(default_factory=dict)
    images: list = field(default_factory=list)

    def on_set(self, name: str, source: str = "eval") -> dict[Metric, float]:
        """The values as metrics of the set `name` (`eval/<name>/pass@1`, ...).

        Args:
            name: the set's name.
            source: `eval`, or `routes` for route metrics.

        Returns:
            `{Metric: value}`, each metric with its set and source.
        """
        return {replace(m, set=name, source=source): v for m, v in self.values.items()}

    def to_json(self) -> dict:
        """The result as saved (`eval/step_*.json`, the stored base evaluation, `eval.json`'s
        sets).

        Returns:
            Each value under its `Metric.key` (`pass@1`, `exact_pass@256_se`), then
            `per_maze` (if any); no images.
        """
        out: dict = {m.key: v for m, v in self.values.items()}
        return out | ({"per_maze": self.per_maze} if self.per_maze else {})

    @classmethod
    def from_json(cls, saved: dict) -> "SetResult":
        """A result read back from what `to_json` saved.

        Args:
            saved: a set's entry of a saved evaluation.

        Returns:
            The result: its metrics (`set_values`, on no set yet, as `evaluate_set` names
            them), and its `per_maze` values.
        """
        return cls(set_values(saved, ""), saved.get("per_maze", {}))


def _set_maze(spec: MazeSpec, seed: int, name: str, i: int) -> Maze:
    return spec.sample(np.random.default_rng([seed, STREAM_EVAL, zlib.crc32(name.encode()), i]))


def build_sets(spec: MazeSpec, eval_cfg, log: Callable[[str], None] = print) -> list[EvalSet]:
    """The configured evaluation sets of a run on the mazes of `spec`. A set with a `layout` is
    every maze of that collection. Otherwise maze i of set S is drawn from the training spec's
    variant (`eval_set_spec`) with `default_rng([eval.seed, STREAM_EVAL, crc32(S), i])`,
    independent of the run seed, like the training mazes; in a layout run a set
    without variants (size_delta, generator, start_goal) is the training collection itself,
    and sets with variants are skipped, with a note, when no generator makes its grid.

    Args:
        spec: the run's maze source (its `MazeTask`'s spec).
        eval_cfg: the `eval` settings (`EvalConfig`): `sets` and `seed`.
        log: prints the note about skipped sets.

    Returns:
        The sets, in the configured order.

    Raises:
        ConfigError: no set is left.
    """
    sets, skipped = [], []
    for s in eval_cfg.sets:
        set_spec = eval_set_spec(spec, s)
        if set_spec is None:
            skipped.append(s.name)
        elif set_spec.collection is not None:
            sets.append(EvalSet(s.name, list(set_spec.collection)))
        else:
            mazes = [_set_maze(set_spec, eval_cfg.seed, s.name, i) for i in range(s.num_mazes)]
            sets.append(EvalSet(s.name, mazes))
    if skipped:
        log(
            f"note: evaluation set(s) {', '.join(skipped)} skipped: they vary the training "
            f"generator (size_delta, generator, start_goal), and no generator makes the grid of "
            f"maze.layout={spec.layout}; give them a layout to keep them"
        )
    if not sets:
        raise ConfigError("eval.sets: no evaluation set left; add one, e.g. {name: id}")
    return sets


def excluded_keys(sets: Sequence[EvalSet]) -> set[bytes]:
    """Keys training must avoid: every evaluation maze. Training mazes come from their own
    stream and skip these, so the evaluation size changes training only where a training
    maze would have equalled an evaluation maze (possible on tiny mazes only). A layout
    training pool is used whole, shared mazes included (`TrainingMazes` says so).

    Args:
        sets: the evaluation sets.

    Returns:
        The `Maze.key` of every evaluation maze.
    """
    return {m.key for s in sets for m in s.mazes}


@torch.no_grad()
def route_logprobs(
    policy: SequencePolicy, mazes: Sequence[Maze], temperature: float, device
) -> torch.Tensor:
    """The exact log-probability of each maze's routes under the sampling distribution
    (teacher forcing: the sum of the route's token log-probs). The episode ends on reaching
    the goal, so a route needs no DONE token.

    Args:
        policy: the policy evaluated.
        mazes: the M mazes.
        temperature: the sampling temperature (> 0).
        device: where the policy runs.

    Returns:
        `[M, R]` log-probabilities, R the most routes of a maze; -inf where a maze has fewer
        than R routes.
    """
    r = max(len(m.routes) for m in mazes)
    # row i * r + j: route j of maze i (a maze with fewer routes repeats its last, masked out)
    rows = [m.routes[min(j, len(m.routes) - 1)] for m in mazes for j in range(r)]
    actions, positions, mask = teacher_forced(mazes, rows, r)
    valid = torch.tensor([[j < len(m.routes) for j in range(r)] for m in mazes])
    logits = policy(encode(mazes, device), r, actions.to(device), positions.to(device))
    token = action_logp(logits, actions.to(device), temperature).cpu() * mask
    seq = token.sum(-1).reshape(len(mazes), r)
    return seq.masked_fill(~valid, float("-inf"))


EXACT_CHUNK = 256  # mazes per teacher-forced pass (their routes side by side)


def exact_route_masses(
    policy: SequencePolicy, mazes: Sequence[Maze], temperature: float, device
) -> tuple[np.ndarray, np.ndarray]:
    """The exact probability of each maze's routes, computed in chunks of EXACT_CHUNK mazes.

    Args:
        policy: the policy evaluated.
        mazes: the M mazes.
        temperature: the sampling temperature (> 0).
        device: where the policy runs.

    Returns:
        `[M, R]` float64 probabilities (0 where a maze has fewer than R routes) and the
        `[M, R]` bool mask of real routes.
    """
    r = max(len(m.routes) for m in mazes)
    parts = []
    for lo in range(0, len(mazes), EXACT_CHUNK):
        logp = route_logprobs(policy, mazes[lo : lo + EXACT_CHUNK], temperature, device)
        parts.append(torch.nn.functional.pad(logp, (0, r - logp.shape[1]), value=-torch.inf))
    logp = torch.cat(parts)
    return logp.exp().double().numpy(), torch.isfinite(logp).numpy()


def sampled_metrics(correct: np.ndarray, n: int, ks) -> dict[Metric, float]:
    """Sampled metrics of `correct[m]` successes in n samples of each maze m, by `Metric`
    (named within the set): `pass@k` and its standard error over mazes for every k of
    `sampled_ks(ks, n)` (`ks` up to n; None: `default_ks(n)`), then every registered metric
    (`mazerl.eval.metrics.METRICS`: `success_rate`, `coverage` (the share of mazes solved at
    least once), ...)."""
    out: dict = {}
    for k in sampled_ks(ks, n):
        per_maze = pass_at_k(np.full(len(correct), n), correct, k)
        metric = Metric("pass", k=k)
        out[metric] = float(per_maze.mean())
        out[metric.se()] = standard_error(per_maze)
    for name in METRICS.names():
        out[Metric(name)] = float(METRICS.get(name)(correct, n))
    return out


def mazes_hash(mazes: Sequence[Maze]) -> str:
    """A name for an ordered list of mazes: runs whose evaluations carry the same hash were
    evaluated on the same mazes and can be compared maze by maze.

    Args:
        mazes: the mazes, in order.

    Returns:
        16 hex digits.
    """
    h = hashlib.sha256()
    for m in mazes:
        h.update(hashlib.sha256(m.key).digest())
    return h.hexdigest()[:16]


def sampled_counts(
    policy: SequencePolicy,
    mazes: Sequence[Maze],
    *,
    n: int,
    temperature: float,
    allow_revisits: bool,
    generator: torch.Generator,
    batch_rollouts: int,
    device,
    images: int = 0,
) -> tuple[np.ndarray, np.ndarray, list]:
    """Sample n responses per maze and count the successes.

    Args:
        policy: the policy evaluated.
        mazes: the M mazes.
        n: samples per maze.
        temperature: the sampling temperature (> 0).
        allow_revisits: whether entering a cell twice continues an episode.
        generator: the samples' randomness.
        batch_rollouts: the most rollouts generated at once (whole mazes: at least one).
        device: where the policy runs.
        images: how many of the first mazes get a behaviour picture.

    Returns:
        `[M]` success counts, `[M, R]` successes per route id, and the behaviour pictures
        of the first `images` mazes (`render_behaviour`: visit heat map of the n samples,
        four of them drawn with their end events, the success rate).
    """
    chunk = max(1, batch_rollouts // n)
    correct = np.zeros(len(mazes), dtype=np.int64)
    route_counts = np.zeros((len(mazes), max(len(m.routes) for m in mazes)), dtype=np.int64)
    pictures = []
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
            rows = range(i * n, (i + 1) * n)
            samples = [r.actions[j, : r.length[j]].tolist() for j in rows]
            events = [EVENTS[e] for e in r.event[i * n : (i + 1) * n].tolist()]
            name = f"{part[i].name} #{lo + i}"
            pictures.append(render_behaviour(part[i], samples, events, name))
    return correct, route_counts, pictures


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
    sampled_mazes: int | None = None,
) -> SetResult:
    """Metrics of one set: its values by `Metric` (named within the set), its `per_maze`
    values and `images`.

    Exact metrics (`exact_pass@k` and `_se` for k in `exact_ks`) cover every maze of the set;
    sampled ones (`pass@k`, `success_rate`, `coverage`) the first `sampled_mazes` (None: all),
    n samples each.

    Args:
        policy: the policy evaluated.
        eval_set: the set.
        n: samples per maze.
        ks: the ks of sampled pass@k (those up to n).
        exact_ks: the ks of exact pass@k.
        temperature: the sampling temperature (> 0).
        allow_revisits: whether entering a cell twice continues an episode.
        generator: the samples' randomness.
        batch_rollouts: the most rollouts generated at once.
        device: where the policy runs.
        images: how many of the first mazes get a behaviour picture.
        sampled_mazes: how many of the first mazes are sampled; None: all.

    Returns:
        The set's `SetResult`: the values (any real number a metric gives, as a float), the
        `images`, and `per_maze`: `successes` (the sampled mazes), `n`, `exact_p` (every
        maze; None with `allow_revisits`, where many sequences succeed and no exact value
        exists), `mazes_hash`, and for multi-route mazes `route_mass`, `route_valid`,
        `route_counts`.
    """
    mazes = eval_set.mazes
    sampled = mazes[: sampled_mazes or len(mazes)]
    policy.eval()
    correct, route_counts, pictures = sampled_counts(
        policy,
        sampled,
        n=n,
        temperature=temperature,
        allow_revisits=allow_revisits,
        generator=generator,
        batch_rollouts=batch_rollouts,
        device=device,
        images=images,
    )
    out = sampled_metrics(correct, n, ks)
    per: dict = {"successes": correct.tolist(), "n": n, "exact_p": None}
    per["mazes_hash"] = mazes_hash(mazes)
    if not allow_revisits:
        mass, valid = exact_route_masses(policy, mazes, temperature, device)
        p_exact = mass.sum(-1).clip(max=1.0)
        for k in exact_ks:
            per_maze = exact_pass_at_k(p_exact, k)
            metric = Metric("exact_pass", k=k)
            out[metric] = float(per_maze.mean())
            out[metric.se()] = standard_error(per_maze)
        per["exact_p"] = p_exact.tolist()
        if mass.shape[1] > 1:
            per["route_mass"] = mass.tolist()
            per["route_valid"] = valid.tolist()
    if route_counts.shape[1] > 1:
        per["route_counts"] = route_counts.tolist()
    values = {m: float(v) for m, v in out.items() if is_scalar(v)}  # any real type: a float
    return SetResult(values, per, pictures)


def is_scalar(value) -> bool:
    """Whether a value is one real number: a Python or NumPy int or float, or a 0-d tensor or
    array of one (never a bool, which is no metric).

    Args:
        value: a metric's value.

    Returns:
        True for one real number.
    """
    if isinstance(value, torch.Tensor | np.ndarray):
        kind = value.dtype
        is_bool = kind in (torch.bool, np.bool_)
        is_complex = kind.is_complex if isinstance(kind, torch.dtype) else kind.kind == "c"
        return value.ndim == 0 and not is_bool and not is_complex
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
