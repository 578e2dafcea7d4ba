"""`--help` of the Hydra apps, read from the YAML files and `keys.DESCRIPTIONS` without composing
the config (so without importing torch or the schemas: it prints in a fraction of a second).

The page: what the app does (its module docstring), the config groups it picks from, then
every key the app reads with its default and its one-line description. A `group=option` on
the command line shows that option's keys (`mazerl-train --help policy=transformer`); a preset
(`experiment=...`) is not applied here: `--cfg job` shows the config it composes.
"""

from omegaconf import DictConfig, ListConfig, OmegaConf

from mazerl.apps.keys import DESCRIPTIONS
from mazerl.core.config import CONF_DIR, groups
from mazerl.core.errors import ConfigError

FOOTER = (
    'Sweeps: add -m and comma-separated values (see README, "Sweeps"). The config composed '
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
        if not path.is_file():
            options = ", ".join(sorted(p.stem for p in path.parent.glob("*.yaml")))
            raise ConfigError(f"unknown option {group}={option} (options: {options})")
        section = OmegaConf.load(path)
        section.pop("defaults", None)
        values[group] = OmegaConf.to_container(section)
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


def key_lines(values: dict, prefix: str = "") -> list[tuple[str, str]]:
    """`(key=default, description)` for every key, sections unfolded (a mapping that is one
    setting, as `algo.loss_kwargs`, stays whole); a list of sections is followed by the keys
    its items take (`eval.sets[].name`)."""
    rows = []
    for k, v in values.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and key not in DESCRIPTIONS:  # a section
            rows += key_lines(v, f"{key}.")
        else:
            rows.append((f"{key}={show(v)}", DESCRIPTIONS[key]))
            item = f"{key}[]."
            rows += [(f"  {d}", text) for d, text in DESCRIPTIONS.items() if d.startswith(item)]
    return rows


def help_page(about: str, config_name: str, argv: list[str]) -> str:
    """The whole `--help` page: `about` (the app's docstring), the groups and the keys of the
    primary config `conf/<config_name>.yaml` with `argv`'s group options."""
    rows = key_lines(defaults(config_name, argv))
    width = min(max(len(k) for k, _ in rows), 40)
    listed = [f"  {k:<{width}}  {text}" if len(k) <= width else f"  {k}\n  {'':<{width}}  {text}"
              for k, text in rows]  # fmt: skip
    return "\n".join(
        [
            about.strip(),
            "",
            "== Config groups: pick one option each (group=option) ==",
            groups(config_name),
            "",
            "== Settings: key=default, override with key=value ==",
            *listed,
            "",
            FOOTER,
        ]
    )
