"""The names of the metrics the evaluation writes, read back as typed metrics, and how a
summary shows each family of them.

The evaluation writes, per evaluation set, `eval/<set>/<family>@<k>` (pass@k: `exact_pass`
from the exact success probabilities, `pass` from samples), `eval/<set>/<family>` (a metric
without k: `success_rate`, `coverage`, ...), the standard error of each as `<name>_se`, the
change against the base model as `eval/<set>/delta_<family>@<k>_vs_base`, and on braid mazes
`routes/<set>/<family>`; the categorical simulation writes `<family>` alone. `Metric.parse`
is the one place that reads such a name; a `Metric` writes it: `key` within an evaluation
set's result, `name` in `metrics.json`, `tag` and `base_tag` in TensorBoard; `set_values`
reads a set's saved values back as metrics of that set.

`FAMILIES` declares each family: exact or sampled, which k a summary's tables show, whether
they show it at all. A family it does not declare is shown with every k written, so a new
metric reaches the summary (its tables, summary.csv, the paired differences) as soon as the
evaluation writes it; `declare` adds or changes a family (a plug-in's evaluation).
"""

import re
from dataclasses import dataclass, replace

SOURCES = ("eval", "routes")  # the prefixes of per-set names; none: the categorical values
STATS = ("", "se", "delta_vs_base")  # the value, its standard error, its change from the base


@dataclass(frozen=True)
class Family:
    """A family of metrics: `name` as written, `exact` (computed from exact probabilities, not
    samples), `passk` (a pass@k of per-maze success, rebuilt per maze from a saved
    evaluation's per-maze values), `ks` the k a summary's tables show (None: every k written;
    those written are kept, and where none of `ks` was written the smallest, and the largest
    written below the last of `ks`), `shown` (False: kept out of a summary's tables, `why`),
    `instead_of` (shown only on sets where that family was not written), `indexed` (written
    `<family>_<i>`, one per route index i, kept in `Metric.k`)."""

    name: str
    exact: bool = False
    passk: bool = False
    ks: tuple[int, ...] | None = None
    shown: bool = True
    instead_of: str | None = None
    why: str = ""
    indexed: bool = False


FAMILIES: dict[str, Family] = {}


def declare(family: Family) -> Family:
    """Add (or replace) a family of `FAMILIES`.

    Args:
        family: the declaration, keyed by its `name`.

    Returns:
        `family` itself.
    """
    FAMILIES[family.name] = family
    return family


for _family in (
    Family("exact_pass", exact=True, passk=True, ks=(1, 8, 256, 2048)),
    Family("pass", passk=True, ks=(1, 8, 64, 256), instead_of="exact_pass"),
    Family("success_rate", shown=False, why="sampled pass@1 under another name"),
    Family("coverage", shown=False, why="sampled pass@n: a cross-check of exact pass@k"),
    Family(
        "rare_success_mazes", shown=False, why="the share of mazes the base model solved rarely"
    ),
    Family("success_on_rare", shown=False, why="sampled success on those mazes"),
    Family("success_on_common", shown=False, why="sampled success on the rest"),
    Family("q_pos", exact=True),
    Family("m_ret", exact=True),
    Family("rare_mass", exact=True),
    Family("common_mass", exact=True),
    Family("forgotten", exact=True),
    Family("expected_distinct", exact=True),
    Family("distinct_found"),
    Family("mass_route", exact=True, shown=False, why="one per route", indexed=True),
    Family("rare_routes_per_maze", exact=True, shown=False, why="fixed by the base model"),
    Family("entropy", exact=True, shown=False, why="the policy's entropy"),
    Family("unsampled_correct_mass", shown=False, why="a training-group diagnostic"),
):
    declare(_family)

_NAME = re.compile(
    r"^(?:(?P<source>[a-z_]+)/(?P<set>[^/]+)/)?(?P<delta>delta_)?(?P<family>[A-Za-z][\w.-]*?)"
    r"(?:@(?P<k>\d+)|_(?P<index>\d+))?(?P<se>_se)?(?P<vs>_vs_base)?$"
)


@dataclass(frozen=True)
class Metric:
    """One metric as the evaluation names it: its `family`, evaluation `set` ("" for the
    categorical simulation's values), `k` (pass@k; the route index of `mass_route_<i>`; None
    without one), `source` (`eval`, `routes`, or "" for a value without set) and `stat` (""
    the value, "se" its standard error, "delta_vs_base" its change from the base model)."""

    family: str
    set: str = ""
    k: int | None = None
    source: str = "eval"
    stat: str = ""

    @classmethod
    def parse(cls, name: str) -> "Metric | None":
        """The metric a name written by the evaluation stands for.

        Args:
            name: a name as written (`eval/id/exact_pass@256`, `eval/id/pass@1_se`, ...).

        Returns:
            The metric; None where `name` is not such a name.
        """
        m = _NAME.match(name)
        if m is None or (m["source"] is not None and m["source"] not in SOURCES):
            return None
        family, index, stat = m["family"], m["k"], ""
        if m["index"] is not None:  # `mass_route_0`; another family ending in _<digits>: whole
            if FAMILIES.get(family, Family(family)).indexed:
                index = m["index"]
            else:
                family += f"_{m['index']}"
        if m["delta"] and m["vs"] and not m["se"]:
            stat = "delta_vs_base"
        else:
            family = (m["delta"] or "") + family + (m["vs"] or "")
            stat = "se" if m["se"] else ""
        return cls(family, m["set"] or "", None if index is None else int(index),
                   m["source"] or "", stat)  # fmt: skip

    @classmethod
    def on_set(cls, key: str, set: str, source: str = "eval") -> "Metric":
        """The metric an evaluation set's own key names on that set.

        Args:
            key: the name within the set, as `evaluate_set` writes it (`pass@1_se`,
                `exact_pass@256`, `delta_pass@1_vs_base`, `rare_mass`).
            set: the evaluation set's name.
            source: `eval`, or `routes` for a route metric.

        Returns:
            The metric, its `name` `<source>/<set>/<key>`.

        Raises:
            ValueError: `key` is not a metric name.
        """
        return replace(cls.of(key), set=set, source=source)

    @classmethod
    def of(cls, metric: "Metric | str") -> "Metric":
        """A metric from itself or its name.

        Args:
            metric: a `Metric`, or a name as written.

        Returns:
            `metric` itself, or the metric its name stands for.

        Raises:
            ValueError: `metric` is not a metric name the evaluation writes.
        """
        if isinstance(metric, Metric):
            return metric
        parsed = cls.parse(metric)
        if parsed is None:
            raise ValueError(f"{metric!r} is not a metric name the evaluation writes")
        return parsed

    @property
    def short(self) -> str:
        """The name within its set: `exact_pass@256`, `rare_mass`, `mass_route_0`."""
        if self.k is None:
            return self.family
        return f"{self.family}{'_' if self.declared.indexed else '@'}{self.k}"

    @property
    def name(self) -> str:
        """The name as written: `eval/id/exact_pass@256`, `eval/id/delta_pass@1_vs_base`."""
        short = self.short
        if self.stat == "se":
            short += "_se"
        elif self.stat == "delta_vs_base":
            short = f"delta_{short}_vs_base"
        return f"{self.source}/{self.set}/{short}" if self.source else short

    @property
    def key(self) -> str:
        """The name within its set, as an evaluation set's result holds it: `pass@1_se`,
        `delta_pass@1_vs_base` (the `name` without `<source>/<set>/`)."""
        return replace(self, source="").name

    @property
    def tag(self) -> str:
        """Its TensorBoard tag: the `name`, except two statistics of `eval/` metrics in
        sections of their own after `eval/`: a standard error under `eval_se/`
        (`eval_se/id/pass@8_se`), a change from the base model under `eval_vs_base/`
        (`eval_vs_base/id/delta_pass@8`)."""
        if self.source == "eval" and self.stat == "se":
            return f"eval_se/{self.set}/{self.key}"
        if self.source == "eval" and self.stat == "delta_vs_base":
            return f"eval_vs_base/{self.set}/delta_{self.short}"
        return self.name

    @property
    def base_tag(self) -> str:
        """The TensorBoard tag of the base model's value repeated as a reference line at every
        evaluation step: `eval_base/id/pass@1`."""
        return f"eval_base/{self.set}/{self.key}"

    def __str__(self) -> str:
        return self.name

    @property
    def declared(self) -> Family:
        """Its family's declaration (an undeclared family: shown, sampled, every k)."""
        return FAMILIES.get(self.family) or Family(self.family)

    @property
    def exact(self) -> bool:
        return self.declared.exact

    @property
    def label(self) -> str:
        """How a table or an axis names it: `exact pass@256`, `pass@1`, `rare mass`."""
        return self.short.replace("_", " ")

    @property
    def value(self) -> "Metric":
        """The metric itself, whatever statistic of it this names."""
        return replace(self, stat="")

    def se(self) -> "Metric":
        """Its standard error.

        Returns:
            The same metric with `stat` `se`.
        """
        return replace(self, stat="se")

    def delta(self) -> "Metric":
        """Its change from the base model.

        Returns:
            The same metric with `stat` `delta_vs_base`.
        """
        return replace(self, stat="delta_vs_base")

    def at(self, k: int) -> "Metric":
        """The same family and set at another k.

        Args:
            k: the k of pass@k (a route index for an indexed family).

        Returns:
            The metric at `k`.
        """
        return replace(self, k=k)


# a saved set's entries that describe what its figures cover, not a measure: `per_maze`, and a
# language model's `mazes` (`{"sampled": M_s, "exact": M_e}`) and `max_new_tokens`
SET_FACTS = frozenset({"per_maze", "mazes", "max_new_tokens"})


def set_values(saved: dict, set: str, source: str = "eval") -> dict[Metric, float]:
    """The metrics of one evaluation set's saved result (its entry of `eval/step_*.json`);
    `SetResult.from_json` and the analysis read a saved set's metrics through it.

    Args:
        saved: the set's entry, each value under its `Metric.key` (`pass@1`, `pass@1_se`).
        set: the set's name ("" for a result not yet on a set).
        source: `eval`, or `routes` for route metrics.

    Returns:
        `{Metric: value}` of its real-number entries whose key is a metric name, each metric
        of `set` and `source`; `SET_FACTS` and booleans left out.
    """
    out = {}
    for key, v in saved.items():
        metric = None if key in SET_FACTS else Metric.parse(key)
        if metric is not None and isinstance(v, int | float) and not isinstance(v, bool):
            out[replace(metric, set=set, source=source)] = float(v)
    return out
