"""Structured config schemas (registered in Hydra's ConfigStore) and their validation.

The YAML files under `conf/` hold values; these dataclasses hold the schema, so a misspelt
key or a wrong type fails at start-up naming the key. Beside each dataclass, its `RULES` table
holds every field's valid values (a test checks that no field lacks one); `validate` walks the
config with these tables, then checks the few constraints between fields, before any work
starts, and raises `ConfigError` naming the key, the value and what is allowed.
"""

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf

from mazerl.algos import ADVANTAGES, AGGREGATIONS, POLICY_LOSSES, REWARD_TRANSFORMS, check_algo
from mazerl.algos.objective import AlgoConfig, FocalConfig
from mazerl.core.config import register_resolvers
from mazerl.core.errors import ConfigError, UserError
from mazerl.core.registry import Registry
from mazerl.envs.generators import GENERATORS, MAX_CELLS, MIN_CELLS, PLACEMENTS
from mazerl.envs.spec import eval_set_spec, maze_spec
from mazerl.policy import POLICIES, PolicyConfig
from mazerl.policy.gru import GruConfig
from mazerl.policy.transformer import TransformerConfig

# ---- rules: what values one setting accepts


@dataclass(frozen=True)
class Rule:
    """The values one setting accepts: `ok(value)`, and `allowed` (words, or a function giving
    them when they can change, as a registry's names do) for the message."""

    ok: Callable[[Any], bool]
    allowed: str | Callable[[], str]
    section: Callable[[Any], type] | None = None  # a section: its schema, from the node

    def check(self, key: str, value: Any) -> None:
        if not self.ok(value):
            words = self.allowed if isinstance(self.allowed, str) else self.allowed()
            shown = list(value) if isinstance(value, ListConfig) else value
            raise ConfigError(f"{key} must be {words}, got {shown!r}")


def number(
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    integer: bool = False,
    unit: str = "",
) -> Rule:
    """An integer, or a finite number (never nan or inf), between `lo` and `hi`."""

    def ok(v) -> bool:
        kinds = int if integer else int | float
        if isinstance(v, bool) or not isinstance(v, kinds) or not math.isfinite(v):
            return False
        return (lo < v if lo_open else lo <= v) and (v < hi if hi_open else v <= hi)

    if math.isinf(lo) and math.isinf(hi):
        words = "a finite number"
    elif math.isinf(hi):
        words = f"{'>' if lo_open else '>='} {lo:n}"
    elif math.isinf(lo):
        words = f"{'<' if hi_open else '<='} {hi:n}"
    else:
        words = f"in {'(' if lo_open else '['}{lo:n}, {hi:n}{')' if hi_open else ']'}"
    return Rule(ok, words + (f" {unit}" if unit else "") + ("" if integer else " and finite"))


def optional(rule: Rule) -> Rule:
    """`rule`, or null."""
    words = rule.allowed

    def allowed() -> str:
        return f"{words if isinstance(words, str) else words()} or null"

    return Rule(lambda v: v is None or rule.ok(v), allowed)


def one_of(*names: str) -> Rule:
    return Rule(lambda v: v in names, " or ".join(repr(n) for n in names))


def registered(registry: Registry) -> Rule:
    """A name registered in `registry` (its names read when checked: plug-ins register late)."""
    return Rule(
        lambda v: isinstance(v, str) and v in registry,
        lambda: f"a registered {registry.kind} ({', '.join(registry.names())})",
    )


def each(rule: Rule, *, min_len: int = 0) -> Rule:
    """A list whose every element satisfies `rule` (at least `min_len` of them)."""
    words = rule.allowed

    def allowed() -> str:
        w = words if isinstance(words, str) else words()
        return f"a {'non-empty ' if min_len else ''}list of values {w}"

    return Rule(
        lambda v: (
            isinstance(v, list | tuple | ListConfig)
            and len(v) >= min_len
            and all(rule.ok(x) for x in v)
        ),
        allowed,
    )


FLAG = Rule(lambda v: isinstance(v, bool), "true or false")
TEXT = Rule(lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string")
MAPPING = Rule(lambda v: isinstance(v, dict | DictConfig), "a mapping")
POSITIVE = number(0, lo_open=True)
NON_NEGATIVE = number(0)
COUNT = number(1, integer=True)  # 1, 2, 3, ...
NATURAL = number(0, integer=True)  # 0, 1, 2, ...
SEED = number(0, 2**32 - 1, integer=True)
CELLS = number(MIN_CELLS, MAX_CELLS, integer=True, unit="cells")


@dataclass
class MazeConfig:
    """Training mazes (and the `id` evaluation set): see `mazerl.envs.spec.MazeSpec`."""

    size: int = 5
    height: int | None = None
    width: int | None = None
    generator: str = "prim"
    start_goal: str = "corners"
    layout: str | None = None
    allow_revisits: bool = False  # true: the released MaxRL reward (detours allowed)
    routes: int = 1  # exactly this many simple start-goal routes (> 1: braid mazes)
    route_lengths: str = "equal"  # braid: "equal" or "short_common" route lengths
    pool_size: int = 0  # 0: fresh mazes every iteration; N: a fixed pool of N training mazes


MAZE_RULES = {
    "size": CELLS,
    "height": optional(CELLS),
    "width": optional(CELLS),
    "generator": registered(GENERATORS),
    "start_goal": registered(PLACEMENTS),
    "layout": optional(TEXT),
    "allow_revisits": FLAG,
    "routes": number(1, 8, integer=True),
    "route_lengths": one_of("equal", "short_common"),
    "pool_size": NATURAL,
}


@dataclass
class TrainConfig:
    iterations: int = 300
    num_prompts: int = 32  # mazes per iteration (the paper: 256)
    group_size: int = 8  # rollouts per maze, N (the paper: 4 ... 128)
    lr: float = 1e-4
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    warmup: int = 0  # iterations of linear learning-rate warm-up
    schedule: str = "constant"  # constant | cosine
    ppo_epochs: int = 1  # passes over each batch (1 + 1 minibatch: fully on-policy)
    minibatches: int = 1  # optimizer steps per pass, split by prompt
    grad_clip: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    budget: str = "steps"  # steps: fixed iterations | rollouts: iterations * N constant
    budget_reference_group_size: int = 8  # with budget=rollouts: N at which iterations apply
    eval_every: int = 50  # 0: only at the end
    checkpoint_every: int = 50
    keep_checkpoints: int = 2
    resume: bool = True  # continue from the run dir's last checkpoint if there is one
    max_bad_steps: int = 5  # stop after this many non-finite steps in a row
    skip_zero_advantage: bool = True  # update: skip groups with all-zero advantages (exact)
    log_every: int = 10  # plain log lines when not on a terminal


TRAIN_RULES = {
    "iterations": COUNT,
    "num_prompts": COUNT,
    "group_size": number(2, integer=True),
    "lr": POSITIVE,
    "weight_decay": NON_NEGATIVE,
    "betas": Rule(
        lambda v: each(number(0, 1, hi_open=True)).ok(v) and len(v) == 2,
        "two values in [0, 1)",
    ),
    "warmup": NATURAL,
    "schedule": one_of("constant", "cosine"),
    "ppo_epochs": COUNT,
    "minibatches": COUNT,
    "grad_clip": POSITIVE,
    "temperature": POSITIVE,
    "top_p": number(0, 1, lo_open=True),
    "budget": one_of("steps", "rollouts"),
    "budget_reference_group_size": number(2, integer=True),
    "eval_every": NATURAL,
    "checkpoint_every": COUNT,
    "keep_checkpoints": COUNT,
    "resume": FLAG,
    "max_bad_steps": COUNT,
    "log_every": COUNT,
    "skip_zero_advantage": FLAG,
}


@dataclass
class BaseConfig:
    """The base policy: supervised training on solver demonstrations (SFT), cached."""

    path: str | None = None  # use this base checkpoint instead of training one
    steps: int = 1500  # the paper: 1,500 steps, batch 32, AdamW lr 5e-4
    batch_size: int = 32
    lr: float = 5e-4
    noise: float = 0.0  # per-step mistake rate of the demonstrating solver
    target_pass1: float | None = 0.3  # stop once the probe pass@1 reaches this (null: never)
    probe_every: int = 50
    probe_mazes: int = 64
    probe_samples: int = 8
    seed: int = 0  # the base model does not depend on the run seed
    cache_dir: str | None = None  # null: $MAZERL_CACHE, else ./outputs/base_models


BASE_RULES = {
    "path": optional(TEXT),
    "steps": NATURAL,
    "batch_size": COUNT,
    "lr": POSITIVE,
    "noise": number(0, 1, hi_open=True),
    "target_pass1": optional(number(0, 1, lo_open=True)),
    "probe_every": COUNT,
    "probe_mazes": COUNT,
    "probe_samples": COUNT,
    "seed": SEED,
    "cache_dir": optional(TEXT),
}


@dataclass
class EvalSetConfig:
    name: str = MISSING
    size_delta: int = 0  # cells added to the training maze size (OOD: larger mazes)
    generator: str | None = None  # null: the training generator
    start_goal: str | None = None
    num_mazes: int = 64  # generated sets; a layout set is its whole collection
    layout: str | None = None  # a layout collection (name, file, directory or glob) to use


EVAL_SET_RULES = {
    "name": TEXT,
    "size_delta": NATURAL,
    "generator": optional(registered(GENERATORS)),
    "start_goal": optional(registered(PLACEMENTS)),
    "num_mazes": COUNT,
    "layout": optional(TEXT),
}


@dataclass
class EvalConfig:
    sets: list[EvalSetConfig] = field(
        default_factory=lambda: [
            EvalSetConfig("id"),
            EvalSetConfig("ood_large", size_delta=2),
            EvalSetConfig("ood_dfs", generator="dfs"),
        ]
    )
    n: int = 256  # samples per maze at the final evaluation
    n_during: int = 32  # samples per maze at intermediate evaluations (exact metrics always)
    ks: list[int] = field(default_factory=list)  # empty: 1, 2, 4, ..., n
    exact_ks: list[int] = field(default_factory=lambda: [1, 8, 64, 128, 256, 1024, 2048])
    sampled_mazes: int | None = None  # sampled pass@k on the first this many mazes of a set
    temperature: float = 1.0
    seed: int = 1234  # evaluation mazes are fixed by this seed, the same for every run
    batch_rollouts: int = 16384  # rollouts generated at once
    images: int = 4  # evaluation mazes per set drawn with sampled paths into TensorBoard
    images_every: int | None = None  # steps between pictures (null: every evaluation)


def section(schema: type | Callable[[Any], type]) -> Rule:
    """A config section, then checked with the rules of `schema` (a dataclass, or a function
    of the section giving one)."""
    pick = (lambda _: schema) if isinstance(schema, type) else schema
    return Rule(lambda v: isinstance(v, dict | DictConfig), "a mapping", pick)


def sections(schema: type, *, min_len: int = 0) -> Rule:
    """A list of config sections, each then checked with the rules of `schema`."""
    return Rule(
        lambda v: isinstance(v, list | ListConfig) and len(v) >= min_len,
        f"a {'non-empty ' if min_len else ''}list of sections",
        lambda _: schema,
    )


EVAL_RULES = {
    "sets": sections(EvalSetConfig, min_len=1),
    "n": COUNT,
    "n_during": COUNT,
    "ks": each(COUNT),
    "exact_ks": each(COUNT, min_len=1),
    "temperature": POSITIVE,
    "seed": SEED,
    "batch_rollouts": COUNT,
    "images": NATURAL,
    "images_every": optional(COUNT),
    "sampled_mazes": optional(COUNT),
}


@dataclass
class LoggerConfig:
    flush_secs: int = 30  # TensorBoard writes its events at least this often
    progress: str = "auto"  # auto (tqdm on a terminal, log lines otherwise) | bar | lines | off


LOGGER_RULES = {"flush_secs": COUNT, "progress": one_of("auto", "bar", "lines", "off")}


@dataclass
class Config:
    maze: MazeConfig = field(default_factory=MazeConfig)
    policy: Any = MISSING
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    focal: FocalConfig = field(default_factory=FocalConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    base: BaseConfig = field(default_factory=BaseConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    threads: int = 0  # torch threads; 0: from the launcher (see runtime.job_threads)
    checkpoint: str | None = None  # mazerl-eval: the checkpoint to evaluate


def _device_ok(v) -> bool:
    if not isinstance(v, str):
        return False
    kind, _, index = v.partition(":")
    return v in ("auto", "cpu", "cuda") or (kind == "cuda" and index.isdigit())


def _policy_schema(node) -> type:
    """The config class of the section's policy (the shared fields' if its name is unknown)."""
    return POLICIES.get(node.name).config_class if node.name in POLICIES else PolicyConfig


CONFIG_RULES = {
    "maze": section(MazeConfig),
    "policy": section(_policy_schema),
    "algo": section(AlgoConfig),
    "focal": section(FocalConfig),
    "train": section(TrainConfig),
    "base": section(BaseConfig),
    "eval": section(EvalConfig),
    "logger": section(LoggerConfig),
    "seed": SEED,
    "device": Rule(_device_ok, "auto, cpu, cuda or cuda:N"),
    "threads": NATURAL,
    "checkpoint": optional(TEXT),
}

ALGO_RULES = {
    "name": TEXT,
    "advantage": registered(ADVANTAGES),
    "advantage_kwargs": MAPPING,  # checked by check_algo: the estimator's parameters, values
    "reward_transform": optional(registered(REWARD_TRANSFORMS)),
    "reward_transform_kwargs": MAPPING,  # checked by check_algo, as advantage_kwargs
    "loss": registered(POLICY_LOSSES),
    "clip_low": POSITIVE,
    "clip_high": POSITIVE,
    "kl_beta": NON_NEGATIVE,
    "entropy_coef": NON_NEGATIVE,
    "loss_agg_mode": registered(AGGREGATIONS),
    "dynamic_sampling": FLAG,
    "dynamic_sampling_max_rounds": NATURAL,
    "loss_kwargs": MAPPING,  # checked by check_algo, as advantage_kwargs
}

FOCAL_RULES = {"gamma": NON_NEGATIVE, "correct_reward": optional(number())}

POLICY_RULES = {"name": registered(POLICIES), "sees_position": FLAG}
GRU_RULES = {**POLICY_RULES, "hidden": COUNT, "encoder_layers": COUNT}
TRANSFORMER_RULES = {
    **POLICY_RULES,
    "layers": COUNT,
    "hidden": number(2, integer=True),
    "heads": COUNT,
    "kv_heads": COUNT,
    "ffn": COUNT,
    "rope_theta": POSITIVE,
    "pos2d": FLAG,
}

# every schema dataclass -> its rules; a new schema registers its table here (or, as the
# categorical app does, adds it from its own module)
RULES: dict[type, dict[str, Rule]] = {
    Config: CONFIG_RULES,
    MazeConfig: MAZE_RULES,
    TrainConfig: TRAIN_RULES,
    BaseConfig: BASE_RULES,
    EvalConfig: EVAL_RULES,
    EvalSetConfig: EVAL_SET_RULES,
    LoggerConfig: LOGGER_RULES,
    AlgoConfig: ALGO_RULES,
    FocalConfig: FOCAL_RULES,
    PolicyConfig: POLICY_RULES,
    GruConfig: GRU_RULES,
    TransformerConfig: TRANSFORMER_RULES,
}


def register_configs() -> None:
    """Register the schemas under `schema/` (so no schema shows among a group's options) and
    the resolvers the configs use."""
    register_resolvers()
    if not OmegaConf.has_resolver("mazerl_about"):
        OmegaConf.register_new_resolver("mazerl_about", about)
    cs = ConfigStore.instance()
    schemas = {
        "config": Config,
        "policy/gru": GruConfig,
        "policy/transformer": TransformerConfig,
        "algo": AlgoConfig,
        "focal": FocalConfig,
        "train": TrainConfig,
        "eval": EvalConfig,
        "logger": LoggerConfig,
        "maze": MazeConfig,
    }
    for path, node in schemas.items():
        group, _, name = f"schema/{path}".rpartition("/")
        cs.store(group=group, name=name, node=node)


def about(app: str) -> str:
    """The help page's header: the docstring of the app module `mazerl.apps.<app>`."""
    return (importlib.import_module(f"mazerl.apps.{app}").__doc__ or "").strip() + "\n"


# ---- walking a config with the rules


def need(ok: bool, key: str, allowed: str, value: Any) -> None:
    """A constraint between fields: `key must be <allowed>, got <value>` unless `ok`."""
    if not ok:
        Rule(lambda _: False, allowed).check(key, value)


def check_section(schema: type, node, prefix: str = "") -> None:
    """Check every field of the section `node` (keys start with `prefix`) with `RULES[schema]`,
    then the sections below it, then `CONSTRAINTS[schema]` (between fields)."""
    rules = RULES[schema]
    for f in fields(schema):
        key, value, rule = f"{prefix}{f.name}", node[f.name], rules[f.name]
        rule.check(key, value)
        if rule.section is None:
            continue
        if isinstance(value, ListConfig | list):
            for i, item in enumerate(value):
                check_section(rule.section(item), item, f"{key}.{i}.")
        else:
            check_section(rule.section(value), value, f"{key}.")
    for constraint in CONSTRAINTS.get(schema, ()):
        constraint(node, prefix)


def _train_between(t, prefix: str) -> None:
    need(
        t.num_prompts % t.minibatches == 0,
        f"{prefix}minibatches",
        f"a divisor of {prefix}num_prompts={t.num_prompts}",
        t.minibatches,
    )


def _eval_between(e, prefix: str) -> None:
    need(max(e.ks, default=1) <= e.n, f"{prefix}ks", f"in [1, {prefix}n={e.n}]", list(e.ks))
    names = [s.name for s in e.sets]
    need(len(set(names)) == len(names), f"{prefix}sets", "sets with distinct names", names)


def _transformer_between(p, prefix: str) -> None:
    need(
        p.hidden % p.heads == 0 and (p.hidden // p.heads) % 2 == 0,
        f"{prefix}hidden",
        f"a multiple of 2 x {prefix}heads={p.heads} (an even head size, for RoPE)",
        p.hidden,
    )
    need(
        p.heads % p.kv_heads == 0,
        f"{prefix}kv_heads",
        f"a divisor of {prefix}heads={p.heads}",
        p.kv_heads,
    )


def _config_between(cfg, prefix: str) -> None:
    """The method on groups of `train.group_size` (`check_algo`), the maze distributions
    themselves (layout files load here: file:line:col errors) and CUDA's presence."""
    check_algo(AlgoConfig(**cfg.algo), cfg.train.group_size)
    try:
        _ = maze_spec(cfg.maze).grid_shape  # a layout file is read and checked here
    except ConfigError as e:
        raise ConfigError(f"maze: {e}") from None
    for i, s in enumerate(cfg.eval.sets):
        try:
            spec = eval_set_spec(cfg.maze, s)  # None: skipped in this layout run
            _ = spec and spec.grid_shape
        except UserError as e:  # a bad size, or a layout file (file:line:col)
            raise ConfigError(f"eval.sets.{i} ({s.name}): {e}") from None
    if str(cfg.device).startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"device={cfg.device} requested but CUDA is not available here")


# constraints between the fields of one section, run after each field's own rule
CONSTRAINTS: dict[type, list[Callable[[Any, str], None]]] = {
    TrainConfig: [_train_between],
    EvalConfig: [_eval_between],
    TransformerConfig: [_transformer_between],
    Config: [_config_between],
}


def validate(cfg: DictConfig) -> None:
    """Check every value a user can get wrong, before any work starts: each field with its
    rule (`RULES`), then the constraints between fields (`CONSTRAINTS`)."""
    check_section(Config, cfg)
