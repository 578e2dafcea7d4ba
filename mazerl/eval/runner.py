"""Evaluate a policy on every set, compare with the base model, log and save."""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch.utils.tensorboard import SummaryWriter

from mazerl.core.config import to_container
from mazerl.core.files import config_hash, locked, write_json_atomic
from mazerl.core.streams import STREAM_EVAL_SAMPLING, torch_generator
from mazerl.eval.evaluate import EvalSet, evaluate_set, scalars
from mazerl.eval.routes import eval_route_metrics


def evaluate_all(
    policy, sets: list[EvalSet], cfg, device, n: int, step: int, save_dir: Path | None = None
) -> dict[str, dict]:
    """`{set name: metrics}` for every evaluation set, sampling n responses per maze. The
    sampling stream depends on `eval.seed` and the step only, so runs are comparable."""
    e = cfg.eval
    results = {}
    for i, s in enumerate(sets):
        results[s.name] = evaluate_set(
            policy,
            s,
            n=n,
            ks=list(e.ks),
            exact_ks=list(e.exact_ks),
            temperature=e.temperature,
            allow_revisits=cfg.maze.allow_revisits,
            generator=torch_generator(device, e.seed, STREAM_EVAL_SAMPLING, step, i),
            batch_rollouts=e.batch_rollouts,
            device=device,
            images=e.images,
        )
    policy.train()
    if save_dir is not None:
        write_json_atomic(strip_images(results), Path(save_dir) / f"step_{step:07d}.json")
    return results


def strip_images(results: dict) -> dict:
    return {s: {k: v for k, v in m.items() if k != "images"} for s, m in results.items()}


def log_eval(
    writer: SummaryWriter, results: dict, base: dict, step: int, images: int
) -> dict[str, float]:
    """Write `eval/<set>/<metric>` and `eval/<set>/delta_<metric>_vs_base` scalars and the
    sampled-path images; returns the scalars."""
    flat = {}
    for name, metrics in results.items():
        for k, v in scalars(metrics).items():
            flat[f"eval/{name}/{k}"] = v
            is_pass = k.startswith(("pass@", "exact_pass@")) and not k.endswith("_se")
            if is_pass and k in base.get(name, {}):
                flat[f"eval/{name}/delta_{k}_vs_base"] = v - base[name][k]
        if "per_maze" in metrics and "per_maze" in base.get(name, {}):
            now, then = metrics["per_maze"], base[name]["per_maze"]
            split = difficulty_split(now, then)
            flat.update({f"eval/{name}/{k}": v for k, v in split.items()})
            if "route_mass" in now and "route_mass" in then:
                route = eval_route_metrics(
                    np.array(now["route_mass"]),
                    np.array(then["route_mass"]),
                    np.array(now["route_valid"]),
                    (np.array(now["route_counts"]) > 0).sum(1),
                )
                flat.update({f"routes/{name}/{k}": v for k, v in route.items()})
        for j, img in enumerate(metrics.get("images", [])[:images]):
            writer.add_image(f"images/{name}/{j}", img, step, dataformats="HWC")
    for k, v in flat.items():
        writer.add_scalar(k, v, step)
    return flat


@dataclass
class BaseEvaluation:
    """The base model's evaluation, computed once per evaluation config and stored beside
    the base checkpoint (`eval_<hash>.json`)."""

    results: dict

    def scalars(self) -> dict[str, float]:
        return {f"eval/{s}/{k}": v for s, m in self.results.items() for k, v in scalars(m).items()}

    @classmethod
    def load_or_run(cls, base_dir: Path, policy, sets, cfg, device, log) -> "BaseEvaluation":
        key = config_hash(to_container(cfg.eval), to_container(cfg.maze))
        path = Path(base_dir) / f"eval_{key}.json"
        with locked(path.parent / f".{path.stem}.lock"):
            if path.exists():
                return cls(json.loads(path.read_text()))
            log(f"base model: evaluating ({', '.join(s.name for s in sets)}, n={cfg.eval.n})")
            results = evaluate_all(policy, sets, cfg, device, cfg.eval.n, 0)
            write_json_atomic(strip_images(results), path)
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
