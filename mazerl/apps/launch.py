"""Start a Hydra app (`mazerl-train`, `mazerl-eval`, `mazerl-categorical`).

`--help` is answered from the YAML files and the config classes, without Hydra (see `help`).
Otherwise the schemas are registered and Hydra runs the task; a command line Hydra cannot
compose (an unknown key or option, a wrong type, a sweep without -m, a syntax error) is one
`error:` line naming the key and the nearest valid choices, and exit code 2, as every other
user error (`mazerl.core.cli`).
"""

import os
import sys
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig

from mazerl.core.cli import exit_on_user_error


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
    # they reach the `except` below (a job's own errors are unchanged: a user error is one
    # line and exit 2 from inside the job, anything else a traceback)
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=config_name)(task)()
    except (ConfigCompositionException, OverrideParseException) as e:
        print(f"error: {composition_error(e)}", file=sys.stderr)
        sys.exit(2)
