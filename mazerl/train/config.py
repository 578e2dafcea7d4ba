"""The settings of a training run: `train` (the RL loop), `base` (the base model's SFT) and
`logger` (TensorBoard and the console); each field with its rule and description. `Config`:
the whole run's, every section."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import MISSING, OmegaConf

from mazerl.algos import AlgoConfig, FocalConfig
from mazerl.core.device import device_setting, seed_setting, threads_setting
from mazerl.core.errors import ConfigError, UserError
from mazerl.core.settings import (
    COUNT,
    FLAG,
    NATURAL,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    TEXT,
    Rule,
    each,
    need,
    number,
    one_of,
    optional,
    part,
    section,
    setting,
)
from mazerl.envs.spec import MazeConfig, MazeSpec, eval_set_spec
from mazerl.eval.config import EvalConfig
from mazerl.policy.config import policy_config

BETAS = Rule(
    lambda v: each(number(0, 1, hi_open=True)).ok(v) and len(v) == 2, "two values in [0, 1)"
)


@dataclass
class TrainConfig:
    """The `train` section: the RL loop (iterations, batch, optimizer, sampling, checkpoints)."""

    iterations: int = setting(
        300, COUNT, "RL iterations (with budget=rollouts: at budget_reference_group_size)"
    )
    num_prompts: int = setting(32, COUNT, "mazes per iteration (the paper: 256)")
    group_size: int = setting(
        8, number(2, integer=True), "rollouts per maze, N (the paper: 4 ... 128)"
    )
    lr: float = setting(1e-4, POSITIVE, "AdamW learning rate")
    weight_decay: float = setting(0.0, NON_NEGATIVE, "AdamW weight decay")
    betas: tuple[float, float] = setting((0.9, 0.999), BETAS, "AdamW betas")
    warmup: int = setting(0, NATURAL, "iterations of linear learning-rate warm-up")
    schedule: str = setting(
        "constant", one_of("constant", "cosine"), "learning-rate schedule: constant | cosine"
    )
    ppo_epochs: int = setting(
        1, COUNT, "passes over each batch (1 pass, 1 minibatch: fully on-policy)"
    )
    minibatches: int = setting(1, COUNT, "optimizer steps per pass, split by maze")
    grad_clip: float = setting(1.0, POSITIVE, "gradient norm clip")
    temperature: float = setting(1.0, POSITIVE, "sampling temperature of the rollouts")
    top_p: float = setting(
        1.0, number(0, 1, lo_open=True), "nucleus sampling of the rollouts (1: off)"
    )
    budget: str = setting(
        "steps",
        one_of("steps", "rollouts"),
        "steps: iterations fixed | rollouts: iterations x N fixed",
    )
    budget_reference_group_size: int = setting(
        8, number(2, integer=True), "budget=rollouts: the N at which iterations apply"
    )
    eval_every: int = setting(50, NATURAL, "iterations between evaluations (0: only at the end)")
    checkpoint_every: int = setting(50, COUNT, "iterations between checkpoints")
    keep_checkpoints: int = setting(2, COUNT, "checkpoints kept in the run dir")
    resume: bool = setting(
        True, FLAG, "continue from the run dir's last checkpoint if there is one"
    )
    fork: str | None = setting(
        None,
        optional(TEXT),
        "a checkpoint (.pt) of another run to start from where the run dir has none: its "
        "weights, optimizer, schedule, counters and random state, under this run's settings",
    )
    max_bad_steps: int = setting(5, COUNT, "stop after this many non-finite steps in a row")
    skip_zero_advantage: bool = setting(
        True, FLAG, "skip groups whose advantages are all zero in the update"
    )
    zero_gradient_step: bool = setting(
        True,
        FLAG,
        "run AdamW's step on a minibatch with no non-zero advantage (an exactly zero gradient; "
        "the moments still move the weights), as TRL and verl do; false: skip it, weights and "
        "moments unchanged",
    )
    stop_on_zero_advantage: bool = setting(
        False,
        FLAG,
        "stop (exit 2) instead of warning when no group of the first iterations has a "
        "non-zero advantage",
    )
    log_every: int = setting(10, COUNT, "iterations between log lines (and train.csv rows)")

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """Minibatches split the batch's mazes evenly; only the skipping update knows that a
        minibatch has no live row, so only it can skip that minibatch's step."""
        need(
            node.num_prompts % node.minibatches == 0,
            f"{prefix}minibatches",
            f"a divisor of {prefix}num_prompts={node.num_prompts}",
            node.minibatches,
        )
        need(
            node.zero_gradient_step or node.skip_zero_advantage,
            f"{prefix}zero_gradient_step",
            f"true while {prefix}skip_zero_advantage=false",
            node.zero_gradient_step,
        )


@dataclass
class BaseConfig:
    """The `base` section: the base policy, supervised training on solver demonstrations
    (SFT), cached."""

    path: str | None = setting(
        None, optional(TEXT), "use this base checkpoint instead of training one"
    )
    steps: int = setting(1500, NATURAL, "SFT steps on solver demonstrations (the paper: 1,500)")
    batch_size: int = setting(32, COUNT, "SFT batch size")
    lr: float = setting(5e-4, POSITIVE, "SFT AdamW learning rate")
    noise: float = setting(
        0.0, number(0, 1, hi_open=True), "per-step mistake rate of the demonstrating solver"
    )
    target_pass1: float | None = setting(
        0.3,
        optional(number(0, 1, lo_open=True)),
        "stop SFT once the probe's pass@1 reaches this (null: never)",
    )
    probe_every: int = setting(50, COUNT, "SFT steps between probes")
    probe_mazes: int = setting(64, COUNT, "mazes of the probe")
    probe_samples: int = setting(8, COUNT, "samples per probe maze")
    seed: int = setting(
        0, SEED, "seed of the base model (not the run's seed); bank model k is base.seed=k"
    )
    held_out: int = setting(
        1024,
        NATURAL,
        "SFT never sees the first this many mazes of each generated evaluation set (at least "
        "the set's own), so runs whose evaluation sets differ in size share one base model",
    )
    bank: str = setting(
        "auto",
        one_of("auto", "off", "require"),
        "auto: load the shipped bank model when one has these base settings, else train | "
        "off: always train (or use the cache) | require: fail unless a bank model matches",
    )
    cache_dir: str | None = setting(
        None,
        optional(TEXT),
        "base-model cache (null: $MAZERL_CACHE, else ./outputs/base_models)",
    )


@dataclass
class LoggerConfig:
    """The `logger` section: TensorBoard's writes and the console's progress."""

    flush_secs: int = setting(30, COUNT, "TensorBoard writes its events at least this often")
    progress: str = setting(
        "auto",
        one_of("auto", "bar", "lines", "off"),
        "auto (a bar on a terminal, log lines otherwise) | bar | lines | off",
    )


def policy_schema(node) -> type:
    """The config class of the section's policy (the shared fields' if its name is unknown)."""
    return policy_config(node["name"])


@dataclass
class Config:
    """`mazerl-train`'s settings: a run's whole config, one section per part. The app validates
    the composed config (`mazerl.apps.schema.validate`) and makes it these dataclasses once
    (`mazerl.apps.schema.typed`); the loop and the step take it typed."""

    maze: MazeConfig = part(MazeConfig, "the training mazes (conf/maze)")
    policy: Any = setting(
        MISSING, section(policy_schema), "the policy: a registered policy's config (conf/policy)"
    )
    algo: AlgoConfig = part(AlgoConfig, "the method (conf/algo)")
    focal: FocalConfig = part(FocalConfig, "F-GRPO's focal weighting (conf/focal)")
    train: TrainConfig = part(TrainConfig, "the RL loop (conf/train)")
    base: BaseConfig = part(BaseConfig, "the base model")
    eval: EvalConfig = part(EvalConfig, "the evaluation (conf/eval)")
    logger: LoggerConfig = part(LoggerConfig, "TensorBoard and the console (conf/logger)")
    seed: int = seed_setting()
    device: str = device_setting()
    threads: int = threads_setting()

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """The base checkpoint's presence, the maze distributions themselves (layout files
        load here: file:line:col errors), then (with torch) the method on groups of
        `train.group_size` (`check_algo`) and CUDA's presence."""
        path = node.base.path
        need(
            path is None or Path(path).expanduser().is_file(), "base.path", "an existing file", path
        )
        try:
            spec = MazeSpec.of(node.maze)
            _ = spec.grid_shape  # a layout file is read and checked here
        except ConfigError as e:
            raise ConfigError(f"maze: {e}") from None
        for i, s in enumerate(node.eval.sets):
            try:
                set_spec = eval_set_spec(spec, s)  # None: skipped in this layout run
                _ = set_spec and set_spec.grid_shape
            except UserError as e:  # a bad size, or a layout file (file:line:col)
                raise ConfigError(f"eval.sets.{i} ({s.name}): {e}") from None
        from mazerl.algos import check_algo  # loads the objectives (torch): checked last

        check_algo(OmegaConf.to_object(node.algo), node.train.group_size)
        if str(node.device).startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise ConfigError(f"device={node.device} requested but CUDA is not available here")
