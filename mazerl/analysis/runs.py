"""The runs of a sweep folder as files left them: configs, final metrics, evaluations, curves.

A run is any folder with a `.hydra/` config (whatever the launcher); its overrides name it
within the sweep, `metrics.json` marks it finished, `eval/step_*.json` hold each evaluation
with its per-maze values, `train.csv` the training scalars (both committed with a study), and
`tb/` (not committed) its TensorBoard events, read only for what the committed files lack.

    from mazerl.analysis import load_sweep
    df = load_sweep("runs/my_sweep")   # one row per run and evaluation step
"""

import csv
import functools
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from mazerl.analysis.folders import run_dirs
from mazerl.core.config import CONF_DIR, load_option
from mazerl.core.files import read_metrics
from mazerl.eval.metric_names import Metric, set_values
from mazerl.eval.passk import exact_pass_at_k, pass_at_k

N_KEYS = ("train.group_size", "sim.group_size")  # the settings that hold the group size N
LABEL_FIELD = re.compile(r"\{([^{}]+)\}")  # `{gamma}`, `{advantage_kwargs.k}` in a label


@dataclass(frozen=True)
class Method:
    """What a run trained with, from its saved config: `algo` (the algorithm's name), `gamma`
    (the focal exponent; 0: off), `label` (the display-name template: the config's
    `algo.label`, else the shipped `conf/algo/<algo>.yaml`'s, else the name) and `settings`
    (its `algo` section)."""

    algo: str
    gamma: float = 0.0
    label: str = ""
    settings: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        """The method's display name (`render_label`): "GRPO", "F-GRPO γ 0.5", "PKPO (k =
        4)", "MaxRL + focal γ 0.5"."""
        return render_label(self.label or self.algo, self.gamma, self.settings)

    @property
    def loss(self) -> str | None:
        """Its policy loss (`algo.loss`; None where the config does not say)."""
        loss = self.settings.get("loss")
        return None if loss is None else str(loss)


def render_label(template: str, gamma: float, settings: dict | None = None) -> str:
    """A method's label (`AlgoConfig.label`) at focal exponent `gamma`: the `[...]` parts kept
    only with the focal weight (gamma > 0), `{gamma}` its value, `{a.b}` a setting of the
    method's `settings` (numbers as `:g`); a parenthesised part whose setting is unknown (no
    settings) is left out."""

    def field_value(match: re.Match) -> str:
        key = match[1]
        if key == "gamma":
            return f"{gamma:g}"
        node = settings or {}
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise KeyError(key)
        return (
            f"{node:g}"
            if isinstance(node, int | float) and not isinstance(node, bool)
            else str(node)
        )

    text = re.sub(r"\[([^\[\]]*)\]", (lambda m: m[1]) if gamma else "", template)
    parts = re.split(r"( ?\([^()]*\))", text)
    out = []
    for part in parts:
        try:
            out.append(LABEL_FIELD.sub(field_value, part))
        except KeyError:
            if not part.lstrip().startswith("("):
                out.append(LABEL_FIELD.sub("", part))
    return "".join(out)


def method_name(algo: str, gamma: float, config: dict | None = None) -> str:
    """The display name of `algo` at focal exponent `gamma` (`render_label`): the label and
    settings of a run's resolved `config` (its `algo` section), else the shipped label
    without settings (a parameter in brackets then left out)."""
    settings = dict((config or {}).get("algo") or {})
    return render_label(settings.get("label") or shipped_label(algo), gamma, settings)


@functools.lru_cache(maxsize=64)
def shipped_label(algo: str) -> str:
    """The label of `algo` where a run's saved config has none (runs from before labels): the
    shipped `conf/algo/<algo>.yaml`'s (with its bases, `load_option`), else an estimator's
    without a YAML (`estimator_method`), else the name."""
    if (CONF_DIR / "algo" / f"{algo}.yaml").is_file():
        label = load_option("algo", algo).get("label")
        if label:
            return str(label)
    from mazerl.algos.config import estimator_method, estimator_methods

    if algo in estimator_methods():
        return estimator_method(algo).label or algo
    return algo


def method_of(config: dict, overrides: dict[str, str] | None = None) -> Method:
    """The `Method` of a saved config (`algo.name`, `focal.gamma`; the overrides where the
    config lacks them)."""
    overrides = overrides or {}
    algo_section = config.get("algo") or {}
    algo = str(algo_section.get("name") or overrides.get("algo", ""))
    gamma = (config.get("focal") or {}).get("gamma", overrides.get("focal.gamma", 0))
    label = algo_section.get("label") or shipped_label(algo)
    return Method(algo, float(gamma or 0), str(label), dict(algo_section))


@dataclass(frozen=True)
class Origin:
    """The base model a run started from: as its metrics.json records it (`key`, `sha256`,
    `source`; None while it trains or where not recorded), and as its config asks for it
    (`seed`: base.seed, interpolations resolved; `bank`: base.bank)."""

    key: str | None = None
    sha256: str | None = None
    source: str | None = None
    seed: int | None = None
    bank: str | None = None


@dataclass(frozen=True, eq=False)
class Run:
    """One run folder, read once (`read_run`): its command-line overrides (`key -> value` as
    typed), its saved config (`config`, the `hydra` section of `.hydra/hydra.yaml`), what it
    trained (`method`, group size `n`, `gamma`, `seed`), the base model it started from
    (`origin`), where it ran (`machine`: cpu, vector capability, threads, from metrics.json),
    the evaluation `sets` it configured, the latest evaluation step it is read to (`steps`),
    and, when it finished, its `metrics.json` (`metrics`) with the final and base values keyed
    by `Metric` (`final`, `base`); otherwise `problem` says why not. `until`: the last
    evaluation step it is read to (`at_step`); None: all."""

    path: Path
    overrides: dict[str, str]
    metrics: dict | None = None  # None: unfinished or unreadable
    problem: str = ""
    until: int | None = None
    config: dict = field(default_factory=dict, repr=False)
    hydra: dict = field(default_factory=dict, repr=False)
    method: Method = field(default_factory=lambda: Method(""))
    n: int = 0
    seed: str = "-"
    origin: Origin = field(default_factory=Origin)
    machine: tuple | None = None
    sets: tuple[str, ...] = ()
    steps: int | None = None
    final: dict[Metric, float] = field(default_factory=dict, repr=False)
    base: dict[Metric, float] = field(default_factory=dict, repr=False)

    @property
    def gamma(self) -> float:
        return self.method.gamma

    @property
    def finished(self) -> bool:
        """Its metrics.json is there (a run read `at_step` may be read before it finished)."""
        return (self.path / "metrics.json").exists()

    @property
    def choices(self) -> dict:
        """Its config groups' choices (`{"algo": "grpo", "cell": "n32", ...}`)."""
        return (self.hydra.get("runtime") or {}).get("choices") or {}

    def setting(self, key: str):
        """The dotted setting `key` of its saved config (None where absent)."""
        node = self.config
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def value(self, metric: "Metric | str", where: str = "final") -> float | None:
        """Its final (or `where="base"`: its base model's) value of `metric`; None if absent."""
        return getattr(self, where).get(Metric.of(metric))


def _read_yaml(path: Path) -> dict:
    try:
        return yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}


def _parse_override(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key.lstrip("+~"), value


def typed(values: dict) -> dict[Metric, float]:
    """`{Metric: value}` of a metrics dict written by name (names that are not metrics left
    out)."""
    out = {}
    for name, v in (values or {}).items():
        metric = Metric.parse(name)
        if metric is not None and isinstance(v, int | float) and not isinstance(v, bool):
            out[metric] = float(v)
    return out


def _origin(config: dict, metrics: dict | None) -> Origin:
    recorded = (metrics or {}).get("base_model") or {}
    try:
        seed = OmegaConf.select(OmegaConf.create(config), "base.seed")
        bank = OmegaConf.select(OmegaConf.create(config), "base.bank")
    except OmegaConfBaseException:
        seed = bank = None
    return Origin(recorded.get("key"), recorded.get("sha256"), recorded.get("source"), seed, bank)


def _machine(metrics: dict | None) -> tuple | None:
    """(cpu, vector capability, threads) of a finished run: what sets RL's rounding."""
    if not metrics or "cpu_capability" not in metrics:
        return None
    return metrics.get("cpu"), metrics["cpu_capability"], metrics.get("threads")


def read_run(path: Path) -> Run:
    """The run in folder `path` (holding `.hydra/`), read once."""
    hydra_dir = path / ".hydra"
    items = _read_yaml(hydra_dir / "overrides.yaml") or []
    overrides = dict(_parse_override(str(i)) for i in items)
    config = _read_yaml(hydra_dir / "config.yaml")
    hydra = _read_yaml(hydra_dir / "hydra.yaml").get("hydra") or {}
    sets = tuple(
        s.get("name") for s in (config.get("eval") or {}).get("sets") or [] if s.get("name")
    )
    metrics, problem = None, ""
    if not (path / "metrics.json").exists():
        ckpts = (
            sorted((path / "checkpoints").glob("ckpt_*.pt"))
            if (path / "checkpoints").is_dir()
            else []
        )
        problem = (
            f"unfinished (last checkpoint {ckpts[-1].name})"
            if ckpts
            else "unfinished (no checkpoint)"
        )
    else:
        metrics, problem = read_metrics(path / "metrics.json")
    run = Run(
        path,
        overrides,
        metrics,
        problem,
        config=config,
        hydra=hydra,
        method=method_of(config, overrides),
        n=int((config.get("train") or {}).get("group_size") or 0),
        seed=overrides.get("seed", str(config.get("seed", "-"))),
        origin=_origin(config, metrics),
        machine=_machine(metrics),
        sets=sets,
    )
    evals = evaluations(run)
    run = replace(run, steps=max(evals, default=None))
    if metrics is not None:
        metrics["final"] |= expected_distinct_routes(run)
        run = replace(run, final=typed(metrics["final"]), base=typed(metrics.get("base")))
    return run


def find_runs(sweep: Path) -> list[Run]:
    """Every run under `sweep` (folders holding `.hydra/`), in path order, each read once."""
    return [read_run(path) for path in run_dirs(sweep)]


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
            out[Metric("expected_distinct", set_name, DISTINCT_SAMPLES, "routes").name] = float(
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
    return list(dict.fromkeys(s for r in runs for s in r.sets))


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
    evaluation = evaluations(run).get(step)
    if evaluation is None:
        last = max(evaluations(run), default=None)
        why = f"no evaluation at step {step} (last: {'none' if last is None else last})"
        return replace(run, overrides=dict(run.overrides), metrics=None, problem=why, until=step,
                       steps=None, final={}, base={})  # fmt: skip
    base = (run.metrics or {}).get("base", {})
    final = {}
    for set_name, values in evaluation.items():
        for metric, v in set_values(values, set_name).items():
            final[metric.name] = v
            if metric.declared.passk and metric.stat == "" and metric.name in base:
                final[metric.delta().name] = v - base[metric.name]
    out = replace(run, overrides=dict(run.overrides), until=step, steps=step, problem="")
    metrics = {"base": base, "final": final | expected_distinct_routes(out), "iterations": step}
    if "code" in (run.metrics or {}):
        metrics["code"] = run.metrics["code"]
    return replace(out, metrics=metrics, final=typed(metrics["final"]), base=typed(base))


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
    if run.choices.get(key) is not None:  # an optional group left empty: not set
        return str(run.choices[key])
    node = run.setting(key)
    return None if node is None or isinstance(node, dict | list) else str(node)


def group_settings(cell: dict[str, str]) -> dict[str, str]:
    """`cell` (overrides) with the settings its `cell` and `method` choices make, as overrides
    name them (`cell=n8`: train.group_size 8, train.iterations 20000; `method=fgrpo05`: algo
    grpo, focal.gamma 0.5), read from mazerl's config files. They win over the cell's own
    keys, which may hold another run's values (a key one folder lacks is read from its runs'
    configs: `gather`)."""
    out = {}
    for group in ("cell", "method"):
        path = CONF_DIR / group / f"{cell.get(group)}.yaml"
        if group in cell and path.is_file():
            doc = yaml.safe_load(path.read_text()) or {}
            for choice in doc.pop("defaults", []):  # {"override /algo": "grpo"}
                if isinstance(choice, dict):
                    out |= {k.rpartition("/")[2]: str(v) for k, v in choice.items()}
            out |= _flat(doc)
    return cell | out


def declared_method(cell: dict[str, str], runs: list[Run]) -> tuple[int | None, Method]:
    """The group size N (None: not set) and the method of a run a sweep declares by `cell`
    (its overrides, read through `group_settings`), before any run of it exists: the algo and
    focal.gamma the cell sets (else those of `runs`' first), the label and settings of a
    run of that algo among `runs` where there is one, else the shipped label."""
    settings = group_settings(cell)
    n = next((int(settings[k]) for k in N_KEYS if k in settings), None)
    method = method_of({}, settings)
    if not method.algo and runs:
        method = replace(runs[0].method, gamma=method.gamma)
    like = next((r.method for r in runs if r.method.algo == method.algo), None)
    return n, replace(like, gamma=method.gamma) if like else method


def _flat(node: dict, prefix: str = "") -> dict[str, str]:
    """A nested config as dotted keys: {"train": {"group_size": 8}} -> {"train.group_size": "8"}."""
    out = {}
    for k, v in node.items():
        out |= _flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": str(v)}
    return out


def per_maze_values(
    run: Run, col: "Metric | str", step: int | None = None
) -> tuple[np.ndarray, str] | None:
    """The pass@k `col` (`eval/<set>/exact_pass@k` or `eval/<set>/pass@k`, a name or a
    `Metric`) of every evaluation maze at `step` (None: the run's last evaluation), and the
    hash naming those mazes; None where it was not saved (or `col` is no pass@k)."""
    metric = Metric.of(col)
    if not metric.declared.passk or metric.k is None or metric.stat:
        return None
    evals = evaluations(run)
    step = max(evals, default=None) if step is None else step
    per = ((evals.get(step) or {}).get(metric.set) or {}).get("per_maze") or {}
    if metric.exact and per.get("exact_p") is not None:
        return exact_pass_at_k(np.array(per["exact_p"]), metric.k), per.get("mazes_hash", "")
    if not metric.exact and per.get("successes") and metric.k <= per["n"]:
        values = pass_at_k(per["n"], np.array(per["successes"]), metric.k)
        return np.atleast_1d(values), per.get("mazes_hash", "")
    return None


def eval_value(run: Run, step: int, col: "Metric | str") -> float | None:
    """The set-level value of `col` in the run's evaluation at `step` (None: not there)."""
    metric = Metric.of(col)
    value = ((evaluations(run).get(step) or {}).get(metric.set) or {}).get(metric.key)
    return None if value is None else float(value)


def eval_values(run: Run, step: int) -> dict[Metric, float]:
    """`{Metric: value}` of the set-level scalars of the run's evaluation at `step`."""
    saved = (evaluations(run).get(step) or {}).items()
    return {m: v for s, ev in saved for m, v in set_values(ev, s).items()}


def eval_curve(run: Run, col: "Metric | str") -> list[tuple[int, float]]:
    """`(step, value)` of `eval/<set>/<metric>` at every saved evaluation, from step 0 (the
    base model, where the run finished and recorded it) on."""
    metric = Metric.of(col)
    base = run.base.get(metric)
    points = [(0, base)] if base is not None else []
    for step in sorted(evaluations(run)):
        value = eval_value(run, step, metric)
        if value is not None:
            points.append((step, value))
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


def final_images(run: Run) -> dict[str, bytes]:
    """`{set: PNG}`: the first behaviour picture (`images/<set>/0`) of the run's last
    evaluation, from its TensorBoard events (empty without them)."""
    acc = events(run)
    if acc is None:
        return {}
    out = {}
    for tag in acc.Tags()["images"]:
        _, name, index = tag.split("/")
        if index == "0":
            out[name] = acc.Images(tag)[-1].encoded_image_string  # the reservoir keeps the last
    return out


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


def launched_runs(sweep: Path) -> int | None:
    """How many runs the launch of `sweep` asked for: the product of the numbers of values of
    every swept override in Hydra's `multirun.yaml` (its task overrides and its sweeper's
    params, `algo=a,b,c` counting 3); None without a readable `multirun.yaml`."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    hydra = _read_yaml(Path(sweep) / "multirun.yaml").get("hydra") or {}
    if not hydra:
        return None
    params = (hydra.get("sweeper") or {}).get("params") or {}
    items = [
        *((hydra.get("overrides") or {}).get("task") or []),
        *(f"{k}={v}" for k, v in params.items()),
    ]
    count = 1
    for override in OverridesParser.create().parse_overrides([str(i) for i in items]):
        if override.is_sweep_override():
            count *= len(list(override.sweep_string_iterator()))
    return count


def progress_lines(sweep: Path) -> list[str]:
    """Markdown of how far the runs of `sweep` are: how many have finished (a `metrics.json`)
    of those its launch asked for (`launched_runs`), then a table of the finished runs by
    method and group size N."""
    runs = [r for r in find_runs(sweep) if r.finished]
    launched = launched_runs(sweep)
    of = f"of the {launched} runs its launch asked for" if launched else "(no multirun.yaml)"
    lines = [f"`{Path(sweep).name}`: **{len(runs)} runs finished** {of}."]
    if not runs:
        return lines
    ns = sorted({r.n for r in runs}, reverse=True)
    counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in runs:
        counts[r.method.name][r.n] += 1
    lines += ["", "| method | " + " | ".join(f"N = {n}" for n in ns) + " |"]
    lines.append("|---|" + "---|" * len(ns))
    for name in sorted(counts):
        lines.append(f"| {name} | " + " | ".join(str(counts[name][n]) for n in ns) + " |")
    return lines
