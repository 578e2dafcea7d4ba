"""`--help` of the Hydra apps: the defaults read from the YAML files without composing the
config, each key's description read from its config field (`mazerl.core.settings.setting`).

The page: what the app does (its module docstring), the config groups it picks from, then
every key the app reads with its default and its one-line description. A `group=option` on
the command line shows that option's keys (`mazerl-train --help policy=transformer`); a preset
(`experiment=...`) is not applied here: `--cfg job` shows the config it composes.
"""

from dataclasses import MISSING, fields

from omegaconf import DictConfig, ListConfig, OmegaConf

from mazerl.apps.schema import APP_SCHEMAS, PART_OPTIONS
from mazerl.core.config import CONF_DIR, groups, load_option
from mazerl.core.errors import ConfigError
from mazerl.core.plugins import load_plugins
from mazerl.core.settings import Rule

FOOTER = (
    "Sweeps: add -m and comma-separated values (see docs/guide/sweeps.md). The config composed "
    "with your overrides: add --cfg job. Hydra's own flags: --hydra-help"
)


def defaults(config_name: str, argv: list[str]) -> dict:
    """The values the app starts from: each group's default option (or the option picked by a
    `group=option` in `argv`; an unknown one is a `ConfigError`), then the primary config's
    own values."""
    primary = OmegaConf.load(CONF_DIR / f"{config_name}.yaml")
    picked = dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith(("+", "~")))
    values = {}
    for entry in primary.defaults:
        if not isinstance(entry, DictConfig):
            continue  # the schema and _self_
        group, option = next(iter(entry.items()))
        option = picked.get(group, option)
        if group.startswith("override ") or option is None or group == "experiment":
            continue
        path = CONF_DIR / group / f"{option}.yaml"
        names, config = PART_OPTIONS.get(group, (list, None))
        if not path.is_file() and option in names():  # a part's without a YAML
            values[group] = OmegaConf.to_container(OmegaConf.structured(config(option)))
            continue
        if not path.is_file():
            options = ", ".join(sorted({p.stem for p in path.parent.glob("*.yaml")} | {*names()}))
            raise ConfigError(f"unknown option {group}={option} (options: {options})")
        values[group] = OmegaConf.to_container(load_option(group, option))
    own = OmegaConf.to_container(primary)
    return {**values, **{k: v for k, v in own.items() if k not in ("defaults", "hydra")}}


def show(value) -> str:
    """A value as it is written on the command line (YAML flow style)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | ListConfig):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict | DictConfig):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value)


def setting_rows(values: dict, schema: type, prefix: str = "") -> list[tuple[str, str, Rule, str]]:
    """`(key, default, rule, description)` of every setting in `values` (settings of the config
    class `schema`), sections unfolded (a mapping that is one setting, as `algo.loss_kwargs`,
    stays whole); a list of sections (`eval.sets`) is followed by the keys its items take
    (`eval.sets[].name`, with the item's default where it has one). The help and the docs'
    configuration reference both read it; `rule.words()` may load a registry (and torch), so
    the help leaves it unread."""
    rows = []
    found = {f.name: f for f in fields(schema)}
    for k, v in values.items():
        key, f = f"{prefix}{k}", found[k]
        rule = f.metadata["rule"]
        if rule.section is not None and isinstance(v, dict):  # a section
            rows += setting_rows(v, rule.section(v), f"{key}.")
            continue
        rows.append((key, show(v), rule, f.metadata["help"]))
        if rule.section is not None:  # a list of sections: the keys each item takes
            for g in fields(rule.section(v)):
                default = "" if g.default in (MISSING, "???") else show(g.default)
                rows.append((f"{key}[].{g.name}", default, g.metadata["rule"], g.metadata["help"]))
    return rows


def key_lines(values: dict, schema: type, prefix: str = "") -> list[tuple[str, str]]:
    """`(key=default, description)` for every key of `values` (`setting_rows`); an item key of
    a list of sections (`eval.sets[].name`) is indented, without a default."""
    return [
        (f"  {key}" if "[]." in key else f"{key}={default}", about)
        for key, default, _, about in setting_rows(values, schema, prefix)
    ]


def help_page(about: str, config_name: str, argv: list[str]) -> str:
    """The whole `--help` page: `about` (the app's docstring), the groups and the keys of the
    primary config `conf/<config_name>.yaml` with `argv`'s group options."""
    load_plugins()
    rows = key_lines(defaults(config_name, argv), APP_SCHEMAS[config_name])
    width = min(max(len(k) for k, _ in rows), 40)
    listed = [f"  {k:<{width}}  {text}" if len(k) <= width else f"  {k}\n  {'':<{width}}  {text}"
              for k, text in rows]  # fmt: skip
    return "\n".join(
        [
            about.strip(),
            "",
            "== Config groups: pick one option each (group=option) ==",
            groups(config_name, {g: names() for g, (names, _) in PART_OPTIONS.items()}),
            "",
            "== Settings: key=default, override with key=value ==",
            *listed,
            "",
            FOOTER,
        ]
    )
