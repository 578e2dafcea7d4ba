"""Structured config schemas (registered in Hydra's ConfigStore) and their validation.

The YAML files under `conf/` hold values; these dataclasses hold the schema, so a misspelt
key or a wrong type fails at start-up naming the key. Beside each dataclass, its `RULES` table
holds every field's valid values (a test checks that no field lacks one); `validate` walks the
config with these tables, refusing any key the schema lacks (`+key=value`, a stray YAML key),
then checks the few constraints between fields, before any work starts, and raises
`ConfigError` naming the key, the value and what is allowed. What each field means is one
line in `mazerl.apps.keys.DESCRIPTIONS` (a test checks that every field has one).
`composition_error` words Hydra's own errors (at composition) the same way.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.errors import MissingConfigException, OverrideParseException
from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, ValidationError

from mazerl.algos import ADVANTAGES, AGGREGATIONS, POLICY_LOSSES, REWARD_TRANSFORMS, check_algo
from mazerl.algos.objective import AlgoConfig, FocalConfig
from mazerl.categorical.sim import OPTIMIZERS, SimConfig
from mazerl.core.config import register_resolvers
from mazerl.core.errors import ConfigError, UserError, nearest
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
    allow_revisits: bool = False
    routes: int = 1
    route_lengths: str = "equal"
    pool_size: int = 0


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
    num_prompts: int = 32
    group_size: int = 8
    lr: float = 1e-4
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    warmup: int = 0
    schedule: str = "constant"
    ppo_epochs: int = 1
    minibatches: int = 1
    grad_clip: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    budget: str = "steps"
    budget_reference_group_size: int = 8
    eval_every: int = 50
    checkpoint_every: int = 50
    keep_checkpoints: int = 2
    resume: bool = True
    max_bad_steps: int = 5
    skip_zero_advantage: bool = True
    stop_on_zero_advantage: bool = False
    log_every: int = 10


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
    "stop_on_zero_advantage": FLAG,
}


@dataclass
class BaseConfig:
    """The base policy: supervised training on solver demonstrations (SFT), cached."""

    path: str | None = None
    steps: int = 1500
    batch_size: int = 32
    lr: float = 5e-4
    noise: float = 0.0
    target_pass1: float | None = 0.3
    probe_every: int = 50
    probe_mazes: int = 64
    probe_samples: int = 8
    seed: int = 0
    cache_dir: str | None = None


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
    size_delta: int = 0
    generator: str | None = None
    start_goal: str | None = None
    num_mazes: int = 64
    layout: str | None = None


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
    n: int = 256
    n_during: int = 32
    ks: list[int] = field(default_factory=list)
    exact_ks: list[int] = field(default_factory=lambda: [1, 8, 64, 128, 256, 1024, 2048])
    sampled_mazes: int | None = None
    temperature: float = 1.0
    seed: int = 1234
    batch_rollouts: int = 16384
    images: int = 4
    images_every: int | None = None


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
    flush_secs: int = 30
    progress: str = "auto"


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
    device: str = "auto"
    threads: int = 1


@dataclass
class EvaluateConfig:
    """`mazerl-eval`'s settings: the checkpoint and how to evaluate it (its maze and policy
    configs come from the checkpoint)."""

    checkpoint: str | None = None
    eval: EvalConfig = field(default_factory=EvalConfig)
    seed: int = 0
    device: str = "auto"
    threads: int = 1


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
}
EVALUATE_RULES = {
    "checkpoint": optional(TEXT),
    "eval": section(EvalConfig),
    "seed": SEED,
    "device": CONFIG_RULES["device"],
    "threads": NATURAL,
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


@dataclass
class CategoricalConfig:
    sim: SimConfig = field(default_factory=SimConfig)
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    focal: FocalConfig = field(default_factory=FocalConfig)
    compare_base: bool = True
    threads: int = 1


SIM_RULES = {
    "num_actions": number(2, integer=True),
    "num_correct": COUNT,
    "num_rare": NATURAL,
    "anchor_logit": number(),
    "correct_logit": number(),
    "rare_logit": number(),
    "incorrect_logit": number(),
    "reward_correct": number(),
    "reward_wrong": number(),
    "group_size": number(2, integer=True),
    "steps": COUNT,
    "lr": POSITIVE,
    "optimizer": one_of(*OPTIMIZERS),
    "replicas": COUNT,
    "forget_fraction": number(0, 1),
    "log_every": COUNT,
    "seed": SEED,
}
CATEGORICAL_RULES = {
    "sim": section(SimConfig),
    "algo": section(AlgoConfig),
    "focal": section(FocalConfig),
    "compare_base": FLAG,
    "threads": NATURAL,
}


def _sim_between(s, prefix: str) -> None:
    need(
        s.num_correct < s.num_actions,
        f"{prefix}num_correct",
        f"< {prefix}num_actions={s.num_actions}",
        s.num_correct,
    )
    need(
        s.num_rare < s.num_correct,
        f"{prefix}num_rare",
        f"< {prefix}num_correct={s.num_correct}",
        s.num_rare,
    )
    need(
        s.reward_correct > s.reward_wrong,
        f"{prefix}reward_correct",
        f"> {prefix}reward_wrong={s.reward_wrong}",
        s.reward_correct,
    )


# every schema dataclass -> its rules; a new schema registers its table here
RULES: dict[type, dict[str, Rule]] = {
    Config: CONFIG_RULES,
    EvaluateConfig: EVALUATE_RULES,
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
    SimConfig: SIM_RULES,
    CategoricalConfig: CATEGORICAL_RULES,
}


def register_configs() -> None:
    """Register the schemas under `schema/` (so no schema shows among a group's options) and
    the resolvers the configs use."""
    register_resolvers()
    cs = ConfigStore.instance()
    schemas = {
        "config": Config,
        "evaluate": EvaluateConfig,
        "policy/gru": GruConfig,
        "policy/transformer": TransformerConfig,
        "algo": AlgoConfig,
        "focal": FocalConfig,
        "train": TrainConfig,
        "eval": EvalConfig,
        "logger": LoggerConfig,
        "maze": MazeConfig,
        "categorical": CategoricalConfig,
    }
    for path, node in schemas.items():
        group, _, name = f"schema/{path}".rpartition("/")
        cs.store(group=group, name=name, node=node)


# ---- walking a config with the rules


def need(ok: bool, key: str, allowed: str, value: Any) -> None:
    """A constraint between fields: `key must be <allowed>, got <value>` unless `ok`."""
    if not ok:
        Rule(lambda _: False, allowed).check(key, value)


def check_section(schema: type, node, prefix: str = "") -> None:
    """Check every field of the section `node` (keys start with `prefix`) with `RULES[schema]`,
    and the sections below it; then refuse a key `schema` lacks; then `CONSTRAINTS[schema]`
    (between fields)."""
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
    names = {f.name for f in fields(schema)}
    for name in node:
        if name not in names:  # added with +key or ++key, or a YAML key nothing reads
            raise unknown_key(f"{prefix}{name}", prefix, node)
    for constraint in CONSTRAINTS.get(schema, ()):
        constraint(node, prefix)


def unknown_key(key: str, prefix: str, node) -> ConfigError:
    """The error for `key`, which the section `node` (its keys start with `prefix`) does not
    have: it names the nearest settings of that section."""
    below = OmegaConf.to_container(node, resolve=False) if OmegaConf.is_config(node) else node
    keys = [k for k in _dotted(below, prefix) if k != key and not k.startswith("hydra.")]
    close = nearest(key, keys)
    if close:
        return ConfigError(f"unknown key {key}; did you mean {' or '.join(close)}?")
    here = sorted(k for k in below if k != key.removeprefix(prefix) and k != "hydra")
    return ConfigError(f"unknown key {key}; the keys here: {', '.join(here)}")


def _dotted(tree: dict, prefix: str) -> list[str]:
    """The dotted keys of the leaves of a nested dict (a list is one leaf)."""
    keys = []
    for k, v in tree.items():
        keys += _dotted(v, f"{prefix}{k}.") if isinstance(v, dict) and v else [f"{prefix}{k}"]
    return keys


# OmegaConf's names of the types it could not convert a command-line value to
TYPE_WORDS = {"Integer": "an integer", "Float": "a number", "Boolean": "true or false"}


def composition_error(e: Exception) -> str:
    """Hydra's error for a command line it cannot compose (an unknown key or option, a value
    of the wrong type, a sweep without -m, a syntax error) as one line naming the key and the
    nearest valid keys or options, or what the setting accepts."""
    cause = e.__cause__
    first = str(e).splitlines()[0]
    if isinstance(e, MissingConfigException) and e.missing_cfg_file and e.options:
        group, _, option = e.missing_cfg_file.rpartition("/")
        close = nearest(option, list(e.options))
        hint = f"; did you mean {' or '.join(f'{group}={c}' for c in close)}?" if close else ""
        return f"unknown option {group}={option}{hint} (options: {', '.join(e.options)})"
    if isinstance(e, OverrideParseException):
        return f"cannot parse {e.override!r}: {e.message.splitlines()[0]}"
    if first.startswith("Could not append to config. An item is already at '"):
        key = first.split("'")[1]
        return f"{key} is already a setting: override it as {key}=VALUE, without +"
    if first.startswith("Ambiguous value for argument"):
        override = first.split("'", 1)[1].rsplit("'", 1)[0]
        return (
            f"{override} gives several values: add -m to sweep over them, or write a list as "
            "key=[a,b] or a string as key='a,b'"
        )
    if isinstance(cause, ConfigAttributeError | ConfigKeyError) and cause.parent_node is not None:
        overridden = first.split("'")[1] if first.startswith("Could not override '") else ""
        key = re.sub(r"\[(\d+)\]", r".\1", cause.full_key)
        prefix = key.rpartition(".")[0] + "." if "." in key else ""  # of the node
        if overridden.startswith(f"{key}."):  # a section this app does not have
            key = overridden
        elif overridden and not key.startswith(overridden):  # a key in a list of sections
            key, prefix = f"{overridden}[].{key}", f"{overridden}[]."
        return str(unknown_key(key, prefix, cause.parent_node))
    if isinstance(cause, ValidationError) and cause.full_key:
        key = re.sub(r"\[(\d+)\]", r".\1", cause.full_key)
        value = first.split("=", 1)[1] if first.startswith("Error merging override") else "?"
        rule = RULES.get(cause.object_type, {}).get(cause.key)
        found = re.search(r"converted to (\w+)", str(cause))
        kind = TYPE_WORDS.get(found.group(1), "") if found else ""
        if rule is not None:
            words = rule.allowed if isinstance(rule.allowed, str) else rule.allowed()
            if kind and not words.startswith(("a ", "an ", "true")):
                words = f"{kind} {words}"
            return f"{key} must be {words}, got {value}"
        return f"{key}: {str(cause).splitlines()[0]}"
    detail = f": {str(cause).splitlines()[0]}" if cause is not None else ""
    return first + detail


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
    """The method on groups of `train.group_size` (`check_algo`), the base checkpoint's
    presence, the maze distributions themselves (layout files load here: file:line:col
    errors) and CUDA's presence."""
    check_algo(AlgoConfig(**cfg.algo), cfg.train.group_size)
    path = cfg.base.path
    need(path is None or Path(path).expanduser().is_file(), "base.path", "an existing file", path)
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


def _categorical_between(c, prefix: str) -> None:
    """The method on groups of `sim.group_size` (`check_algo`)."""
    check_algo(AlgoConfig(**c.algo), c.sim.group_size)


# constraints between the fields of one section, run after each field's own rule
CONSTRAINTS: dict[type, list[Callable[[Any, str], None]]] = {
    TrainConfig: [_train_between],
    EvalConfig: [_eval_between],
    TransformerConfig: [_transformer_between],
    SimConfig: [_sim_between],
    CategoricalConfig: [_categorical_between],
    Config: [_config_between],
}


def validate(cfg: DictConfig, schema: type = Config) -> None:
    """Check every value a user can get wrong, before any work starts: each field with its
    rule (`RULES`), then the constraints between fields (`CONSTRAINTS`)."""
    check_section(schema, cfg)
