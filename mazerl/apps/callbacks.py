"""Hydra callbacks of every app: `CheckSettings`, each run's config validated once, before
its work starts (see `mazerl.apps.launch`). Imported by Hydra when it instantiates
`hydra.callbacks`, so `--help` loads none of Hydra's callback machinery."""

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from mazerl.core.cli import exit_on_user_error, no_run_dir_on_user_error


class CheckSettings(Callback):
    """Validate each run's config with its app's schema (`APP_SCHEMAS[app]`), once, before
    the run's work starts (a Hydra callback, `hydra.callbacks.check_settings` in
    `conf/config.yaml`, `evaluate.yaml` and `categorical.yaml`). A mistake is one `error:`
    line and exit 2 from here (`exit_on_user_error`: Hydra turns an exception a callback
    raises into a warning and goes on, but not the `SystemExit`).

    Args:
        app: the app's primary config name (`config`, `evaluate`, `categorical`).
    """

    def __init__(self, app: str) -> None:
        self.app = app

    @exit_on_user_error
    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A single run: checked before Hydra makes its folder."""
        self._check(config)

    @exit_on_user_error
    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Each job of a sweep (`-m`), in the job's own process (a launcher may start a fresh
        one: the plug-ins are loaded there too); its folder is removed again on a mistake. A
        single run's job was checked at `on_run_start`."""
        from hydra.types import RunMode

        from mazerl.core.plugins import load_plugins

        load_plugins()
        if config.hydra.mode == RunMode.MULTIRUN:
            with no_run_dir_on_user_error(Path(config.hydra.runtime.output_dir)):
                self._check(config)

    def _check(self, config: DictConfig) -> None:
        """`validate` the task's part of `config` (all but `hydra`)."""
        from mazerl.apps.schema import APP_SCHEMAS, validate

        task = OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])
        validate(task, APP_SCHEMAS[self.app])
