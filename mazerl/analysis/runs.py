"""The runs of a sweep folder as files left them: configs, final metrics, evaluations, curves.

A run is any folder with a `.hydra/` config (whatever the launcher); its overrides name it
within the sweep, `metrics.json` marks it finished, `eval/step_*.json` hold each evaluation
with its per-maze values, and `tb/` (not committed) its TensorBoard events.
"""

import functools
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from mazerl.eval.passk import exact_pass_at_k, pass_at_k
from mazerl.train.run_state import read_metrics


@dataclass
class Run:
    path: Path
    overrides: dict[str, str]
    metrics: dict | None = None  # None: unfinished or unreadable
    problem: str = ""
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)


def _parse_override(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key.lstrip("+~"), value


def find_runs(sweep: Path) -> list[Run]:
    runs = []
    for hydra_dir in sorted(sweep.rglob(".hydra")):
        path = hydra_dir.parent
        try:
            items = yaml.safe_load((hydra_dir / "overrides.yaml").read_text()) or []
        except (OSError, yaml.YAMLError):
            items = []
        run = Run(path, dict(_parse_override(str(i)) for i in items))
        metrics = path / "metrics.json"
        if not metrics.exists():
            ckpts = (
                sorted((path / "checkpoints").glob("ckpt_*.pt"))
                if (path / "checkpoints").is_dir()
                else []
            )
            run.problem = (
                f"unfinished (last checkpoint {ckpts[-1].name})"
                if ckpts
                else "unfinished (no checkpoint)"
            )
        else:
            run.metrics, run.problem = read_metrics(metrics)
        runs.append(run)
    return runs


def swept_keys(runs: list[Run]) -> list[str]:
    """Override keys whose value differs between runs."""
    keys = {k for r in runs for k in r.overrides}
    return sorted(k for k in keys if len({r.overrides.get(k) for r in runs}) > 1)


def group_label(run: Run, keys: list[str]) -> str:
    return ", ".join(f"{k}={run.overrides.get(k, '-')}" for k in keys if k != "seed") or "all"


def group_runs(runs: list[Run], keys: list[str]) -> dict[str, list[Run]]:
    """Runs by group label (their values of the swept `keys` other than the seed)."""
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        groups[group_label(r, keys)].append(r)
    return groups


def natural_key(label: str):
    out = []
    for part in label.replace("=", ",").split(","):
        try:
            out.append((0, float(part), ""))
        except ValueError:
            out.append((1, 0.0, part))
    return out


@functools.lru_cache(maxsize=256)
def final_evaluation(path: Path) -> dict | None:
    """A run's final `eval/step_*.json` (per-maze values), None if absent or unreadable."""
    files = sorted((path / "eval").glob("step_*.json"))
    try:
        return json.loads(files[-1].read_text()) if files else None
    except (OSError, json.JSONDecodeError):
        return None


def per_maze_values(run: Run, col: str) -> tuple[np.ndarray, str] | None:
    """`eval/<set>/exact_pass@k` or `eval/<set>/pass@k` of every evaluation maze of the run's
    final evaluation, and the hash naming those mazes; None where it was not saved."""
    _, set_name, metric = col.split("/")
    family, k = metric.split("@")
    per = ((final_evaluation(run.path) or {}).get(set_name) or {}).get("per_maze") or {}
    if family == "exact_pass" and per.get("exact_p") is not None:
        return exact_pass_at_k(np.array(per["exact_p"]), int(k)), per.get("mazes_hash", "")
    if family == "pass" and per.get("successes") and int(k) <= per["n"]:
        values = pass_at_k(per["n"], np.array(per["successes"]), int(k))
        return np.atleast_1d(values), per.get("mazes_hash", "")
    return None


def events(run: Run) -> EventAccumulator | None:
    """The run's TensorBoard events, read once per summary (every scalar; the last picture of
    each image tag), or None without a `tb/` folder."""
    tb = run.path / "tb"
    if not tb.is_dir():
        return None
    stamp = tuple((p.name, p.stat().st_size) for p in sorted(tb.glob("events.*")))
    return _load_events(tb, stamp)


@functools.lru_cache(maxsize=64)
def _load_events(tb: Path, stamp: tuple) -> EventAccumulator:
    """`stamp` (event files and sizes) keys the cache, so a grown run is read again."""
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0, "images": 1})
    acc.Reload()
    return acc


def read_curves(run: Run, tags: tuple[str, ...]) -> dict[str, list[tuple[int, float]]]:
    acc = events(run)
    if acc is None:
        return {}
    present = set(acc.Tags()["scalars"])
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in tags if t in present}
