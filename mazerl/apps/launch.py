"""Start a Hydra app (`mazerl-train`, `mazerl-eval`, `mazerl-categorical`).

`--help` is answered from the YAML files and the config classes, without Hydra (see `help`).
Otherwise the schemas are registered (no torch: `mazerl.apps.schema.register_configs`) and
Hydra composes the config and runs the task. Each run's config is validated once, by the Hydra
callback `mazerl.apps.callbacks.CheckSettings` that each app's primary config names
(`hydra.callbacks`): a single run's before Hydra makes its folder, a sweep job's in the job's
process before its task starts (keys, types, rules, files that must exist, registered names;
no torch until every rule has passed). A command line Hydra cannot compose (an unknown key or
option, a wrong type, a sweep without -m, a syntax error, a typo in a preset or in a config
file of your own) is one `error:` line naming the key, the file and the nearest valid choices,
and exit code 2, as every other user error (`mazerl.core.cli`).
"""

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig

from mazerl.core.cli import exit_on_user_error
from mazerl.core.errors import JobFailed


def launch(task: Callable[[DictConfig], Any], config_name: str) -> None:
    """Run `task` as a Hydra app on the primary config `conf/<config_name>.yaml` (`--help`:
    the docstring of `task`'s module, then the groups and keys of that config)."""
    argv = sys.argv[1:]
    if "--help" in argv or "-h" in argv:
        from mazerl.apps.help import help_page

        about = sys.modules[task.__module__].__doc__ or ""
        print(exit_on_user_error(help_page)(about, config_name, argv))
        return
    import hydra
    from hydra.errors import ConfigCompositionException, OverrideParseException

    from mazerl.apps.schema import composition_error, picked_policies, register_configs
    from mazerl.core.config import CONF_DIR

    exit_on_user_error(register_configs)(picked_policies(argv))  # a broken plug-in: one line
    # Hydra prints its own errors over several lines and exits 1 unless this is set; with it,
    # they reach the `except` below. A single run's user error is one line and exit 2 from
    # inside the job, anything else a traceback; a sweep's job that stopped on a user error is
    # recorded as failed (`mazerl.core.cli.hydra_task`), and once the launcher has run the
    # other jobs Hydra raises it here: its one line again, and exit 2
    os.environ["HYDRA_FULL_ERROR"] = "1"
    # conf/hydra/launcher/submitit_local.yaml takes the place of the plugin's config of that
    # name on purpose (mazerl's launcher, the plugin's settings checked against its schema)
    warnings.filterwarnings(
        "ignore", message=r"\s*'hydra/launcher/submitit_local' is validated against ConfigStore"
    )
    try:
        app = hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=config_name)
        exit_on_user_error(app(task))()
    except (ConfigCompositionException, OverrideParseException) as e:
        print(f"error: {composition_error(e)}", file=sys.stderr)
        sys.exit(2)
    except JobFailed as e:  # a job the launcher could not finish (mazerl.apps.launchers)
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
