"""Settings: each config field carries its rule (the values it accepts) and its one-line
description, beside the part it configures.

    size: int = setting(5, CELLS, "cells per side of the training mazes")

`setting` builds a `dataclasses.field` whose metadata holds a `Rule` (`"rule"`) and the
description (`"help"`), so a config class (a dataclass registered in Hydra's ConfigStore)
owns every fact about its fields; a constraint between fields is the class's
`check_between(node, prefix)` classmethod.
`mazerl.apps.schema.validate` walks a config with these rules and `--help` prints the
descriptions. A bad value is a `ConfigError` naming the key, the value and what is allowed.
"""

import copy
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig, ListConfig

from mazerl.core.errors import ConfigError
from mazerl.core.registry import Registry

# ---- rules: what values one setting accepts


@dataclass(frozen=True)
class Rule:
    """The values one setting accepts: `ok(value)`, and `allowed` (words, or a function giving
    them when they can change, as a registry's names do) for the message. `section`: a
    section's schema (a dataclass) from its node, for a setting that is a section or a list of
    them."""

    ok: Callable[[Any], bool]
    allowed: str | Callable[[], str]
    section: Callable[[Any], type] | None = None

    def words(self) -> str:
        return self.allowed if isinstance(self.allowed, str) else self.allowed()

    def check(self, key: str, value: Any) -> None:
        if not self.ok(value):
            shown = list(value) if isinstance(value, ListConfig) else value
            raise ConfigError(f"{key} must be {self.words()}, got {shown!r}")


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
    return Rule(lambda v: v is None or rule.ok(v), lambda: f"{rule.words()} or null")


def one_of(*names: str) -> Rule:
    return Rule(lambda v: v in names, " or ".join(repr(n) for n in names))


def registered(registry: Registry | Callable[[], Registry]) -> Rule:
    """A name registered in `registry`, or in the registry a function returns when a value is
    checked; its names read when checked (plug-ins register late) with `Registry.known`,
    which imports no part module (no torch)."""
    get = registry if callable(registry) else lambda: registry
    return Rule(
        lambda v: isinstance(v, str) and v in get().known(),
        lambda: f"a registered {get().kind} ({', '.join(get().known())})",
    )


def each(rule: Rule, *, min_len: int = 0) -> Rule:
    """A list whose every element satisfies `rule` (at least `min_len` of them)."""
    return Rule(
        lambda v: (
            isinstance(v, list | tuple | ListConfig)
            and len(v) >= min_len
            and all(rule.ok(x) for x in v)
        ),
        lambda: f"a {'non-empty ' if min_len else ''}list of values {rule.words()}",
    )


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


FLAG = Rule(lambda v: isinstance(v, bool), "true or false")
TEXT = Rule(lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string")
MAPPING = Rule(lambda v: isinstance(v, dict | DictConfig), "a mapping")
POSITIVE = number(0, lo_open=True)
NON_NEGATIVE = number(0)
COUNT = number(1, integer=True)  # 1, 2, 3, ...
NATURAL = number(0, integer=True)  # 0, 1, 2, ...
SEED = number(0, 2**32 - 1, integer=True)


def need(ok: bool, key: str, allowed: str, value: Any) -> None:
    """A constraint between fields: `key must be <allowed>, got <value>` unless `ok`."""
    if not ok:
        Rule(lambda _: False, allowed).check(key, value)


# ---- fields that carry their rule and description


def setting(default: Any, rule: Rule, help: str) -> Any:
    """A config field with its `default` (a list, dict or dataclass default is copied for
    each instance; `MISSING`: none), the `rule` its values obey and its one-line `help`."""
    meta = {"rule": rule, "help": help}
    if isinstance(default, list | dict) or dataclasses.is_dataclass(default):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def part(schema: type, help: str) -> Any:
    """A config field holding the section `schema` (its defaults; checked with its rules)."""
    return dataclasses.field(
        default_factory=schema, metadata={"rule": section(schema), "help": help}
    )


def settings_of(*schemas: type) -> type:
    """A (mutable) dataclass with the setting fields (those with a rule) of the dataclasses
    `schemas`, in order: their types, defaults, rules and descriptions. A config section that
    holds the fields of frozen descriptions derives from it (`class MazeConfig(
    settings_of(MazeSpec, MazeTask))`), so each field is written once."""
    own = [
        (f.name, f.type, dataclasses.field(default=f.default, metadata=f.metadata))
        for schema in schemas
        for f in dataclasses.fields(schema)
        if "rule" in f.metadata
    ]
    return dataclasses.make_dataclass(f"{schemas[0].__name__}Settings", own)


def rule_of(schema: type, name: str) -> Rule | None:
    """The rule of the field `name` of the config class `schema` (None: no such field)."""
    if not dataclasses.is_dataclass(schema):
        return None
    found = {f.name: f for f in dataclasses.fields(schema)}
    return found[name].metadata.get("rule") if name in found else None


def rules(schema: type) -> dict[str, Rule]:
    """Field name -> rule of the config class `schema`; a field without one is a `TypeError`
    (every setting states what it accepts)."""
    missing = [f.name for f in dataclasses.fields(schema) if "rule" not in f.metadata]
    if missing:
        raise TypeError(f"{schema.__name__}: fields without a rule: {', '.join(missing)}")
    return {f.name: f.metadata["rule"] for f in dataclasses.fields(schema)}
