"""The TensorBoard side of a run: which section each metric's chart sits in, the
custom-scalars layout (headline charts first) and the HParams entry.

Metric keys (`metrics.json`, `eval/*.json`) are `eval/<set>/<metric>` (`Metric.name`); their
TensorBoard tags (`Metric.tag`) are the same except for two families moved to sections of
their own, after `eval/`: standard errors (`eval_se/<set>/pass@k_se`) and differences to the
base model (`eval_vs_base/<set>/delta_<metric>`). `eval_base/<set>/pass@k`
(`Metric.base_tag`) repeats the base model's headline values at every evaluation step, so a
chart can hold both as lines.
"""

import re

from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams as hparams_summary

from mazerl.eval.metric_names import Metric

HEADLINE_KS = (1, 8, 64, 256)  # the pass@k curve's points in the headline charts


def headline_ks(n: int) -> list[int]:
    """pass@k points shown in the headline: `HEADLINE_KS` up to n, and n itself."""
    return sorted({k for k in HEADLINE_KS if k <= n} | {n})


def _multiline(*patterns: str) -> list:
    return ["Multiline", list(patterns)]


def _tags(*tags: str) -> list:
    """A Multiline chart of exactly these tags, each matched whole."""
    return _multiline(*(rf"^{re.escape(t)}$" for t in dict.fromkeys(tags)))


def _chart(*metrics: Metric) -> list:
    """A Multiline chart of exactly these metrics' TensorBoard tags (`Metric.tag`)."""
    return _tags(*(m.tag for m in metrics))


def train_layout(sets: list[str], n: int, ks, exact_ks, routes: bool = False) -> dict:
    """`SummaryWriter.add_custom_scalars` layout of a maze run: `{category: {title: chart}}`,
    categories in display order. Tags are regular expressions (TensorBoard's Multiline);
    an evaluation chart's are its metrics' tags (`Metric.tag`, `Metric.base_tag`), each
    matched whole.

    The headline has one chart per metric, so a sweep opened together shows one line per
    run: per set the exact pass@1 and the exact pass@k at the largest headline k (pass@n),
    then the training reward, zero-advantage fraction and focal weight. The sampled values
    and the other k follow in a category of their own, equally one metric per chart.

    Args:
        sets: the evaluation sets' names.
        n: samples per maze of the evaluation.
        ks: the k of the sampled pass@k written (`passk.sampled_ks`).
        exact_ks: the k of the exact pass@k written.
        routes: braid mazes: the route-mass charts too.

    Returns:
        The layout.
    """
    shown = headline_ks(n)
    exact = [k for k in shown if k in exact_ks]
    top = [k for k in (1, max(exact, default=1)) if k in exact]  # exact pass@1 and pass@n
    headline = {
        f"{s}: exact pass@{k}": _chart(Metric("exact_pass", s, k)) for s in sets for k in top
    }
    headline |= {
        "train: reward": _multiline(r"^train/reward_mean$"),
        "train: fraction of zero-advantage groups": _multiline(r"^train/frac_zero_adv_groups$"),
        "train: mean focal weight": _multiline(r"^train/focal_weight_mean$"),
    }
    below = {f"{s}: pass@{k} (sampled)": _chart(Metric("pass", s, k)) for s in sets for k in shown}
    below |= {
        f"{s}: exact pass@{k}": _chart(Metric("exact_pass", s, k))
        for s in sets
        for k in exact
        if k not in top
    }
    ends = [Metric("pass", s, k) for s in sets for k in (1, max(shown))]
    passk = [("pass", k) for k in ks] + [("exact_pass", k) for k in exact_ks]
    layout = {
        "headline": headline,
        "headline: sampled pass@k and other k": below,
        "pass@1 and pass@n against the base model": {
            s: _tags(*(t for m in ends if m.set == s for t in (m.tag, m.base_tag))) for s in sets
        },
        "pass@k against the base model (difference)": {
            s: _chart(*(Metric(family, s, k).delta() for family, k in passk)) for s in sets
        },
        "rare and common mazes (base success < 0.1 or not)": {
            s: _chart(Metric("success_on_rare", s), Metric("success_on_common", s)) for s in sets
        },
        "pass@k, every k": {s: _chart(*(Metric("pass", s, k) for k in ks)) for s in sets},
        "ends of training episodes": {"train: how episodes ended": _multiline(r"^train/end_")},
    }
    if routes:
        route = [Metric(family, s, source="routes") for s in sets
                 for family in ("rare_mass", "common_mass")]  # fmt: skip
        layout["routes and tail misses"] = {
            "train: tail miss, measured and closed form": _multiline(r"^routes/tail_miss_"),
            "train: rare and success mass": _multiline(r"^routes/train_(rare|success)_mass$"),
            "eval: rare and common route mass": _chart(*route),
            "eval: forgotten routes per maze": _chart(
                *(Metric("forgotten", s, source="routes") for s in sets)
            ),
        }
    return layout


def categorical_layout() -> dict:
    """Layout of a categorical simulation run (`sim/` curves, `theory/` closed forms)."""
    return {
        "headline": {
            "correct mass Q_pos and retained mass M_ret": _multiline(r"^sim/(q_pos|m_ret)$"),
            "rare correct mass": _multiline(r"^sim/rare_mass$"),
            "correct mass never sampled in the group": _multiline(r"^sim/unsampled_correct_mass$"),
            "forgotten correct answers": _multiline(r"^sim/forgotten$"),
        },
        "tail miss (closed form at this run's p, tau, N)": {
            "Pr(tail miss) and Pr(active)": _multiline(r"^theory/(tail_miss|active)$"),
        },
        "policy": {"entropy": _multiline(r"^sim/entropy$")},
    }


def hparams_metrics(sets: list[str], n: int, exact_ks) -> list[str]:
    """Tags of the final metrics in the HParams tab, the headline only so they fit without
    scrolling: per set the exact pass@1 and pass@n (sampled where not exact), then the
    training reward."""
    tags = []
    for s in sets:
        for k in sorted({1, n}):
            tags.append(Metric("exact_pass" if k in exact_ks else "pass", s, k).tag)
    return [*tags, "train/reward_mean"]


# the HParams columns of a maze run (also `metrics.json`'s "hparams"): name -> config key
RUN_HPARAMS = {
    "algo": "algo.name",
    "group_size": "train.group_size",
    "gamma": "focal.gamma",
    "maze_size": "maze.size",
    "generator": "maze.generator",
    "seed": "seed",
    "policy": "policy.name",
    "sees_position": "policy.sees_position",
    "lr": "train.lr",
    "num_prompts": "train.num_prompts",
}


def run_hparams(record: dict) -> dict:
    """The `RUN_HPARAMS` values of a run config (as plain dicts: `to_container`)."""
    return {name: select(record, key) for name, key in RUN_HPARAMS.items()}


def select(record: dict, key: str):
    """The value at the dotted `key` (`train.lr`, `eval.sets.0.name`) of a config as plain
    dicts and lists; None where it has none (a policy without `sees_position`)."""
    node = record
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def job_overrides() -> list[str]:
    """This Hydra job's own overrides (a sweep's values among them), without the keys its
    folder name leaves out (`hydra.job.config.override_dirname.exclude_keys`); [] outside
    Hydra."""
    try:
        from hydra.core.hydra_config import HydraConfig

        hydra = HydraConfig.get()
    except ValueError:
        return []
    excluded = set(hydra.job.config.override_dirname.exclude_keys)
    return [o for o in hydra.overrides.task if o.split("=")[0].lstrip("+~") not in excluded]


def write_hparams(
    writer: SummaryWriter, hparams: dict, metric_tags: list[str], record: dict | None = None
) -> None:
    """The HParams tab entry of this run: `hparams` against the last value of each scalar
    tag in `metric_tags` (tags the run already logs: no extra single-point charts).

    With the run's config `record` (plain dicts: `to_container`), every key the job
    overrides (a sweep's keys) is a column too (under its `hparams` name where it has one,
    the group's name for `group=option`), and these and the seed are marked as differing,
    so TensorBoard lists them first."""
    hparams, swept = dict(hparams), {"seed"} & set(hparams)
    names = {key: name for name, key in RUN_HPARAMS.items()}
    for override in job_overrides() if record is not None else []:
        key = override.split("=")[0].lstrip("+")
        section = select(record, key)
        whole = isinstance(section, dict | list)  # a group's option, `group=option`
        value = override.split("=", 1)[1] if whole else section
        name = names.get(f"{key}.name" if whole else key, key)
        hparams.setdefault(name, value if isinstance(value, int | float | str) else str(value))
        swept.add(name)
    experiment, *session = hparams_summary(hparams, dict.fromkeys(metric_tags, 0.0))
    data = experiment.value[0].metadata.plugin_data
    parsed = HParamsPluginData.FromString(data.content)
    infos = sorted(parsed.experiment.hparam_infos, key=lambda i: i.name not in swept)
    for info in infos:
        info.differs = info.name in swept
    parsed.experiment.ClearField("hparam_infos")
    parsed.experiment.hparam_infos.extend(infos)
    data.content = parsed.SerializeToString()
    for summary in (experiment, *session):
        writer.file_writer.add_summary(summary)
