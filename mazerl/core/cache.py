"""The folder of every cached artifact: base models, evaluation sets, training mazes."""

import os
from pathlib import Path

from mazerl.core.errors import ConfigError


def cache_root(cache_dir: str | None) -> Path:
    """The cache folder: `cache_dir` (the `base.cache_dir` setting), else `$MAZERL_CACHE`,
    else `outputs/base_models` under the launch directory (Hydra's original working
    directory, or the current one outside Hydra); created if missing. A `ConfigError` naming
    the setting when it cannot be created or written."""
    if cache_dir:
        root, source = Path(cache_dir).expanduser(), "base.cache_dir"
    elif os.environ.get("MAZERL_CACHE"):
        root, source = Path(os.environ["MAZERL_CACHE"]).expanduser(), "MAZERL_CACHE"
    else:
        try:
            from hydra.utils import get_original_cwd

            launch = Path(get_original_cwd())
        except ValueError:
            launch = Path.cwd()
        root, source = launch / "outputs" / "base_models", "the default cache folder"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"{source}={root} cannot be used as the cache folder: {e.strerror}"
        ) from e
    if not os.access(root, os.W_OK):
        raise ConfigError(f"{source}={root} cannot be used as the cache folder: not writable")
    return root
