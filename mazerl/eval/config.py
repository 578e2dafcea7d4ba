"""The `eval` settings: the evaluation sets and how each is sampled and scored; each field
with its rule and description."""

from dataclasses import dataclass

from omegaconf import MISSING

from mazerl.core.settings import (
    COUNT,
    NATURAL,
    POSITIVE,
    SEED,
    TEXT,
    each,
    need,
    optional,
    registered,
    sections,
    setting,
)
from mazerl.envs.generators import GENERATORS, PLACEMENTS


@dataclass
class EvalSetConfig:
    """One evaluation set (an item of `eval.sets`): the training mazes varied, or a layout."""

    name: str = setting(MISSING, TEXT, "the set's name in TensorBoard and metrics.json")
    size_delta: int = setting(
        0, NATURAL, "cells added to the training maze size (OOD: larger mazes)"
    )
    generator: str | None = setting(
        None,
        optional(registered(GENERATORS)),
        "the set's generator (null: the training generator)",
    )
    start_goal: str | None = setting(
        None,
        optional(registered(PLACEMENTS)),
        "the set's start and goal placement (null: the training one)",
    )
    num_mazes: int = setting(
        64, COUNT, "mazes of a generated set (a layout set is its whole collection)"
    )
    layout: str | None = setting(
        None, optional(TEXT), "a layout collection (name, file, directory or glob) to use"
    )


@dataclass
class EvalConfig:
    """The `eval` section: the sets, samples per maze, the k of pass@k, pictures."""

    sets: list[EvalSetConfig] = setting(
        [
            EvalSetConfig("id"),
            EvalSetConfig("ood_large", size_delta=2),
            EvalSetConfig("ood_dfs", generator="dfs"),
        ],
        sections(EvalSetConfig, min_len=1),
        "evaluation sets (the first is the headline; see docs/concepts/exact-evaluation.md)",
    )
    n: int = setting(256, COUNT, "samples per maze at the final evaluation")
    n_during: int = setting(
        32, COUNT, "samples per maze at intermediate evaluations (exact metrics always)"
    )
    ks: list[int] = setting([], each(COUNT), "k of the sampled pass@k (empty: 1, 2, 4, ..., n)")
    exact_ks: list[int] = setting(
        [1, 8, 64, 128, 256, 1024, 2048],
        each(COUNT, min_len=1),
        "k of the exact pass@k (from exact success probabilities)",
    )
    sampled_mazes: int | None = setting(
        None, optional(COUNT), "sampled pass@k on the first this many mazes of a set (null: all)"
    )
    temperature: float = setting(1.0, POSITIVE, "sampling temperature of the evaluation")
    seed: int = setting(1234, SEED, "fixes the evaluation mazes, the same for every run")
    batch_rollouts: int = setting(16384, COUNT, "rollouts generated at once")
    images: int = setting(
        4, NATURAL, "evaluation mazes per set drawn with sampled paths into TensorBoard"
    )
    images_every: int | None = setting(
        None, optional(COUNT), "steps between pictures (null: every evaluation)"
    )

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """The rules between settings: the sampled k within the samples per maze; the sets'
        names distinct.

        Args:
            node: the `eval` section of a config.
            prefix: the section's key prefix (`eval.`), for the messages.

        Raises:
            ConfigError: a rule broken, naming the key.
        """
        need(
            max(node.ks, default=1) <= node.n,
            f"{prefix}ks",
            f"in [1, {prefix}n={node.n}]",
            list(node.ks),
        )
        names = [s.name for s in node.sets]
        need(len(set(names)) == len(names), f"{prefix}sets", "sets with distinct names", names)
