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
    """`${mazerl_dirname:...}` (sweep job folders) and `${mazerl_options:GROUP}` (help pages)."""
    if not OmegaConf.has_resolver("mazerl_dirname"):
        OmegaConf.register_new_resolver("mazerl_dirname", dirname)
    if not OmegaConf.has_resolver("mazerl_options"):
        OmegaConf.register_new_resolver("mazerl_options", options)


def options(group: str) -> str:
    """The choices a user has for a config group: the YAML files in `conf/<group>/`."""
    return ", ".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml")))
