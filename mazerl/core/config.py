"""Where the Hydra configs live and how resolved configs are turned into plain data."""

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

# the package's conf/ (shipped in the wheel; the repository's top-level `conf` links here)
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"


def to_container(cfg: DictConfig) -> dict:
    """The resolved config as plain dicts and lists (for checkpoints and cache keys)."""
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def dirname(overrides: str) -> str:
    """A job folder name from `hydra.job.override_dirname` (path separators replaced)."""
    return overrides.replace("/", "_").replace("\\", "_")[:200] or "default"


def register_resolvers() -> None:
    """`${mazerl_dirname:...}`: sweep job folders."""
    if not OmegaConf.has_resolver("mazerl_dirname"):
        OmegaConf.register_new_resolver("mazerl_dirname", dirname)


def groups(config_name: str) -> str:
    """One line per config group that the primary config `conf/<config_name>.yaml` picks from:
    `group: option, option, ...` from the YAML files of `conf/<group>/`."""
    primary = OmegaConf.load(CONF_DIR / f"{config_name}.yaml")
    names = [next(iter(d)) for d in primary.defaults if isinstance(d, dict | DictConfig)]
    names = [n.removeprefix("override ") for n in names] + ["hydra/launcher"]
    keys = set(primary) | set(names)
    lines = []
    for name in names:
        found = sorted(p.stem for p in (CONF_DIR / name).glob("*.yaml"))
        if name == "experiment":  # presets of this app: the sections they set are this app's
            found = [f for f in found if _sections(CONF_DIR / name / f"{f}.yaml") <= keys]
        if name == "hydra/launcher":  # Hydra's own and the plugins' launchers
            found = sorted({"basic", "joblib", *found})
        if found:
            lines.append(f"{name}: {', '.join(found)}")
    return "\n".join(lines)


def _sections(path: Path) -> set[str]:
    """The top-level sections a preset sets (its defaults list and `hydra` left out)."""
    return set(OmegaConf.load(path)) - {"defaults", "hydra"}
