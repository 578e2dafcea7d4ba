"""The top-level config schemas (`Config` of `mazerl-train`, `EvaluateConfig` of
`mazerl-eval`), their registration in Hydra's ConfigStore, and validation.

The YAML files under `conf/` hold values; the config classes hold the schema, each beside the
part it configures (`MazeConfig` in `mazerl.envs.spec`, `TrainConfig` and the whole run's
`Config` in `mazerl.train.config`, a policy's config in its module, ...). Every field carries
its rule and its one-line description (`mazerl.core.settings.setting`; a test checks that
none lacks either), and a class's constraints between its fields are its `check_between`
classmethod. `validate` walks a config with these rules, refusing any key the schema lacks
(`+key=value`, a stray YAML key), then checks the constraints between fields, before any
work starts, and raises `ConfigError` naming the key, the value and what is allowed.
`composition_error` words Hydra's own errors (at composition) the same way. `typed` makes
the validated config its schema's dataclasses, once, at the app's boundary: the sections
travel typed from there.
"""

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import (
    ConfigAttributeError,
    ConfigKeyError,
    OmegaConfBaseException,
    ValidationError,
)

from mazerl.algos import AlgoConfig, FocalConfig, estimator_method, estimator_methods
from mazerl.categorical.config import CategoricalConfig
from mazerl.core.config import CONF_DIR, load_option, register_resolvers
from mazerl.core.device import device_setting, seed_setting, threads_setting
from mazerl.core.errors import ConfigError, nearest
from mazerl.core.plugins import load_plugins
from mazerl.core.settings import TEXT, optional, part, rule_of, rules, setting
from mazerl.envs.spec import MazeConfig
from mazerl.eval.config import EvalConfig
from mazerl.policy.config import POLICIES, defined_policies, policy_config
from mazerl.train.config import Config, LoggerConfig, TrainConfig


@dataclass
class EvaluateConfig:
    """`mazerl-eval`'s settings: the checkpoint and how to evaluate it (its maze and policy
    configs come from the checkpoint)."""

    checkpoint: str | None = setting(
        None,
        optional(TEXT),
        "the checkpoint to evaluate (a training checkpoint or a base model's base.pt)",
    )
    eval: EvalConfig = part(EvalConfig, "the evaluation (conf/eval)")
    seed: int = seed_setting()
    device: str = device_setting()
    threads: int = threads_setting()


# the primary config (`conf/NAME.yaml`) of each Hydra app -> its schema
APP_SCHEMAS = {"config": Config, "evaluate": EvaluateConfig, "categorical": CategoricalConfig}


def register_configs(picked: list[str] | None = None) -> None:
    """Load the plug-ins (`mazerl.core.plugins`), then register the schemas under `schema/`
    (so no schema shows among a group's options): the apps', each section's and each
    policy's (`schema/policy/NAME`, from its config class). A policy without a
    `conf/policy/NAME.yaml` is also registered as the option `policy=NAME` with its config
    class's defaults, and an advantage estimator without a `conf/algo/NAME.yaml` as the option
    `algo=NAME` (`estimator_method`). Also the resolvers the configs use.

    No torch: a policy whose config class sits beside its model (in a module that imports
    torch) is registered only if `picked` (the policies a command line picks, `picked_policies`)
    names it, or `picked` is None (every policy)."""
    from hydra.core.config_store import ConfigStore

    load_plugins()
    register_resolvers()
    cs = ConfigStore.instance()
    schemas = {
        **APP_SCHEMAS,
        "algo": AlgoConfig,
        "focal": FocalConfig,
        "train": TrainConfig,
        "eval": EvalConfig,
        "logger": LoggerConfig,
        "maze": MazeConfig,
    }
    for name in POLICIES.known():
        if name not in defined_policies() and picked is not None and name not in picked:
            continue
        schemas[f"policy/{name}"] = policy_option(name)
        if not (CONF_DIR / "policy" / f"{name}.yaml").is_file():
            cs.store(group="policy", name=name, node=policy_option(name))
    for name in estimator_methods():
        cs.store(group="algo", name=name, node=estimator_method(name))
    for path, node in schemas.items():
        group, _, name = f"schema/{path}".rpartition("/")
        cs.store(group=group, name=name, node=node)


def policy_option(name: str):
    """The option `policy=NAME` of a policy without a YAML: its config class's defaults, with
    `name` set to it (a copied policy may share another's config class)."""
    return policy_config(name)(name=name)


def picked_policies(argv: list[str]) -> list[str]:
    """The policies a command line picks (`policy=a` or `policy=a,b`), each by its registered
    name (a `conf/policy/NAME.yaml` gives its `name`)."""
    found = []
    for arg in argv:
        key, _, value = arg.lstrip("+~").partition("=")
        if key != "policy":
            continue
        for option in value.split(","):
            path = CONF_DIR / "policy" / f"{option}.yaml"
            found.append(
                load_option("policy", option).get("name", option) if path.is_file() else option
            )
    return found


# ---- walking a config with the rules


def check_section(schema: type, node, prefix: str = "") -> None:
    """Check every field of the section `node` (keys start with `prefix`) with its rule (the
    field's metadata), and the sections below it; then refuse a key `schema` lacks; then
    `schema.check_between` (the constraints between fields), if it has one."""
    for name, rule in rules(schema).items():
        key, value = f"{prefix}{name}", node[name]
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
    if hasattr(schema, "check_between"):
        schema.check_between(node, prefix)


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


# the groups whose parts are options without a YAML file: (their names, an option's config)
PART_OPTIONS = {
    "policy": (POLICIES.known, policy_option),
    "algo": (estimator_methods, estimator_method),
}

# OmegaConf's names of the types it could not convert a command-line value to
TYPE_WORDS = {"Integer": "an integer", "Float": "a number", "Boolean": "true or false"}


def composition_error(e: Exception) -> str:
    """Hydra's error for a command line it cannot compose (an unknown key or option, a value
    of the wrong type, a sweep without -m, a syntax error) or for a config file it cannot
    merge (a preset, a group option or a config file of your own with a bad key or value) as
    one line naming the key (and the file) and the nearest valid keys or options, or what the
    setting accepts. It reads what the exceptions carry: `MissingConfigException`'s options,
    `OverrideParseException`'s override, the OmegaConf error Hydra raised from (its key,
    value, node and config class) and the file being merged (`failed_file`)."""
    from hydra.errors import MissingConfigException, OverrideParseException

    cause = e.__cause__ or e.__context__
    first = str(e).splitlines()[0]
    if isinstance(e, MissingConfigException) and e.missing_cfg_file and e.options:
        group, _, option = e.missing_cfg_file.rpartition("/")
        names, _ = PART_OPTIONS.get(group, (list, None))
        options = sorted({*e.options, *names()})  # the YAML files and the parts without one
        close = nearest(option, options)
        hint = f"; did you mean {' or '.join(f'{group}={c}' for c in close)}?" if close else ""
        return f"unknown option {group}={option}{hint} (options: {', '.join(options)})"
    if isinstance(e, OverrideParseException):
        return f"cannot parse {e.override!r}: {e.message.splitlines()[0]}"
    source = failed_file(e)
    if source is not None and isinstance(cause, OmegaConfBaseException) and cause.key is not None:
        path, content = source
        key = _key_in(content, cause.full_key) or cause.full_key
        if isinstance(cause, ValidationError):
            return f"{path}: {_value_error(cause, key, cause.value)}"
        prefix = key.rpartition(".")[0] + "." if "." in key else ""  # of the node
        return f"{path}: {unknown_key(key, prefix, cause.parent_node)}"
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
        return _value_error(cause, key, value)
    detail = f": {str(cause).splitlines()[0]}" if cause is not None else ""
    return first + detail


def _value_error(cause: ValidationError, key: str, value) -> str:
    """`key must be <its rule's words>, got value`, for a value OmegaConf could not convert
    to the field's type (`cause`)."""
    rule = rule_of(cause.object_type, cause.key)
    found = re.search(r"converted to (\w+)", str(cause))
    kind = TYPE_WORDS.get(found.group(1), "") if found else ""
    if rule is None:
        return f"{key}: {str(cause).splitlines()[0]}"
    words = rule.words()
    if kind and not words.startswith(("a ", "an ", "true")):
        words = f"{kind} {words}"
    return f"{key} must be {words}, got {value}"


def failed_file(e: Exception) -> tuple[Path, Any] | None:
    """The config file whose merge raised `e` (Hydra's `ConfigCompositionException`, raised
    from the OmegaConf error) and its content as loaded (placed at its package, from the
    root); None for an error not raised merging a file.
    Hydra's exception carries the file only in its traceback, in the frame of
    `ConfigLoaderImpl._compose_config_from_defaults_list` (`default`, `loaded`): a test pins
    this to the installed Hydra."""
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "_compose_config_from_defaults_list":
            default, loaded = frame.f_locals.get("default"), frame.f_locals.get("loaded")
            if loaded is None or not str(loaded.path).startswith("file://"):
                return None
            folder = Path(loaded.path.removeprefix("file://"))
            return folder / f"{default.config_path}.yaml", loaded.config
        tb = tb.tb_next
    return None


def _key_in(content, key: str) -> str | None:
    """The dotted key (list items as .i.) of the file's setting OmegaConf names `key`: its
    full key, or the key within a list item's section."""
    tree = OmegaConf.to_container(content, resolve=False) if OmegaConf.is_config(content) else {}
    for found in _paths(tree, ""):
        if found == key or found.endswith(f".{key}"):
            return found
    return None


def _paths(tree, prefix: str) -> list[str]:
    """Every dotted key of a nested dict or list, sections before their keys."""
    items = enumerate(tree) if isinstance(tree, list) else tree.items()
    found = []
    for k, v in items:
        found.append(f"{prefix}{k}")
        if isinstance(v, dict | list):
            found += _paths(v, f"{prefix}{k}.")
    return found


def typed(cfg: DictConfig):
    """The composed, validated config as its schema's dataclasses (`OmegaConf.to_object`:
    interpolations resolved, each section its config class: `Config.maze` a `MazeConfig`,
    `Config.policy` its policy's config class, `Config.eval.sets` `EvalSetConfig`s). An app
    calls it once, after `validate`; the loop, the step and the evaluation take the typed
    sections."""
    return OmegaConf.to_object(cfg)


def validate(cfg: DictConfig, schema: type = Config) -> None:
    """Check every value a user can get wrong, before any work starts: each field with its
    rule, then the constraints between fields (`check_between`). Each run's config passes
    here once (`mazerl.apps.callbacks.CheckSettings`)."""
    check_section(schema, cfg)
