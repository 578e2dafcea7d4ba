"""The runs of a sweep folder as files left them: configs, final metrics, evaluations, curves.

A run is any folder with a `.hydra/` config (whatever the launcher); its overrides name it
within the sweep, `metrics.json` marks it finished, `eval/step_*.json` hold each evaluation
with its per-maze values, `train.csv` the training scalars (both committed with a study), and
`tb/` (not committed) its TensorBoard events, read only for what the committed files lack.

    from mazerl.analysis import load_sweep
    df = load_sweep("experiments/runs/maze_long")   # one row per run and evaluation step
"""

import csv
import functools
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from mazerl.analysis.folders import run_dirs
from mazerl.eval.passk import exact_pass_at_k, pass_at_k
from mazerl.train.run_state import read_metrics


@dataclass
class Run:
    """One run folder: its command-line overrides (`key -> value` as typed) and, when it
    finished, its `metrics.json`; otherwise `problem` says why not."""

    path: Path
    overrides: dict[str, str]
    metrics: dict | None = None  # None: unfinished or unreadable
    problem: str = ""
    until: int | None = None  # the last evaluation step it is read to (`at_step`); None: all

    @functools.cached_property
    def config(self) -> dict:
        """The run's resolved config (`.hydra/config.yaml`; empty if unreadable)."""
        try:
            return yaml.safe_load((self.path / ".hydra" / "config.yaml").read_text()) or {}
        except (OSError, yaml.YAMLError):
            return {}

    @functools.cached_property
    def hydra(self) -> dict:
        """The run's `hydra` section of `.hydra/hydra.yaml` (empty if unreadable)."""
        try:
            text = (self.path / ".hydra" / "hydra.yaml").read_text()
            return (yaml.safe_load(text) or {}).get("hydra") or {}
        except (OSError, yaml.YAMLError):
            return {}

    @property
    def seed(self) -> str:
        return self.overrides.get("seed", str(self.config.get("seed", "-")))


def _parse_override(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key.lstrip("+~"), value


def find_runs(sweep: Path) -> list[Run]:
    """Every run under `sweep` (folders holding `.hydra/`), in path order."""
    runs = []
    for path in run_dirs(sweep):
        hydra_dir = path / ".hydra"
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
            if run.metrics is not None:
                run.metrics["final"] |= expected_distinct_routes(run)
        runs.append(run)
    return runs


DISTINCT_SAMPLES = 256


def expected_distinct_routes(run: Run) -> dict[str, float]:
    """`routes/<set>/expected_distinct@256` of a braid-maze run's last evaluation: the exact
    expected number of distinct routes among 256 samples (`distinct_routes_per_maze`),
    averaged over the set's mazes."""
    evals = evaluations(run)
    final = evals[max(evals)] if evals else {}
    out = {}
    for set_name, ev in final.items():
        per = ev.get("per_maze") or {}
        if per.get("route_mass") is not None:
            out[f"routes/{set_name}/expected_distinct@{DISTINCT_SAMPLES}"] = float(
                distinct_routes_per_maze(per).mean()
            )
    return out


def distinct_routes_per_maze(per_maze: dict) -> np.ndarray:
    """`[M]` exact expected number of distinct routes among 256 samples of each maze: sum over
    its valid routes of 1 - (1 - q)^256, q the route's exact probability (`per_maze` as an
    evaluation saves it: `route_mass` and `route_valid`, each `[M, R]`)."""
    q = np.array(per_maze["route_mass"], dtype=np.float64)  # [M, R]
    valid = np.array(per_maze["route_valid"], dtype=bool)  # [M, R]
    return np.where(valid, 1 - np.power(1 - q, DISTINCT_SAMPLES), 0.0).sum(1)


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


def set_order(runs: list[Run]) -> list[str]:
    """Evaluation set names in the order the runs' configs list them (`eval.sets`)."""
    names: dict[str, None] = {}
    for r in runs:
        for spec in (r.config.get("eval") or {}).get("sets") or []:
            names.setdefault(spec.get("name"), None)
    return [n for n in names if n]


def natural_key(label: str):
    out = []
    for part in label.replace("=", ",").split(","):
        try:
            out.append((0, float(part), ""))
        except ValueError:
            out.append((1, 0.0, part))
    return out


def evaluations(run: Run) -> dict[int, dict]:
    """`{step: evaluation}` of a run's `eval/step_*.json` up to `run.until` (per set: the
    scalar metrics and `per_maze` values); unreadable files are left out."""
    files = sorted((run.path / "eval").glob("step_*.json"))
    evals = _evaluations(run.path, tuple((f.name, f.stat().st_mtime_ns) for f in files))
    return evals if run.until is None else {s: e for s, e in evals.items() if s <= run.until}


@functools.lru_cache(maxsize=256)
def _evaluations(path: Path, stamp: tuple) -> dict[int, dict]:
    """`stamp` (file names and times) keys the cache, so a growing run is read again."""
    out = {}
    for name, _ in stamp:
        try:
            out[int(name.removeprefix("step_").removesuffix(".json"))] = json.loads(
                (path / "eval" / name).read_text()
            )
        except (OSError, ValueError):
            continue
    return out


def at_step(run: Run, step: int) -> Run:
    """The run as it stood at evaluation `step`, as if it had ended there: read to `step`, its
    `metrics["final"]` the scalars of `eval/step_<step>.json` (`eval/<set>/<metric>`, the
    `delta_<pass@k>_vs_base` against its recorded base model, and on braid mazes the expected
    distinct routes; the route-mass scalars, which need the base model's per-route masses,
    are not rebuilt; `code` where its `metrics.json` has one). A run, finished or not,
    without an evaluation at `step` is left unfinished with the reason."""
    out = Run(run.path, dict(run.overrides), until=step)
    evaluation = evaluations(run).get(step)
    if evaluation is None:
        last = max(evaluations(run), default=None)
        out.problem = f"no evaluation at step {step} (last: {'none' if last is None else last})"
        return out
    base = (run.metrics or {}).get("base", {})
    final = {}
    for set_name, values in evaluation.items():
        for k, v in values.items():
            if not isinstance(v, int | float) or isinstance(v, bool):
                continue
            col = f"eval/{set_name}/{k}"
            final[col] = float(v)
            if k.startswith(("pass@", "exact_pass@")) and not k.endswith("_se") and col in base:
                final[f"eval/{set_name}/delta_{k}_vs_base"] = float(v) - base[col]
    out.metrics = {"base": base, "final": final | expected_distinct_routes(out), "iterations": step}
    if "code" in (run.metrics or {}):
        out.metrics["code"] = run.metrics["code"]
    return out


def agree(a: Run, b: Run) -> int:
    """The number of evaluation steps two runs share where they agree bit for bit: the same
    sets and, on each, the same exact per-maze success probabilities; 0 where any shared
    step differs (or nothing is shared). Two launches of one config agree at every step."""
    ea, eb = evaluations(a), evaluations(b)
    shared = sorted(set(ea) & set(eb))
    for step in shared:
        if set(ea[step]) != set(eb[step]):
            return 0
        for set_name, values in ea[step].items():
            pa = (values.get("per_maze") or {}).get("exact_p")
            if pa is None or pa != (eb[step][set_name].get("per_maze") or {}).get("exact_p"):
                return 0
    return len(shared)


def config_value(run: Run, key: str) -> str | None:
    """What `key` was in the run, as an override would name it: the config group's choice
    (`algo` -> `grpo`, from `.hydra/hydra.yaml`), else the dotted setting of its config."""
    choices = (run.hydra.get("runtime") or {}).get("choices") or {}
    if choices.get(key) is not None:  # an optional group left empty: not set
        return str(choices[key])
    node = run.config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return None if isinstance(node, dict | list) else str(node)


def per_maze_values(run: Run, col: str, step: int | None = None) -> tuple[np.ndarray, str] | None:
    """`eval/<set>/exact_pass@k` or `eval/<set>/pass@k` of every evaluation maze at `step`
    (None: the run's last evaluation), and the hash naming those mazes; None where it was
    not saved."""
    _, set_name, metric = col.split("/")
    family, k = metric.split("@")
    evals = evaluations(run)
    step = max(evals, default=None) if step is None else step
    per = ((evals.get(step) or {}).get(set_name) or {}).get("per_maze") or {}
    if family == "exact_pass" and per.get("exact_p") is not None:
        return exact_pass_at_k(np.array(per["exact_p"]), int(k)), per.get("mazes_hash", "")
    if family == "pass" and per.get("successes") and int(k) <= per["n"]:
        values = pass_at_k(per["n"], np.array(per["successes"]), int(k))
        return np.atleast_1d(values), per.get("mazes_hash", "")
    return None


def eval_curve(run: Run, col: str) -> list[tuple[int, float]]:
    """`(step, value)` of `eval/<set>/<metric>` at every saved evaluation, from step 0 (the
    base model, where the run finished and recorded it) on."""
    _, set_name, metric = col.split("/")
    base = (run.metrics or {}).get("base", {}).get(col)
    points = [(0, base)] if base is not None else []
    for step, ev in sorted(evaluations(run).items()):
        value = (ev.get(set_name) or {}).get(metric)
        if value is not None:
            points.append((step, float(value)))
    return points


def train_curves(run: Run) -> dict[str, list[tuple[int, float]]]:
    """`{tag: [(step, value)]}` of the training scalars: `train.csv` (means over every
    `log_every` steps), else the TensorBoard events (every step), else nothing."""
    table = run.path / "train.csv"
    if table.exists():
        with open(table, newline="") as f:
            rows = [r for r in csv.DictReader(f) if None not in r.values()]
        rows = [r for r in rows if run.until is None or int(r["step"]) <= run.until]
        tags = [c for c in (rows[0] if rows else {}) if c != "step"]
        return {t: [(int(r["step"]), float(r[t])) for r in rows] for t in tags}
    acc = events(run)
    if acc is None:
        return {}
    until = math.inf if run.until is None else run.until
    return {
        t: [(e.step, e.value) for e in acc.Scalars(t) if e.step <= until]
        for t in acc.Tags()["scalars"]
    }


def load_sweep(*paths: str | Path) -> pd.DataFrame:
    """One row per run and evaluation step of every run under `paths`: `run` (its folder),
    its overrides (one column per key, values as typed), `finished`, `step`, and one column
    per scalar metric of each evaluation set (`<set>/<metric>`, e.g. `id/exact_pass@1`).
    Per-maze values: `per_maze_values(Run, "eval/<set>/<metric>", step)`."""
    records = []
    for path in paths:
        for run in find_runs(Path(path)):
            for step, ev in sorted(evaluations(run).items()):
                row = {"run": str(run.path), **run.overrides}
                row |= {"finished": run.metrics is not None, "step": step}
                for set_name, values in ev.items():
                    row |= {
                        f"{set_name}/{k}": v
                        for k, v in values.items()
                        if isinstance(v, int | float) and not isinstance(v, bool)
                    }
                records.append(row)
    return pd.DataFrame.from_records(records)


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
