"""A study's claims as data, and each claim's row computed by the verdict rule
(`mazerl.analysis.verdicts`, docs/concepts/verdicts.md).

A sweep folder that holds a `study.yaml` with `claims: PATH` (relative to that folder) names
its claims file; `mazerl-summarize SWEEP` then writes `claims.md` and `claims.csv` beside
`summary.md`. A claims file:

    declared: "before the runs, 2026-12-04, commit 05a85bb"   # printed in claims.md
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
        n: 32                         # group size (train.group_size)
        step: 15000                   # the evaluation read
        sweep: my_other_sweep         # optional: a folder beside the summarized sweep, or a
                                      # list of them whose runs are read together
        reference: 10.6               # optional, points
        reference_kind: single run    # `single run` or `mean`, with a reference

Runs of a and b are paired by seed (the unit; on the protocol a bank model with its RL seed)
and evaluation maze (`paired_matrix`), and both runs of a pair must have started from the same
base model (sha256).
"""

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from mazerl.analysis.runs import Run, at_step, config_value, find_runs
from mazerl.analysis.stats import paired_difference
from mazerl.analysis.study import STUDY_FILE, study_spec
from mazerl.analysis.tables import paired_matrix
from mazerl.analysis.verdicts import (
    REFERENCE_KINDS,
    direction,
    holm,
    magnitude,
    prediction_interval,
    t_p_value,
    wilcoxon_p,
)
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import FAMILIES, Metric

BASE = "base model"
COLUMNS = (
    "claim", "family", "a", "b", "n", "set", "metric", "k", "step", "units", "estimate", "lo",
    "hi", "df", "p", "p_adjusted", "pi_lo", "pi_hi", "reference", "reference_kind",
    "direction", "magnitude",
)  # fmt: skip
SELECTORS = ("method", "algo", "gamma", "experiment")


def passk_families() -> tuple[str, ...]:
    """The metric families a claim may compare: the pass@k families the evaluation declares
    (`mazerl.eval.metric_names.FAMILIES`), whose per-maze values a saved evaluation rebuilds."""
    return tuple(name for name, family in FAMILIES.items() if family.passk)


@dataclass(frozen=True)
class Claim:
    """One comparison: `a` minus `b` (readers' names, `b` possibly `BASE`) at group size `n`,
    on `metric`@`k` of evaluation set `set_name` at evaluation `step`, from the runs of the
    folders `sweep`; `reference` in points (None: no reference) of kind `reference_kind`."""

    id: str
    family: str
    a: str
    b: str
    n: int
    set_name: str
    metric: str
    k: int
    step: int
    sweep: tuple[Path, ...]
    reference: float | None = None
    reference_kind: str = ""

    @property
    def column(self) -> Metric:
        return Metric(self.metric, self.set_name, self.k)


@dataclass(frozen=True)
class ClaimsFile:
    """A parsed claims file: what it says about when its claims were declared, the method
    selectors by reader's name, and the claims."""

    path: Path
    declared: str
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


def load_claims(path: Path, sweep: Path) -> ClaimsFile:
    """Parse and check the claims file at `path` for the summarized `sweep` (a claim's `sweep`
    is a folder beside it); one clear `UserError` line for anything wrong."""
    try:
        spec = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise UserError(f"{path}: cannot read the claims file ({e})") from None
    where = f"{path}:"
    if not isinstance(spec, dict) or not isinstance(spec.get("claims"), list):
        raise UserError(f"{where} needs a `claims:` list")
    methods = spec.get("methods") or {}
    for name, sel in methods.items():
        if not isinstance(sel, dict) or not sel or set(sel) - set(SELECTORS):
            raise UserError(f"{where} method {name!r}: select runs by {', '.join(SELECTORS)}")
    defaults = spec.get("defaults") or {}
    claims, seen = [], set()
    for i, raw in enumerate(spec["claims"]):
        item = {**defaults, **(raw or {})}
        cid = str(item.get("id", f"#{i + 1}"))
        missing = [f for f in ("id", "family", "a", "b", "n", "step", "set", "k") if f not in item]
        if missing:
            raise UserError(f"{where} claim {cid}: missing {', '.join(missing)}")
        if cid in seen:
            raise UserError(f"{where} claim {cid}: the id is used twice")
        seen.add(cid)
        for side in ("a", "b"):
            name = str(item[side])
            if name not in methods and not (side == "b" and name == BASE):
                raise UserError(f"{where} claim {cid}: {side} = {name!r} is not under methods:")
        metric = str(item.get("metric", "exact_pass"))
        if metric not in passk_families():
            raise UserError(
                f"{where} claim {cid}: metric {metric!r} is not one of {passk_families()}"
            )
        reference, kind = item.get("reference"), str(item.get("reference_kind") or "")
        if (reference is None) != (kind == ""):
            raise UserError(f"{where} claim {cid}: reference and reference_kind go together")
        if kind and kind not in REFERENCE_KINDS:
            raise UserError(
                f"{where} claim {cid}: reference_kind {kind!r} not in {REFERENCE_KINDS}"
            )
        named = item.get("sweep")
        named = [named] if isinstance(named, str) else named or []
        folders = tuple(Path(sweep).parent / str(n) for n in named) or (Path(sweep),)
        for other in folders:
            if not other.is_dir():
                raise UserError(f"{where} claim {cid}: sweep {other} does not exist")
        claims.append(
            Claim(
                cid, str(item["family"]), str(item["a"]), str(item["b"]), int(item["n"]),
                str(item["set"]), metric, int(item["k"]), int(item["step"]), folders,
                None if reference is None else float(reference), kind,
            )
        )  # fmt: skip
    return ClaimsFile(Path(path), str(spec.get("declared", "")), methods, claims)


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


def claim_matrix(claim: Claim, methods: dict, runs: list[Run]) -> tuple[np.ndarray, str]:
    """`d[u, m]` (fractions), a minus b per unit (seed) and maze of the claim's runs at its
    step (`[U, 1]` of set-level values against the base model), and the units' name."""
    by_seed: dict[str, dict[str, tuple[Run, Run]]] = {"a": {}, "b": {}}  # (read, as finished)
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
    if claim.b == BASE:
        delta = claim.column.delta()
        found = [by_seed["a"][s] for s in sorted(by_seed["a"], key=int)]
        found = [(read, run) for read, run in found if delta in read.final]
        d = np.array([[read.final[delta]] for read, _ in found]).reshape(-1, 1)
        return d, units_name([run for _, run in found])
    seeds = sorted(set(by_seed["a"]) & set(by_seed["b"]), key=int)
    for s in seeds:
        sha = [by_seed[side][s][1].origin.sha256 for side in ("a", "b")]
        if sha[0] and sha[1] and sha[0] != sha[1]:
            raise UserError(f"claim {claim.id}: seed {s}'s runs started from different models")
    pairs = [(by_seed["b"][s][0], by_seed["a"][s][0]) for s in seeds]  # (reference, run): a - b
    d = paired_matrix(pairs, claim.column) if pairs else np.zeros((0, 1))
    return d, units_name([by_seed[side][s][1] for s in seeds for side in ("a", "b")])


def claim_rows(claims_file: ClaimsFile) -> list[dict[str, str]]:
    """One row per claim, every value as claims.csv writes it (points to 3 decimals, p to 4
    significant digits): the estimate, its 95% interval over the units with the df used
    (`paired_difference`: Satterthwaite's, with the maze term), p, the Holm-adjusted p over
    its family, the prediction interval for one run (single-run references only), and the
    two verdicts. A claim with fewer than two units gets nan numbers and `not shown`."""
    runs: dict[tuple[Path, ...], list[Run]] = {}
    numbers = []
    for c in claims_file.claims:
        if c.sweep not in runs:
            runs[c.sweep] = [run for folder in c.sweep for run in find_runs(folder)]
        d, unit = claim_matrix(c, claims_file.methods, runs[c.sweep])
        diff = paired_difference(d) if len(d) else None
        lo, hi = diff.interval() if diff else (math.nan, math.nan)
        per_unit = 100 * d.mean(1)  # [U] points
        pi = prediction_interval(per_unit) if c.reference_kind == "single run" else (math.nan,) * 2
        numbers.append(
            {
                "units": f"{len(d)} {unit}",
                "estimate": 100 * diff.mean if diff else math.nan,
                "lo": 100 * lo,
                "hi": 100 * hi,
                "df": diff.df if diff else math.nan,
                "p": t_p_value(diff.mean, diff.se, diff.df) if diff else math.nan,
                "wilcoxon_p": wilcoxon_p(per_unit),
                "pi_lo": pi[0],
                "pi_hi": pi[1],
            }
        )
    for family in {c.family for c in claims_file.claims}:
        idx = [i for i, c in enumerate(claims_file.claims) if c.family == family]
        for i, adj in zip(idx, holm([numbers[i]["p"] for i in idx]), strict=True):
            numbers[i]["p_adjusted"] = float(adj)
    rows = []
    for c, x in zip(claims_file.claims, numbers, strict=True):
        bounds = (
            (x["pi_lo"], x["pi_hi"]) if c.reference_kind == "single run" else (x["lo"], x["hi"])
        )
        rows.append(
            {
                "claim": c.id, "family": c.family, "a": c.a, "b": c.b, "n": str(c.n),
                "set": c.set_name, "metric": c.metric, "k": str(c.k), "step": str(c.step),
                "units": x["units"], "estimate": points(x["estimate"]), "lo": points(x["lo"]),
                "hi": points(x["hi"]), "df": f"{x['df']:.1f}", "p": prob(x["p"]),
                "p_adjusted": prob(x["p_adjusted"]), "pi_lo": points(x["pi_lo"]),
                "pi_hi": points(x["pi_hi"]),
                "reference": "" if c.reference is None else points(c.reference),
                "reference_kind": c.reference_kind,
                "direction": direction(x["p_adjusted"]),
                "magnitude": magnitude(*bounds, c.reference),
                "wilcoxon_p": prob(x["wilcoxon_p"]),
            }
        )  # fmt: skip
    return rows


def points(x: float) -> str:
    """A value in points as claims.csv writes it: 3 decimals, empty for nan."""
    return "" if not math.isfinite(x) else f"{x:.3f}"


def prob(p: float) -> str:
    """A p-value as claims.csv writes it: 4 significant digits, empty for nan."""
    return "" if not math.isfinite(p) else f"{p:.4g}"


def write_claims(out: Path, claims_file: ClaimsFile, rows: list[dict[str, str]]) -> None:
    """`claims.csv` (the `COLUMNS`) and `claims.md` (the rule, the file's declaration, the
    table with the Wilcoxon p beside each t) into `out`."""
    with open(Path(out) / "claims.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    (Path(out) / "claims.md").write_text("\n".join(claims_markdown(claims_file, rows)) + "\n")


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


def table_markdown(rows: list[dict[str, str]]) -> list[str]:
    """The claims as a markdown table (from claims.csv's rows): the comparison, the estimate
    with its 95% interval and df, p and Holm's p, the one-run interval, the reference and
    the two verdicts."""
    lines = [
        "| claim | a - b | N, metric, step | units | estimate [95% CI] | df | p | p (Holm) "
        "| one run [95% PI] | reference | direction | magnitude |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ref = f"{signed(r['reference'])} ({r['reference_kind']})" if r["reference"] else ""
        pi = interval(r["pi_lo"], r["pi_hi"]) if r["pi_lo"] else ""
        lines.append(
            f"| {r['claim']} | {r['a']} - {r['b']} | N = {r['n']}, {metric_label(r)}, "
            f"{int(r['step']):,} | {r['units']} | {signed(r['estimate'])} "
            f"{interval(r['lo'], r['hi'])} | {r['df']} | {p_text(r['p'])} "
            f"| {p_text(r['p_adjusted'])} ({r['family']}) | {pi} | {ref} | {r['direction']} "
            f"| {r['magnitude']} |"
        )
    return lines


def bullet_markdown(rows: list[dict[str, str]]) -> list[str]:
    """One bullet per claim (from claims.csv's rows): the numbers and the two verdict words."""
    lines = []
    for r in rows:
        text = (
            f"- `{r['claim']}`, {r['a']} - {r['b']} (N = {r['n']}, {metric_label(r)}, step "
            f"{int(r['step']):,}, {r['units']}): **{signed(r['estimate'])} "
            f"{interval(r['lo'], r['hi'])}** ({r['df']} df), p {p_is(r['p'])}, Holm-adjusted "
            f"{p_text(r['p_adjusted'])} ({r['family']} family): direction **{r['direction']}**"
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
    return lines


def shown_path(path: Path) -> str:
    """`path` relative to the working folder where it lies below it, else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def claims_markdown(claims_file: ClaimsFile, rows: list[dict[str, str]]) -> list[str]:
    """claims.md: where the claims come from, the rule, and the table (with Wilcoxon's p)."""
    families = sorted({r["family"] for r in rows})
    lines = [
        "# Claims",
        "",
        f"From `{shown_path(claims_file.path)}` "
        f"({claims_file.declared or 'no declaration date given'}). Each estimate is a minus "
        "b in points, paired by unit and evaluation maze; its 95% "
        "interval is Satterthwaite's with the maze term, on the df shown. p is the t test's; "
        "Holm's adjustment runs within each family "
        f"({', '.join(families)}). **direction**: shown where the adjusted p < 0.05. "
        "**magnitude**: below, consistent with or above the reference, by the prediction "
        "interval for one run (single-run reference) or by the confidence interval (mean). "
        "The rule: docs/concepts/verdicts.md.",
        "",
        *table_markdown(rows),
        "",
        "Wilcoxon signed-rank p over the units' mean differences, beside the t test's p:",
        "",
        "| claim | p (t) | p (Wilcoxon) |",
        "|---|---|---|",
        *(f"| {r['claim']} | {p_text(r['p'])} | {p_text(r['wilcoxon_p'])} |" for r in rows),
        "",
    ]
    return lines


BLOCK = re.compile(
    r"(<!-- claims:start (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- claims:end -->)", re.S
)


def fill_blocks(text: str, rows: list[dict[str, str]]) -> str:
    """`text` with every generated block rewritten from claims.csv's `rows`. A block runs from
    `<!-- claims:start FORMAT SELECT... -->` to `<!-- claims:end -->`; FORMAT is `table` or
    `bullets`, each SELECT a claim id or a family name (all its claims), in that order."""
    by_id = {r["claim"]: r for r in rows}

    def render(match: re.Match) -> str:
        fmt, *select = match["spec"].split()
        chosen = []
        for s in select:
            picked = [by_id[s]] if s in by_id else [r for r in rows if r["family"] == s]
            if not picked:
                raise UserError(f"claims block: {s!r} is no claim id or family of claims.csv")
            chosen += picked
        if fmt not in ("table", "bullets"):
            raise UserError(f"claims block: format {fmt!r} is not table or bullets")
        body = table_markdown(chosen) if fmt == "table" else bullet_markdown(chosen)
        return match.group(1) + "\n".join(body) + "\n" + match.group(4)

    return BLOCK.sub(render, text)


def summarize_claims(sweep: Path, out: Path) -> list[dict[str, str]] | None:
    """Write claims.md and claims.csv into `out` for the claims file that `sweep`'s study.yaml
    names; the rows, or None where it names none."""
    path = study_claims(sweep)
    if path is None:
        return None
    claims_file = load_claims(path, sweep)
    rows = claim_rows(claims_file)
    write_claims(out, claims_file, rows)
    return rows
