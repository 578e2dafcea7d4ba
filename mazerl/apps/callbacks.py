"""Each run's config validated once, before its work starts (see `mazerl.apps.launch`): a
single run's by the Hydra callback `CheckSettings`, a sweep job's by its task (`check_job`).
Imported by Hydra when it instantiates `hydra.callbacks`, so `--help` loads none of Hydra's
callback machinery."""

from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from mazerl.core.cli import exit_on_user_error


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
        """A single run: checked before Hydra makes its folder (a sweep's jobs: `check_job`)."""
        check(config, self.app)


def check(config: DictConfig, app: str) -> None:
    """`validate` the task's part of `config` (all but `hydra`) with `APP_SCHEMAS[app]`."""
    from mazerl.apps.schema import APP_SCHEMAS, validate

    task = OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])
    validate(task, APP_SCHEMAS[app])


def check_job(config: DictConfig, app: str) -> None:
    """A sweep job's config, checked by its task in the job's own process (a launcher may start
    a fresh one: the plug-ins are loaded there first); nothing for a single run, which
    `CheckSettings.on_run_start` checked before Hydra made its folder. A mistake raises
    `UserError` inside the task, where `mazerl.core.cli.hydra_task` records it as the job's
    failure (its folder and log kept, no retry, the driver's one line and exit 2); a
    callback could only exit, which a Ray worker's launcher takes for a crash and retries."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from mazerl.core.plugins import load_plugins

    if HydraConfig.get().mode != RunMode.MULTIRUN:
        return
    load_plugins()
    check(config, app)
