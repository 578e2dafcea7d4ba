"""The TensorBoard side of a run: which section each metric's chart sits in, the
custom-scalars layout (headline charts first) and the HParams entry.

Metric keys (`metrics.json`, `eval/*.json`) are `eval/<set>/<metric>`; their TensorBoard tags
are the same except for two families moved to sections of their own, after `eval/`:
standard errors (`eval_se/<set>/pass@k_se`) and differences to the base model
(`eval_vs_base/<set>/delta_<metric>`). `eval_base/<set>/pass@k` repeats the base model's
headline values at every evaluation step, so a chart can hold both as lines.
"""

import re

from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams as hparams_summary

HEADLINE_KS = (1, 8, 64, 256)  # the pass@k curve's points in the headline charts


def tb_tag(key: str) -> str:
    """TensorBoard tag of a metric key (see the module docstring)."""
    section, rest = key.split("/", 1) if "/" in key else ("", key)
    if section != "eval":
        return key
    if key.endswith("_se"):
        return f"eval_se/{rest}"
    if match := re.fullmatch(r"([^/]+)/delta_(.+)_vs_base", rest):
        return f"eval_vs_base/{match[1]}/delta_{match[2]}"
    return key


def headline_ks(n: int) -> list[int]:
    """pass@k points shown in the headline: `HEADLINE_KS` up to n, and n itself."""
    return sorted({k for k in HEADLINE_KS if k <= n} | {n})


def _any(names) -> str:
    return "(" + "|".join(re.escape(str(x)) for x in names) + ")"


def _multiline(*patterns: str) -> list:
    return ["Multiline", list(patterns)]


def train_layout(sets: list[str], n: int, routes: bool = False) -> dict:
    """`SummaryWriter.add_custom_scalars` layout of a maze run: `{category: {title: chart}}`,
    categories in display order. Tags are regular expressions (TensorBoard's Multiline)."""
    ks, big = headline_ks(n), max(headline_ks(n))
    s_any = _any(sets)
    headline = {
        f"{s}: pass@k, k = {', '.join(map(str, ks))} (sampled and exact)": _multiline(
            rf"^eval/{re.escape(s)}/(exact_)?pass@{_any(ks)}$"
        )
        for s in sets
    }
    headline |= {
        f"{s}: pass@1 and pass@{big} against the base model": _multiline(
            rf"^eval(_base)?/{re.escape(s)}/pass@{_any((1, big))}$"
        )
        for s in sets
    }
    headline |= {
        "train: reward and success rate": _multiline(r"^train/(reward_mean|success_rate)$"),
        "train: fraction of zero-advantage groups": _multiline(r"^train/frac_zero_adv_groups$"),
        "train: mean focal weight": _multiline(r"^train/focal_weight_mean$"),
    }
    layout = {
        "headline": headline,
        "pass@k against the base model (difference)": {
            s: _multiline(rf"^eval_vs_base/{re.escape(s)}/delta_(exact_)?pass@\d+$") for s in sets
        },
        "rare and common mazes (base success < 0.1 or not)": {
            s: _multiline(rf"^eval/{re.escape(s)}/success_on_(rare|common)$") for s in sets
        },
        "pass@k, every k": {s: _multiline(rf"^eval/{re.escape(s)}/pass@\d+$") for s in sets},
        "ends of training episodes": {"train: how episodes ended": _multiline(r"^train/end_")},
    }
    if routes:
        layout["routes and tail misses"] = {
            "train: tail miss, measured and closed form": _multiline(r"^routes/tail_miss_"),
            "train: rare and success mass": _multiline(r"^routes/train_(rare|success)_mass$"),
            "eval: rare and common route mass": _multiline(rf"^routes/{s_any}/(rare|common)_mass$"),
            "eval: forgotten routes per maze": _multiline(rf"^routes/{s_any}/forgotten$"),
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
    """Tags of the final metrics shown in the HParams tab: per set the headline pass@k,
    exact pass@k at those k, success rate; and the training reward and success rate."""
    ks = headline_ks(n)
    per_set = [f"pass@{k}" for k in ks] + [f"exact_pass@{k}" for k in ks if k in exact_ks]
    tags = [f"eval/{s}/{metric}" for s in sets for metric in [*per_set, "success_rate"]]
    return [*tags, "train/reward_mean", "train/success_rate"]


def write_hparams(writer: SummaryWriter, hparams: dict, metric_tags: list[str]) -> None:
    """The HParams tab entry of this run: `hparams` against the last value of each scalar
    tag in `metric_tags` (tags the run already logs: no extra single-point charts)."""
    for summary in hparams_summary(hparams, dict.fromkeys(metric_tags, 0.0)):
        writer.file_writer.add_summary(summary)
