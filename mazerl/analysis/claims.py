"""A study's claims as data, and each claim's row computed by the verdict rule
(`mazerl.analysis.verdicts`, docs/concepts/verdicts.md).

A sweep folder that holds a `study.yaml` with `claims: PATH` (relative to that folder) names
its claims file; `mazerl-summarize SWEEP` then writes `claims.md` and `claims.csv` beside
`summary.md`. A claims file (commit it before launching the runs: claims.md's header says,
from git, whether it was):

    reference_setting: "a published table: 17x17 grids, ..."  # where any claim has a reference
    methods:                                  # a reader's name -> how runs are selected
      GRPO: {method: grpo}                    # a conf/method preset (the config group choice)
      F-GRPO gamma 0.5: {algo: grpo, gamma: 0.5}   # or the algo and focal.gamma
      GRPO (long): {algo: grpo, gamma: 0, experiment: my_long}  # and the experiment
    defaults: {set: id, metric: exact_pass, k: 1}  # merged into every claim
    claims:
      - id: n32-gamma05               # unique
        family: published             # Holm's adjustment runs over each family
        a: F-GRPO gamma 0.5           # estimate = a - b, in points
        b: GRPO                       # or `base model`: a minus its own base model
        expect: greater               # the claim's sense: a - b `greater` or `less` than 0
        n: 32                         # group size (train.group_size)
        step: 15000                   # the evaluation read
        sweep: my_other_sweep         # optional: a folder beside the summarized sweep, or a
                                      # list of them whose runs are read together
        reference: 10.6               # optional, points
        reference_kind: single run    # `single run` or `mean`, with a reference
        reference_mazes: 256          # a single run's own evaluation mazes
      - id: n32-gamma05-flat          # a convergence claim: declares a margin, no family,
        margin: 0.5                   # expect or reference; the slope of a - b (points
        a: F-GRPO gamma 0.5           # per 1,000 steps) over the last third of the
        b: GRPO                       # evaluations up to `step`, against +-margin
        n: 32
        step: 15000

Runs of a and b are paired by seed (the unit; on the protocol a bank model with its RL seed)
and evaluation maze (`paired_matrix`), and both runs of a pair must have started from the same
base model (sha256). Each test (a, b, n, set, metric, k, step, sweep) sits in one claim, and a
family that compares methods with one common reference lists every method (`check_families`).
"""

import csv
import fnmatch
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from mazerl.analysis.convergence import difference_slope, group_slope
from mazerl.analysis.declared import declared_line
from mazerl.analysis.runs import Run, at_step, config_value, find_runs
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import STUDY_FILE, study_spec
from mazerl.analysis.tables import paired_matrix
from mazerl.analysis.verdicts import (
    EXPECTS,
    FEW_UNITS,
    MIN_UNITS,
    PENDING_P,
    REFERENCE_KINDS,
    TOO_FEW,
    convergence,
    direction,
    holm,
    magnitude,
    prediction_interval,
    rule_p,
    t_p_value,
    units_p,
    wilcoxon_p,
)
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import FAMILIES, Metric

BASE = "base model"
COLUMNS = (
    "claim", "family", "a", "b", "expect", "n", "set", "metric", "k", "step", "units",
    "estimate", "lo", "hi", "df", "p", "p_units", "p_adjusted", "p_adjusted_study", "pi_lo",
    "pi_hi", "pi_df", "reference", "reference_kind", "reference_mazes", "reference_setting",
    "setting", "direction", "magnitude", "margin", "slope", "slope_lo", "slope_hi",
    "convergence",
)  # fmt: skip
SELECTORS = ("method", "algo", "gamma", "experiment")
FILE_KEYS = ("methods", "defaults", "claims", "reference_setting")
CLAIM_KEYS = (
    "id", "family", "a", "b", "expect", "n", "set", "metric", "k", "step", "sweep",
    "reference", "reference_kind", "reference_mazes", "margin",
)  # fmt: skip
COMPARISON_ONLY = ("family", "expect", "reference", "reference_kind", "reference_mazes")


def passk_families() -> tuple[str, ...]:
    """The metric families a claim may compare: the pass@k families the evaluation declares
    (`mazerl.eval.metric_names.FAMILIES`), whose per-maze values a saved evaluation rebuilds."""
    return tuple(name for name, family in FAMILIES.items() if family.passk)


@dataclass(frozen=True)
class Claim:
    """One claim about `a` minus `b` (readers' names, `b` possibly `BASE`) at group size `n`,
    on `metric`@`k` of evaluation set `set_name` at evaluation `step`, from the runs of the
    folders `sweep`. A comparison (`margin` None) expects the difference `greater` or `less`
    than 0 (`expect`) and may carry a `reference` in points of kind `reference_kind` (a single
    run's measured on `reference_mazes` mazes); a convergence claim declares `margin` (points
    per 1,000 steps) and has no family, expectation or reference."""

    id: str
    family: str
    a: str
    b: str
    expect: str
    n: int
    set_name: str
    metric: str
    k: int
    step: int
    sweep: tuple[Path, ...]
    reference: float | None = None
    reference_kind: str = ""
    reference_mazes: int | None = None
    margin: float | None = None

    @property
    def column(self) -> Metric:
        return Metric(self.metric, self.set_name, self.k)

    @property
    def is_convergence(self) -> bool:
        return self.margin is not None

    @property
    def test(self) -> tuple:
        """What the claim tests, the same whichever method is `a`: its kind, the two methods
        as a set, and the cell (n, set, metric, k, step, sweep)."""
        cell = (self.n, self.set_name, self.metric, self.k, self.step, self.sweep)
        return (self.is_convergence, frozenset((self.a, self.b)), *cell)


@dataclass(frozen=True)
class ClaimsFile:
    """A parsed claims file: the setting its references come from, the method selectors by
    reader's name, and the claims."""

    path: Path
    reference_setting: str
    methods: dict[str, dict]
    claims: list[Claim]


def study_claims(sweep: Path) -> Path | None:
    """The claims file that `sweep/study.yaml` names (`claims: PATH`, relative to the sweep
    folder), or None without a study.yaml or without that key."""
    study = Path(sweep) / STUDY_FILE
    spec = study_spec(sweep)
    if spec.get("claims") is None:
        return None
    path = (Path(sweep) / str(spec["claims"])).resolve()
    if not path.is_file():
        raise UserError(f"{study}: claims file {spec['claims']} not found ({path})")
    return path


def number(where: str, name: str, value, kind: type, positive: bool = True):
    """`value` as `kind` (int or float), positive where asked; one `UserError` line naming
    `where` and the field otherwise."""
    try:
        out = kind(value)
    except (TypeError, ValueError):
        raise UserError(f"{where}: {name} = {value!r} is not a number") from None
    if positive and not out > 0:
        raise UserError(f"{where}: {name} = {value!r} must be above 0")
    return out


def parse_claim(item: dict, where: str, methods: dict, sweep: Path) -> Claim:
    """One claim from its merged fields (`CLAIM_KEYS`); `where` names it in every error."""
    unknown = sorted(set(item) - set(CLAIM_KEYS))
    if unknown:
        raise UserError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(CLAIM_KEYS)})")
    margin = item.get("margin")
    needed = ("a", "b", "n", "step", "set", "k")
    needed += () if margin is not None else ("family", "expect")
    missing = [f for f in needed if f not in item]
    if missing:
        raise UserError(f"{where}: missing {', '.join(missing)}")
    if margin is not None:
        extra = [f for f in COMPARISON_ONLY if f in item]
        if extra:
            raise UserError(f"{where}: a convergence claim (margin) takes no {extra[0]}")
        margin = number(where, "margin", margin, float)
    for side in ("a", "b"):
        name = str(item[side])
        if name not in methods and not (side == "b" and name == BASE):
            raise UserError(f"{where}: {side} = {name!r} is not under methods:")
    expect = str(item.get("expect", ""))
    if margin is None and expect not in EXPECTS:
        raise UserError(f"{where}: expect = {expect!r} is not one of {', '.join(EXPECTS)}")
    metric = str(item.get("metric", "exact_pass"))
    if metric not in passk_families():
        raise UserError(f"{where}: metric {metric!r} is not one of {passk_families()}")
    reference, kind = item.get("reference"), str(item.get("reference_kind") or "")
    if (reference is None) != (kind == ""):
        raise UserError(f"{where}: reference and reference_kind go together")
    if kind and kind not in REFERENCE_KINDS:
        raise UserError(f"{where}: reference_kind {kind!r} not in {REFERENCE_KINDS}")
    mazes = item.get("reference_mazes")
    if (kind == "single run") != (mazes is not None):
        raise UserError(f"{where}: reference_mazes goes with a `single run` reference (only)")
    named = item.get("sweep")
    named = [named] if isinstance(named, str) else named or []
    folders = tuple(Path(sweep).parent / str(n) for n in named) or (Path(sweep),)
    for other in folders:
        if not other.is_dir():
            raise UserError(f"{where}: sweep {other} does not exist")
    return Claim(
        str(item["id"]), str(item.get("family", "")), str(item["a"]), str(item["b"]), expect,
        int(item["n"]), str(item["set"]), metric, int(item["k"]), int(item["step"]), folders,
        None if reference is None else number(where, "reference", reference, float, False),
        kind, None if mazes is None else number(where, "reference_mazes", mazes, int), margin,
    )  # fmt: skip


def check_families(path: Path, claims: list[Claim], methods: dict) -> None:
    """One `UserError` line naming the claim where the families have a double or a gap:
    a test (`Claim.test`: "a - b" and "b - a" at one cell are one test) in two claims; or a
    family of comparisons with one common reference (its `b` is `BASE`, or every claim's `b`
    is one method and they name two or more `a`) that leaves out a method under `methods:` at
    one of its cells (n, set, metric, k, step, sweep)."""
    seen: dict[tuple, Claim] = {}
    for c in claims:
        if c.test in seen:
            other = seen[c.test]
            raise UserError(
                f"{path}: claim {c.id}: the same test as claim {other.id}"
                + (f" (family {other.family}): each test sits in one family" if c.family else "")
            )
        seen[c.test] = c
    families: dict[str, list[Claim]] = defaultdict(list)
    for c in claims:
        if not c.is_convergence:
            families[c.family].append(c)
    for family, members in families.items():
        refs = {c.b for c in members}
        if len(refs) != 1 or (BASE not in refs and len({c.a for c in members}) < 2):
            continue
        (ref,) = refs
        cells: dict[tuple, list[Claim]] = defaultdict(list)
        for c in members:
            cells[c.test[2:]].append(c)
        for found in cells.values():
            missing = [m for m in methods if m != ref and m not in {c.a for c in found}]
            if missing:
                c = found[0]
                raise UserError(
                    f"{path}: claim {c.id}: family {family} compares every method with {ref} "
                    f"but leaves out {', '.join(missing)} at N = {c.n}, {c.set_name} "
                    f"{c.metric}@{c.k}, step {c.step}"
                )


def load_claims(path: Path, sweep: Path) -> ClaimsFile:
    """Parse and check the claims file at `path` for the summarized `sweep` (a claim's `sweep`
    is a folder beside it): the fields (`parse_claim`) and the families (`check_families`);
    one clear `UserError` line for anything wrong."""
    try:
        spec = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise UserError(f"{path}: cannot read the claims file ({e})") from None
    where = f"{path}:"
    if not isinstance(spec, dict) or not isinstance(spec.get("claims"), list):
        raise UserError(f"{where} needs a `claims:` list")
    if "declared" in spec:
        raise UserError(
            f"{where} `declared:` is computed from git now (claims.md's header); remove it"
        )
    unknown = sorted(set(spec) - set(FILE_KEYS))
    if unknown:
        raise UserError(f"{where} unknown key {unknown[0]!r} (known: {', '.join(FILE_KEYS)})")
    methods = spec.get("methods") or {}
    for name, sel in methods.items():
        if not isinstance(sel, dict) or not sel or set(sel) - set(SELECTORS):
            raise UserError(f"{where} method {name!r}: select runs by {', '.join(SELECTORS)}")
    defaults = spec.get("defaults") or {}
    claims, seen = [], set()
    for i, raw in enumerate(spec["claims"]):
        item = {**defaults, **(raw or {})}
        cid = str(item.get("id", f"#{i + 1}"))
        if "id" not in item:
            raise UserError(f"{where} claim {cid}: missing id")
        if cid in seen:
            raise UserError(f"{where} claim {cid}: the id is used twice")
        seen.add(cid)
        claims.append(parse_claim(item, f"{path}: claim {cid}", methods, sweep))
    setting = str(spec.get("reference_setting") or "")
    with_reference = [c.id for c in claims if c.reference is not None]
    if with_reference and not setting:
        raise UserError(
            f"{path}: claim {with_reference[0]}: has a reference, and the file declares no "
            "reference_setting"
        )
    check_families(Path(path), claims, methods)
    return ClaimsFile(Path(path), setting, methods, claims)


def selects(run: Run, selector: dict) -> bool:
    """Whether the run is the method `selector` names (`method`: the conf/method preset the
    run chose; `algo`: its algo; `gamma`: its focal.gamma; `experiment`: its experiment)."""
    for key, want in selector.items():
        if key == "gamma":
            if run.gamma != float(want):
                return False
        elif config_value(run, key) != str(want):
            return False
    return True


def units_name(runs: list[Run]) -> str:
    """What a unit is: a bank model (with its RL seed) where every run started from the bank,
    else a seed."""
    bank = all(r.origin.source == "bank" for r in runs)
    return "bank models" if bank else "seeds"


def counted(k: int, name: str) -> str:
    """ "13 bank models", "1 bank model", "0 seeds": `k` units of `units_name`'s `name`."""
    return f"{k} {name.removesuffix('s') if k == 1 else name}"


def claim_pairs(claim: Claim, methods: dict, runs: list[Run]) -> dict[str, dict[str, tuple]]:
    """`{"a": {seed: (read, run)}, "b": ...}`: each side's runs at the claim's N, each read
    at its step (`at_step`) beside the run as it finished; one seed twice is an error."""
    by_seed: dict[str, dict[str, tuple[Run, Run]]] = {"a": {}, "b": {}}
    for run in runs:
        if run.n != claim.n:
            continue
        for side, name in (("a", claim.a), ("b", claim.b)):
            if name != BASE and selects(run, methods[name]):
                read = at_step(run, claim.step)
                if read.metrics is not None:
                    if run.seed in by_seed[side]:
                        raise UserError(
                            f"claim {claim.id}: {name} selects two runs of seed {run.seed} "
                            f"({by_seed[side][run.seed][1].path.name}, {run.path.name})"
                        )
                    by_seed[side][run.seed] = (read, run)
    return by_seed


def paired_seeds(claim: Claim, by_seed: dict) -> list[str]:
    """The seeds both sides ran, in order; their runs must share the base model."""
    seeds = sorted(set(by_seed["a"]) & set(by_seed["b"]), key=int)
    for s in seeds:
        sha = [by_seed[side][s][1].origin.sha256 for side in ("a", "b")]
        if sha[0] and sha[1] and sha[0] != sha[1]:
            raise UserError(f"claim {claim.id}: seed {s}'s runs started from different models")
    return seeds


def claim_matrix(claim: Claim, methods: dict, runs: list[Run]) -> tuple[np.ndarray, str]:
    """`d[u, m]` (fractions), a minus b per unit (seed) and maze of the claim's runs at its
    step (`[U, 1]` of set-level values against the base model), and the units' name."""
    by_seed = claim_pairs(claim, methods, runs)
    if claim.b == BASE:
        delta = claim.column.delta()
        found = [by_seed["a"][s] for s in sorted(by_seed["a"], key=int)]
        found = [(read, run) for read, run in found if delta in read.final]
        d = np.array([[read.final[delta]] for read, _ in found]).reshape(-1, 1)
        return d, units_name([run for _, run in found])
    seeds = paired_seeds(claim, by_seed)
    pairs = [(by_seed["b"][s][0], by_seed["a"][s][0]) for s in seeds]  # (reference, run): a - b
    d = paired_matrix(pairs, claim.column) if pairs else np.zeros((0, 1))
    return d, units_name([by_seed[side][s][1] for s in seeds for side in ("a", "b")])


def claim_slope(
    claim: Claim, methods: dict, runs: list[Run]
) -> tuple[float, float, float, int, str]:
    """A convergence claim's slope of a minus b (points per 1,000 steps) with its 95%
    interval over the units (`mazerl.analysis.stats.slope`), over the last third of the
    evaluations up to its step; against the base model, a's own slope (the base model's value
    is one constant per unit). Returns (slope, lo, hi, the units' count, the units counted);
    nan with fewer than `MIN_UNITS` units."""
    by_seed = claim_pairs(claim, methods, runs)
    if claim.b == BASE:
        seeds = sorted(by_seed["a"], key=int)
        found = group_slope([by_seed["a"][s][0] for s in seeds], claim.column)
        units = units_name([by_seed["a"][s][1] for s in seeds])
    else:
        seeds = paired_seeds(claim, by_seed)
        pairs = [(by_seed["b"][s][0], by_seed["a"][s][0]) for s in seeds]
        found = difference_slope(pairs, claim.column)
        units = units_name([by_seed[side][s][1] for s in seeds for side in ("a", "b")])
    if found is None or len(seeds) < MIN_UNITS:
        return math.nan, math.nan, math.nan, len(seeds), counted(len(seeds), units)
    return found.value, found.lo, found.hi, len(seeds), counted(len(seeds), units)


def our_setting(claim: Claim, methods: dict, runs: list[Run], mazes: int) -> str:
    """The setting of our runs of a claim, from their configs (maze generator and size, the
    policy, prompts per step) and its `mazes` evaluation mazes (the row gives N and the step)."""
    chosen = [
        r for r in runs
        if r.n == claim.n and any(
            name != BASE and selects(r, methods[name]) for name in (claim.a, claim.b)
        )
    ]  # fmt: skip

    def values(key: str) -> str:
        return "/".join(sorted({str(config_value(r, key)) for r in chosen}))

    return (
        f"{values('maze.generator')} mazes of {values('maze.size')} cells per side, a "
        f"{values('policy.name')} policy (hidden {values('policy.hidden')}), "
        f"{values('train.num_prompts')} prompts x N rollouts per step, {mazes} evaluation mazes"
    )


def points(x: float) -> str:
    """A value in points as claims.csv writes it: 3 decimals, empty for nan."""
    return "" if not math.isfinite(x) else f"{x:.3f}"


def prob(p: float) -> str:
    """A p-value as claims.csv writes it: 4 significant digits, empty for nan."""
    return "" if not math.isfinite(p) else f"{p:.4g}"


def comparison_numbers(c: Claim, methods: dict, runs: list[Run]) -> dict:
    """A comparison's numbers (points): the units (`count`, and counted with their name),
    estimate, 95% interval and df, p and p_units, the Wilcoxon p, the prediction interval
    for a single-run reference, and our setting; every number nan (and no setting) with
    fewer than `MIN_UNITS` units."""
    d, unit = claim_matrix(c, methods, runs)
    if len(d) < MIN_UNITS:
        nan = math.nan
        return {"count": len(d), "units": counted(len(d), unit), "estimate": nan, "lo": nan,
                "hi": nan, "df": nan, "p": nan, "p_units": nan, "wilcoxon_p": nan,
                "pi": (nan, nan, nan), "setting": ""}  # fmt: skip
    diff = paired_difference(d)
    lo, hi = diff.interval()
    per_unit = 100 * d.mean(1)  # [U] points
    single = c.reference_kind == "single run"
    ci = (100 * lo, 100 * hi)
    pi = prediction_interval(100 * d, c.reference_mazes, ci) if single else (math.nan,) * 3
    p = t_p_value(diff.mean, diff.se, diff.df)
    return {
        "count": len(d),
        "units": counted(len(d), unit),
        "estimate": 100 * diff.mean,
        "lo": 100 * lo,
        "hi": 100 * hi,
        "df": diff.df,
        "p": p,
        "p_units": units_p(per_unit),
        "wilcoxon_p": wilcoxon_p(per_unit),
        "pi": pi,
        "setting": our_setting(c, methods, runs, d.shape[1]) if c.reference is not None else "",
    }


def claim_runs(claims_file: ClaimsFile) -> dict[tuple[Path, ...], list[Run]]:
    """The runs of each claim's folders, read once per set of folders."""
    runs: dict[tuple[Path, ...], list[Run]] = {}
    for c in claims_file.claims:
        if c.sweep not in runs:
            runs[c.sweep] = [run for folder in c.sweep for run in find_runs(folder)]
    return runs


def claim_rows(
    claims_file: ClaimsFile, runs: dict[tuple[Path, ...], list[Run]] | None = None
) -> list[dict[str, str]]:
    """One row per claim, every value as claims.csv writes it (points to 3 decimals, p to 4
    significant digits). A comparison: the estimate, its 95% interval over the units with the
    df used (`paired_difference`: Satterthwaite's, with the maze term), p, p_units (the t
    over the units' means, under 5 units), the Holm-adjusted p of the larger of the two over
    its family and over every comparison of the file (`p_adjusted_study`), the prediction
    interval for one run with its df (single-run references only), and the two words. A
    convergence claim: its slope with the 95% interval and the word. A claim with fewer than
    `MIN_UNITS` units (a study part-way through its runs) has its units counted, every number
    empty and `TOO_FEW` for its word; in its family's Holm adjustment it counts as p =
    `PENDING_P`, so the m of each family is the declared one and a claim judged part-way is
    never adjusted over fewer tests than the file declares."""
    runs = claim_runs(claims_file) if runs is None else runs
    numbers: dict[int, dict] = {}
    for i, c in enumerate(claims_file.claims):
        if not c.is_convergence:
            numbers[i] = comparison_numbers(c, claims_file.methods, runs[c.sweep])
    compared = list(numbers)
    for group, key in [
        ([[i for i in compared if claims_file.claims[i].family == f]
          for f in {claims_file.claims[i].family for i in compared}], "p_adjusted"),
        ([compared], "p_adjusted_study"),
    ]:  # fmt: skip
        for idx in group:
            p = [
                rule_p(numbers[i]["p"], numbers[i]["p_units"])
                if numbers[i]["count"] >= MIN_UNITS
                else PENDING_P
                for i in idx
            ]
            for i, adj in zip(idx, holm(p), strict=True):
                numbers[i][key] = float(adj)
    rows = []
    for i, c in enumerate(claims_file.claims):
        row = dict.fromkeys(COLUMNS, "")
        row |= {
            "claim": c.id, "family": c.family, "a": c.a, "b": c.b, "expect": c.expect,
            "n": str(c.n), "set": c.set_name, "metric": c.metric, "k": str(c.k),
            "step": str(c.step),
        }  # fmt: skip
        if c.is_convergence:
            value, lo, hi, count, units = claim_slope(c, claims_file.methods, runs[c.sweep])
            word = convergence(lo, hi, c.margin) if count >= MIN_UNITS else TOO_FEW
            row |= {
                "units": units, "margin": points(c.margin), "slope": points(value),
                "slope_lo": points(lo), "slope_hi": points(hi), "convergence": word,
            }  # fmt: skip
            rows.append(row)
            continue
        x = numbers[i]
        reference = {
            "reference": "" if c.reference is None else points(c.reference),
            "reference_kind": c.reference_kind,
            "reference_mazes": "" if c.reference_mazes is None else str(c.reference_mazes),
            "reference_setting": claims_file.reference_setting if c.reference is not None else "",
        }
        if x["count"] < MIN_UNITS:
            rows.append(row | reference | {"units": x["units"], "direction": TOO_FEW,
                                           "direction_study": TOO_FEW})  # fmt: skip
            continue
        pi_lo, pi_hi, pi_df = x["pi"]
        bounds = (pi_lo, pi_hi) if c.reference_kind == "single run" else (x["lo"], x["hi"])
        row |= {
            "units": x["units"], "estimate": points(x["estimate"]), "lo": points(x["lo"]),
            "hi": points(x["hi"]), "df": f"{x['df']:.1f}", "p": prob(x["p"]),
            "p_units": prob(x["p_units"]), "p_adjusted": prob(x["p_adjusted"]),
            "p_adjusted_study": prob(x["p_adjusted_study"]), "pi_lo": points(pi_lo),
            "pi_hi": points(pi_hi), "pi_df": "" if not math.isfinite(pi_df) else f"{pi_df:.1f}",
            **reference, "direction": direction(x["p_adjusted"], x["estimate"], c.expect),
            "magnitude": magnitude(*bounds, c.reference), "setting": x["setting"],
            "wilcoxon_p": prob(x["wilcoxon_p"]),
            "direction_study": direction(x["p_adjusted_study"], x["estimate"], c.expect),
        }  # fmt: skip
        rows.append(row)
    return rows


def write_claims(
    out: Path, claims_file: ClaimsFile, rows: list[dict[str, str]], declared: str
) -> None:
    """`claims.csv` (the `COLUMNS`) and `claims.md` (`claims_markdown`) into `out`."""
    with open(Path(out) / "claims.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    text = "\n".join(claims_markdown(claims_file, rows, declared)) + "\n"
    (Path(out) / "claims.md").write_text(text)


def read_claims_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a written `claims.csv`, values as strings."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def metric_label(row: dict[str, str]) -> str:
    """ "exact id pass@1", "id pass@256" (sampled): the family's declaration says which."""
    kind = "exact " if Metric(row["metric"]).exact else ""
    return f"{kind}{row['set']} pass@{row['k']}"


def signed(x: str) -> str:
    """A points value of claims.csv as the write-ups print it: "+3.3"."""
    return f"{float(x):+.1f}" if x else "n/a"


def interval(lo: str, hi: str) -> str:
    return f"[{signed(lo)}, {signed(hi)}]" if lo and hi else "(n/a)"


def p_text(p: str) -> str:
    """A claims.csv p as the write-ups print it: "< 0.0001", "0.0076", "0.067", "0.12"."""
    if not p:
        return "n/a"
    x = float(p)
    if x < 1e-4:
        return "< 0.0001"
    return f"{x:.2g}" if x < 0.01 else f"{x:.3f}" if x < 0.1 else f"{x:.2f}"


def p_is(p: str) -> str:
    """ "= 0.0076" or "< 0.0001"."""
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def is_convergence(row: dict[str, str]) -> bool:
    """Whether a claims.csv row is a convergence claim's (it has a margin)."""
    return bool(row["margin"])


def is_pending(row: dict[str, str]) -> bool:
    """Whether a claims.csv row has too few units for numbers or a word (`TOO_FEW`)."""
    return TOO_FEW in (row["direction"], row["convergence"])


def settings_lines(rows: list[dict[str, str]]) -> list[str]:
    """Where the rows have references: the setting the references come from and ours (each
    distinct one once), printed beside the magnitude words."""
    refs = sorted({r["reference_setting"] for r in rows if r["reference"]})
    ours = sorted({r["setting"] for r in rows if r["reference"] and r["setting"]})
    if not refs:
        return []
    return [
        "",
        f"Magnitude compares settings that differ. The reference's: {'; '.join(refs)}. "
        f"Ours: {'; '.join(ours)}.",
    ]


def table_markdown(rows: list[dict[str, str]]) -> list[str]:
    """The claims as markdown tables (from claims.csv's rows): the comparisons (the estimate
    with its 95% interval and df, p, the units' p, Holm's p, the one-run interval, the
    reference and the two words; the settings below), then the convergence claims."""
    compared = [r for r in rows if not is_convergence(r)]
    lines = []
    if compared:
        lines += [
            "| claim | a - b | expects | N, metric, step | units | estimate [95% CI] | df | p "
            "| p (units) | p (Holm) | one run [95% PI] | reference | direction | magnitude |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in compared:
            ref = f"{signed(r['reference'])} ({r['reference_kind']})" if r["reference"] else ""
            pi = interval(r["pi_lo"], r["pi_hi"]) if r["pi_lo"] else ""
            if is_pending(r):
                lines.append(
                    f"| {r['claim']} | {r['a']} - {r['b']} | {r['expect']} | N = {r['n']}, "
                    f"{metric_label(r)}, {int(r['step']):,} | {r['units']} |  |  |  |  | "
                    f"({r['family']}) |  | {ref} | {r['direction']} |  |"
                )
                continue
            lines.append(
                f"| {r['claim']} | {r['a']} - {r['b']} | {r['expect']} | N = {r['n']}, "
                f"{metric_label(r)}, {int(r['step']):,} | {r['units']} | "
                f"{signed(r['estimate'])} {interval(r['lo'], r['hi'])} | {r['df']} | "
                f"{p_text(r['p'])} | {p_text(r['p_units']) if r['p_units'] else ''} | "
                f"{p_text(r['p_adjusted'])} ({r['family']}) | {pi} | {ref} | {r['direction']} "
                f"| {r['magnitude']} |"
            )
        lines += settings_lines(compared)
    flat = [r for r in rows if is_convergence(r)]
    if flat:
        lines += [""] if lines else []
        lines += [
            "| claim | slope of a - b | N, metric, up to step | units | slope [95% CI] "
            "(points per 1,000 steps) | margin | convergence |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in flat:
            if is_pending(r):
                lines.append(
                    f"| {r['claim']} | {r['a']} - {r['b']} | N = {r['n']}, {metric_label(r)}, "
                    f"{int(r['step']):,} | {r['units']} |  | ±{float(r['margin']):.1f} "
                    f"| {r['convergence']} |"
                )
                continue
            lines.append(
                f"| {r['claim']} | {r['a']} - {r['b']} | N = {r['n']}, {metric_label(r)}, "
                f"{int(r['step']):,} | {r['units']} | {signed(r['slope'])} "
                f"{interval(r['slope_lo'], r['slope_hi'])} | ±{float(r['margin']):.1f} "
                f"| {r['convergence']} |"
            )
    return lines


def bullet_markdown(rows: list[dict[str, str]]) -> list[str]:
    """One bullet per claim (from claims.csv's rows): the numbers and the words."""
    lines = []
    for r in rows:
        head = f"- `{r['claim']}`, {r['a']} - {r['b']} (N = {r['n']}, {metric_label(r)}, "
        if is_pending(r):
            lines.append(
                f"{head}step {int(r['step']):,}): {r['units']} paired, fewer than "
                f"{MIN_UNITS}: **{TOO_FEW}**."
            )
            continue
        if is_convergence(r):
            lines.append(
                f"{head}slope over the last third of the evaluations up to step "
                f"{int(r['step']):,}, {r['units']}): **{signed(r['slope'])} "
                f"{interval(r['slope_lo'], r['slope_hi'])}** points per 1,000 steps, margin "
                f"±{float(r['margin']):.1f}: **{r['convergence']}**."
            )
            continue
        units_p_text = f", over the units {p_text(r['p_units'])}" if r["p_units"] else ""
        text = (
            f"{head}step {int(r['step']):,}, {r['units']}; expects a - b {r['expect']} than 0): "
            f"**{signed(r['estimate'])} {interval(r['lo'], r['hi'])}** ({r['df']} df), "
            f"p {p_is(r['p'])}{units_p_text}, Holm-adjusted {p_text(r['p_adjusted'])} "
            f"({r['family']} family): direction **{r['direction']}**"
        )
        if r["reference"]:
            within = (
                f"one run {interval(r['pi_lo'], r['pi_hi'])}"
                if r["reference_kind"] == "single run"
                else "the interval"
            )
            text += (
                f"; against the reference {signed(r['reference'])} ({r['reference_kind']}), "
                f"{within}: **{r['magnitude']}**"
            )
        lines.append(text + ".")
    return lines + settings_lines([r for r in rows if not is_convergence(r)])


def shown_path(path: Path) -> str:
    """`path` relative to the working folder where it lies below it, else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def claims_markdown(
    claims_file: ClaimsFile, rows: list[dict[str, str]], declared: str
) -> list[str]:
    """claims.md: where the claims come from and when they were declared (`declared`, from
    git), the rule, the tables, the claims whose direction differs under Holm over the whole
    study, and Wilcoxon's p beside the t's."""
    compared = [r for r in rows if not is_convergence(r)]
    families = sorted({r["family"] for r in compared})
    differ = [r for r in compared if r["direction"] != r["direction_study"]]
    pending = [r["claim"] for r in rows if is_pending(r)]
    lines = [
        "# Claims",
        "",
        f"From `{shown_path(claims_file.path)}`. {declared}",
        "",
        "Each estimate is a minus b in points, paired by unit and evaluation maze; its 95% "
        "interval is Satterthwaite's with the maze term, on the df shown. p is the t test's; "
        f"under {FEW_UNITS} units also p (units), a t over the units' mean differences, and "
        "the rule takes the larger. Holm's adjustment runs within each family "
        f"({', '.join(families)}). **direction**: supported or contradicted (the estimate's "
        "sign against the claim's `expect`) where the adjusted p < 0.05, else not shown. "
        "**magnitude**: below, consistent with or above the reference, by the prediction "
        "interval for one run (a single-run reference: every variance term, the reference's "
        "own evaluation mazes included) or by the confidence interval (a mean); uninformative "
        "where that interval holds both 0 and the reference. **convergence**: converged where "
        "the slope's 95% interval lies inside the declared margin. The rule: "
        "docs/concepts/verdicts.md.",
        "",
        *(
            [
                f"{TOO_FEW.capitalize()} ({len(pending)} of {len(rows)} claims: "
                f"{', '.join(pending)}): fewer than {MIN_UNITS} units paired so far, so no "
                f"numbers and no word; in its family's Holm adjustment each counts as p = "
                f"{PENDING_P:g}.",
                "",
            ]
            if pending
            else []
        ),
        *table_markdown(rows),
        "",
        "Holm over every comparison of the study (p_adjusted_study) instead of each family: "
        + (
            "the direction of "
            + ", ".join(
                f"{r['claim']} ({r['direction']} -> {r['direction_study']}, Holm "
                f"{p_text(r['p_adjusted_study'])})"
                for r in differ
            )
            + " differs."
            if differ
            else "no direction differs."
        ),
        "",
    ]
    if compared:
        lines += [
            "Wilcoxon signed-rank p over the units' mean differences, beside the t test's p:",
            "",
            "| claim | p (t) | p (Wilcoxon) |",
            "|---|---|---|",
            *(
                f"| {r['claim']} | {p_text(r['p'])} | {p_text(r['wilcoxon_p'])} |"
                for r in compared
                if not is_pending(r)
            ),
            "",
        ]
    return lines


BLOCK = re.compile(
    r"(<!-- claims:start (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- claims:end -->)", re.S
)


def fill_blocks(text: str, rows: list[dict[str, str]]) -> str:
    """`text` with every generated block rewritten from claims.csv's `rows`. A block runs from
    `<!-- claims:start FORMAT SELECT... -->` to `<!-- claims:end -->`; FORMAT is `table` or
    `bullets`, each SELECT a claim id, a family name (all its claims) or a pattern of ids with
    `*` (`n32-*-flat`: every id it matches), in that order."""
    by_id = {r["claim"]: r for r in rows}

    def render(match: re.Match) -> str:
        fmt, *select = match["spec"].split()
        chosen = []
        for s in select:
            picked = (
                [by_id[s]] if s in by_id
                else [r for r in rows if fnmatch.fnmatchcase(r["claim"], s)] if "*" in s
                else [r for r in rows if r["family"] == s]
            )  # fmt: skip
            if not picked:
                raise UserError(f"claims block: {s!r} is no claim id or family of claims.csv")
            chosen += picked
        if fmt not in ("table", "bullets"):
            raise UserError(f"claims block: format {fmt!r} is not table or bullets")
        body = table_markdown(chosen) if fmt == "table" else bullet_markdown(chosen)
        return match.group(1) + "\n".join(body) + "\n" + match.group(4)

    return BLOCK.sub(render, text)


def recompute_claims(sweep: Path) -> tuple[ClaimsFile, list[dict[str, str]], str] | None:
    """The claims file that `sweep`'s study.yaml names, its rows recomputed from the runs'
    per-maze files (`claim_rows`) and the declaration line (`declared_line`); None where it
    names none. Reads only what the claims need: no summary, no figures."""
    path = study_claims(sweep)
    if path is None:
        return None
    claims_file = load_claims(path, sweep)
    runs = claim_runs(claims_file)
    rows = claim_rows(claims_file, runs)
    own = own_folders(path, {f for c in claims_file.claims for f in c.sweep})
    commits = [
        str(r.metrics["code"]["commit"])
        for found in runs.values()
        for r in found
        if any(Path(r.path).resolve().is_relative_to(f) for f in own)
        and r.metrics is not None
        and (r.metrics.get("code") or {}).get("commit")
    ]
    return claims_file, rows, declared_line(path, commits, own)


def own_folders(path: Path, folders: set[Path]) -> set[Path]:
    """The sweep folders (resolved) whose runs date the claims file at `path`: each folder the
    claims read unless its study.yaml names another claims file. A partner sweep of another
    study (a baseline's runs, paired with a leaderboard entry's) was declared
    for that study, so its runs say nothing of when these claims were fixed."""
    own = set()
    for folder in folders:
        named = study_claims(folder)
        if named is None or named == Path(path).resolve():
            own.add(Path(folder).resolve())
    return own


def summarize_claims(sweep: Path, out: Path) -> list[dict[str, str]] | None:
    """Write claims.md and claims.csv into `out` for the claims file that `sweep`'s study.yaml
    names (`recompute_claims`); the rows, or None where it names none."""
    found = recompute_claims(sweep)
    if found is None:
        return None
    claims_file, rows, declared = found
    write_claims(out, claims_file, rows, declared)
    return rows
