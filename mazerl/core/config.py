"""Where the Hydra configs live and how resolved configs are turned into plain data."""

import dataclasses
import hashlib
import re
from pathlib import Path

import yaml
from omegaconf import DictConfig, OmegaConf

# the package's conf/ (shipped in the wheel; the repository's top-level `conf` links here)
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"


def load_option(group: str, name: str) -> DictConfig:
    """A config group's option as Hydra composes it from files: `conf/<group>/<name>.yaml`
    merged over the options of the same group that its defaults list names (`defaults:
    [grpo, _self_]`), in the list's order (`_self_` last where the list leaves it out),
    without the list. An entry of another group (`/schema/algo@_here_`, the schema the
    config store holds) is left out.

    Args:
        group: the config group (`algo`, `policy`, ...).
        name: the option, a `conf/<group>/<name>.yaml` (FileNotFoundError where there is none).

    Returns:
        The option's values, its bases' values under its own.
    """
    own = OmegaConf.load(CONF_DIR / group / f"{name}.yaml")
    entries = [e for e in own.pop("defaults", None) or [] if isinstance(e, str) and "/" not in e]
    if "_self_" not in entries:
        entries.append("_self_")
    composed = OmegaConf.create()
    for entry in entries:
        base = own if entry == "_self_" else load_option(group, entry)
        composed = OmegaConf.merge(composed, base)
    return composed


def to_container(cfg) -> dict:
    """A typed config or section (the dataclasses `mazerl.apps.schema.typed` makes of a
    composed config) as plain dicts and lists, as `OmegaConf.to_container` gives the composed
    config (for checkpoints and cache keys)."""
    return dataclasses.asdict(cfg)


def dirname(overrides: str) -> str:
    """A job folder name from `hydra.job.override_dirname` (path separators replaced): the
    names of the study presets' folders, `focal.gamma=0,seed=0,train.group_size=8`."""
    return overrides.replace("/", "_").replace("\\", "_")[:200] or "default"


# the letter of an often swept key in a run name; a group's option stands for itself and any
# other key for its last part (`maze.size=6`: size6)
LETTERS = {"train.group_size": "N", "sim.group_size": "N", "focal.gamma": "g", "seed": "s"}


def run_name(overrides: list[str], excluded: list[str]) -> str:
    """A short, readable job folder (and TensorBoard run) name from a job's overrides
    (`hydra.overrides.task`) without the `excluded` keys: `algo=grpo train.group_size=8
    focal.gamma=0.5 seed=0` -> `grpo_N8_g0.5_s0`. Group options first, then N and g, the
    other keys by name, the seed last; an unreadably long name keeps 60 characters and a hash
    of the overrides."""
    parts = []
    for override in overrides:
        key, _, value = override.lstrip("+~").partition("=")
        if key in excluded:
            continue
        value = re.sub(r"[^A-Za-z0-9.+-]+", "-", value).strip("-")
        group = "." not in key and (CONF_DIR / key).is_dir()
        rank = 0 if group else 3 if key == "seed" else 1 if key in LETTERS else 2
        word = value if group else LETTERS.get(key, key.rsplit(".")[-1]) + value
        parts.append((rank, list(LETTERS).index(key) if key in LETTERS else 0, key, word))
    name = "_".join(part[-1] for part in sorted(parts)) or "default"
    if len(name) > 80:
        digest = hashlib.sha1(",".join(sorted(overrides)).encode()).hexdigest()[:8]
        name = f"{name[:60]}_{digest}"
    return name


def job_prefix(mode, output_dir: str) -> str:
    """What a job's console lines start with: in a sweep (`mode` MULTIRUN) its folder's name,
    `[grpo_N8_g0.5_s0] ` (the jobs of a parallel launcher share one console); else nothing.
    Escaped for a `%`-style logging format."""
    if not str(mode).endswith("MULTIRUN"):
        return ""
    return f"[{Path(output_dir).name}] ".replace("%", "%%")


def config_subdir(output_dir: str) -> str | None:
    """Where Hydra saves a job's config (`hydra.output_subdir`): `.hydra`, or nowhere (None)
    for a run folder that holds `metrics.json`. A re-launched sweep thus leaves each finished
    job's `.hydra/` as the sweep that ran it wrote it (its job number, and its config should
    the defaults have changed since) while the job is skipped."""
    return None if (Path(output_dir) / "metrics.json").exists() else ".hydra"


def register_resolvers() -> None:
    """`${mazerl_run_name:...}` (new sweeps' job folders), `${mazerl_dirname:...}` (the
    study presets' folders, kept so their sweeps find their jobs again),
    `${mazerl_job_prefix:...}` (a sweep job's console lines, `job_prefix`) and
    `${mazerl_config_subdir:...}` (a finished job's saved config kept, `config_subdir`)."""
    for name, fn in (
        ("mazerl_dirname", dirname),
        ("mazerl_run_name", run_name),
        ("mazerl_job_prefix", job_prefix),
        ("mazerl_config_subdir", config_subdir),
    ):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)


def groups(config_name: str, extra: dict[str, list[str]] | None = None) -> str:
    """One line per config group that the primary config `conf/<config_name>.yaml` picks from:
    `group: option, option, ...` from the YAML files of `conf/<group>/` and the `extra`
    options of a group (those registered without a YAML file, as a plug-in's policy)."""
    primary = OmegaConf.load(CONF_DIR / f"{config_name}.yaml")
    names = [next(iter(d)) for d in primary.defaults if isinstance(d, dict | DictConfig)]
    names = [n.removeprefix("override ") for n in names] + ["hydra/launcher"]
    keys = set(primary) | set(names)
    lines = []
    for name in names:
        found = sorted(
            {p.stem for p in (CONF_DIR / name).glob("*.yaml")} | {*(extra or {}).get(name, [])}
        )
        if name == "experiment":  # presets of this app: the sections they set are this app's
            found = [f for f in found if _sections(CONF_DIR / name / f"{f}.yaml") <= keys]
        if name == "hydra/launcher":  # Hydra's own and the plugins' launchers
            found = sorted({"basic", "joblib", *found})
        if found:
            lines.append(f"{name}: {', '.join(found)}")
    return "\n".join(lines)


def _sections(path: Path) -> set[str]:
    """The top-level sections a preset sets (its defaults list and `hydra` left out); only its
    keys, read with libyaml where present (30x OmegaConf.load: `--help` reads every preset)."""
    keys = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    return set(keys) - {"defaults", "hydra"}
