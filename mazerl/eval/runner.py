"""Evaluate a policy on every set, compare with the base model, log and save."""

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from torch.utils.tensorboard import SummaryWriter

from mazerl.core.config import to_container
from mazerl.core.files import cached_pickle, config_hash, locked, write_json_atomic
from mazerl.core.streams import STREAM_EVAL_SAMPLING, torch_generator
from mazerl.envs.spec import MazeSpec, MazeTask, base_spec
from mazerl.eval.config import EvalConfig
from mazerl.eval.evaluate import EvalSet, SetResult, build_sets, evaluate_set, excluded_keys
from mazerl.eval.metric_names import Metric
from mazerl.eval.routes import eval_route_metrics


def cached_sets(spec: MazeSpec, eval: EvalConfig, cache_dir: Path, log=print) -> list[EvalSet]:
    """`build_sets` of a run on the mazes of `spec`, stored once per maze spec, evaluation
    sets and seed under `cache_dir` (`sets_<hash>.pkl`), so the jobs of a sweep build them
    once: 1,536 5x5-cell braid mazes take minutes (rare_routes), 2,048 perfect ones about a
    second. Parallel jobs wait on a file lock. Runs that read layout files build their sets
    directly (a file can change)."""
    if spec.layout is not None or any(s.layout for s in eval.sets):
        return build_sets(spec, eval, log)
    key = config_hash(spec.settings(), [to_container(s) for s in eval.sets], eval.seed)
    return cached_pickle(
        Path(cache_dir) / f"sets_{key}.pkl", lambda: build_sets(spec, eval, log), log
    )


def held_out_keys(
    spec: MazeSpec, eval: EvalConfig, count: int, cache_dir: Path, log=print
) -> set[bytes]:
    """What a base model never sees: the keys of the first `count` mazes of each generated
    evaluation set (at least the set's own), drawn as the base model's perfect mazes
    (`base_spec`: one route), so that runs whose evaluation sets differ only in size (the
    main job's 64 mazes a set, the studies' 1,024 and 512) key one base model. A layout run's
    sets, as they are."""
    if spec.layout is not None:
        return excluded_keys(cached_sets(spec, eval, cache_dir, log))
    eval = replace(eval, sets=[replace(s, num_mazes=max(s.num_mazes, count)) for s in eval.sets])
    return excluded_keys(cached_sets(base_spec(spec), eval, cache_dir, log))


def evaluate_all(
    policy,
    sets: list[EvalSet],
    device,
    n: int,
    step: int,
    save_dir: Path | None = None,
    images: int = 0,
    *,
    allow_revisits: bool,
    eval: EvalConfig,
) -> dict[str, SetResult]:
    """`{set name: SetResult}` for every evaluation set, sampling n responses per maze, with
    behaviour pictures of the first `images` mazes of each set, under the maze rule
    `allow_revisits`. Reads the `eval` section (ks, exact_ks, temperature, seed,
    batch_rollouts, sampled_mazes).
    The sampling stream depends on `eval.seed` and the step only, so runs are comparable."""
    e = eval
    results = {}
    for i, s in enumerate(sets):
        results[s.name] = evaluate_set(
            policy,
            s,
            n=n,
            ks=list(e.ks),
            exact_ks=list(e.exact_ks),
            temperature=e.temperature,
            allow_revisits=allow_revisits,
            generator=torch_generator(device, e.seed, STREAM_EVAL_SAMPLING, step, i),
            batch_rollouts=e.batch_rollouts,
            device=device,
            images=images,
            sampled_mazes=e.sampled_mazes,
        )
    policy.train()
    if save_dir is not None:
        write_json_atomic(saved(results), Path(save_dir) / f"step_{step:07d}.json")
    return results


def eval_step(path: Path) -> int:
    """The step of a saved evaluation: `eval/step_0001000.json` -> 1000."""
    return int(path.stem[5:])


def last_saved(save_dir: Path, step: int) -> dict[str, SetResult]:
    """`{set name: SetResult}` of the latest evaluation `evaluate_all` saved in `save_dir` at
    or before `step` (a resumed run's last), {} where there is none."""
    found = [p for p in Path(save_dir).glob("step_*.json") if eval_step(p) <= step]
    return read_saved(json.loads(max(found, key=eval_step).read_text())) if found else {}


def saved(results: dict[str, SetResult]) -> dict[str, dict]:
    """`{set name: SetResult}` as saved: each set's `SetResult.to_json` (no images)."""
    return {s: r.to_json() for s, r in results.items()}


def read_saved(data: dict[str, dict]) -> dict[str, SetResult]:
    """What `saved` wrote, read back."""
    return {s: SetResult.from_json(r) for s, r in data.items()}


def base_lines(base: dict[Metric, float]) -> list[Metric]:
    """Of a set's base-model values, its sampled pass@1 and pass@(largest k): repeated at
    every evaluation step as reference lines (`Metric.base_tag`)."""
    passk = sorted((m for m in base if m.family == "pass" and m.stat == ""), key=lambda m: m.k)
    return list(dict.fromkeys([passk[0], passk[-1]])) if passk else []


def log_eval(
    writer: SummaryWriter,
    results: dict[str, SetResult],
    base: dict[str, SetResult],
    step: int,
    images: int,
) -> dict[str, float]:
    """Write every set's metrics (`SetResult.on_set`) and their changes from the base model (the
    pass@k values, `Metric.delta`) under their TensorBoard tags (`Metric.tag`), the base
    model's `base_lines`, and the behaviour images; returns the scalars under their names
    (`Metric.name`: `metrics.json`'s keys)."""
    values: dict[Metric, float] = {}
    for name, result in results.items():
        before = base.get(name, SetResult({}))
        then = before.on_set(name)
        for metric, v in result.on_set(name).items():
            values[metric] = v
            if metric.declared.passk and metric.stat == "" and metric in then:
                values[metric.delta()] = v - then[metric]
        for metric in base_lines(then):
            writer.add_scalar(metric.base_tag, then[metric], step)
        if result.per_maze and before.per_maze:
            now, then_per_maze = result.per_maze, before.per_maze
            split = difficulty_split(now, then_per_maze)
            values |= {Metric.on_set(k, name): v for k, v in split.items()}
            if "route_mass" in now and "route_mass" in then_per_maze:
                route = eval_route_metrics(
                    np.array(now["route_mass"]),
                    np.array(then_per_maze["route_mass"]),
                    np.array(now["route_valid"]),
                    (np.array(now["route_counts"]) > 0).sum(1),
                )
                values |= {Metric.on_set(k, name, "routes"): v for k, v in route.items()}
        for j, img in enumerate(result.images[:images]):
            writer.add_image(f"images/{name}/{j}", img, step, dataformats="HWC")
    for metric, v in values.items():
        writer.add_scalar(metric.tag, v, step)
    return {metric.name: v for metric, v in values.items()}


@dataclass
class BaseEvaluation:
    """The base model's evaluation, computed once per evaluation config and stored beside
    the base checkpoint (`eval_<hash>.json`): `{set name: SetResult}`."""

    results: dict[str, SetResult]

    def scalars(self) -> dict[str, float]:
        """Its values under their names (`Metric.name`: `metrics.json`'s keys)."""
        return {m.name: v for s, r in self.results.items() for m, v in r.on_set(s).items()}

    @classmethod
    def load_or_run(
        cls,
        base_dir: Path,
        policy,
        sets,
        device,
        log,
        *,
        task: MazeTask,
        eval: EvalConfig,
        weights: str,
    ) -> "BaseEvaluation":
        """The stored evaluation of the base `policy` in `base_dir` under this `eval` section
        on the episodes of `task` (`MazeTask.episodes`: its spec and maze rule; not the
        training pool) and `weights` (the sha256 of its checkpoint file: a bank model and a
        model trained here under the same cache key are told apart), else evaluated now at
        `eval.n` samples and stored."""
        pictures = ("images", "images_every")  # not stored: they do not change the key
        e = {k: v for k, v in to_container(eval).items() if k not in pictures}
        key = config_hash(e, task.episodes(), weights)
        path = Path(base_dir) / f"eval_{key}.json"
        with locked(path.parent / f".{path.stem}.lock", log):
            if path.exists():
                return cls(read_saved(json.loads(path.read_text())))
            log(f"base model: evaluating ({', '.join(s.name for s in sets)}, n={eval.n})")
            results = evaluate_all(
                policy, sets, device, eval.n, 0, images=eval.images,
                allow_revisits=task.allow_revisits, eval=eval,
            )  # fmt: skip
            write_json_atomic(saved(results), path)
        return cls(results)


def difficulty_split(per_maze: dict, base_per_maze: dict, threshold: float = 0.1) -> dict:
    """Mean success on the mazes the base model solved rarely (rate < threshold) and on the
    rest: where forgetting of rare successes shows. An empty split is left out, not NaN."""
    base = np.array(base_per_maze["successes"]) / base_per_maze["n"]
    now = np.array(per_maze["successes"]) / per_maze["n"]
    rare = base < threshold
    out = {"rare_success_mazes": float(rare.mean())}
    if rare.any():
        out["success_on_rare"] = float(now[rare].mean())
    if (~rare).any():
        out["success_on_common"] = float(now[~rare].mean())
    return out
