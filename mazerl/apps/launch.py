"""Start a Hydra app (`mazerl-train`, `mazerl-eval`, `mazerl-categorical`).

`--help` is answered from the YAML files and the config classes, without Hydra (see `help`).
Otherwise the schemas are registered (no torch: `mazerl.apps.schema.register_configs`), the
config of a single run is composed and validated (`check_before_run`: keys, types, rules, files
that must exist, registered names; no torch until every rule has passed), and only then does
Hydra run the task. A command line Hydra cannot compose (an unknown key or option, a wrong
type, a sweep without -m, a syntax error, a typo in a preset or in a config file of your own)
is one `error:` line naming the key, the file and the nearest valid choices, and exit code 2,
as every other user error (`mazerl.core.cli`).
"""

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig, open_dict

from mazerl.core.cli import exit_on_user_error
from mazerl.core.errors import JobFailed


def check_before_run(config_name: str, argv: list[str]) -> None:
    """Compose the config of a single run as Hydra will (the same search path, config name
    and overrides: `--config-dir`, `--config-name`) and validate it with the app's schema,
    raising `ConfigError` on the first mistake. Nothing is checked here for a sweep (`-m`: each
    job checks its own config), `--cfg`, `--info` and the like, which Hydra answers itself."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_automatic_config_search_path, get_args_parser
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode

    from mazerl.apps.schema import APP_SCHEMAS, validate
    from mazerl.core.config import CONF_DIR

    args, _ = get_args_parser().parse_known_args(argv)
    others = (args.multirun, args.cfg, args.info, args.shell_completion, args.hydra_help)
    if any(others) or args.config_path or args.experimental_rerun:
        return
    if any(o.is_sweep_override() for o in OverridesParser.create().parse_overrides(args.overrides)):
        return  # Hydra words this mistake (a sweep without -m) itself
    search_path = create_automatic_config_search_path(None, None, str(CONF_DIR))
    if args.config_dir is not None:
        search_path.prepend(
            provider="command-line", path=f"file://{os.path.abspath(args.config_dir)}"
        )
    loader = ConfigLoaderImpl(config_search_path=search_path)
    cfg = loader.load_configuration(
        config_name=args.config_name or config_name,
        overrides=args.overrides,
        run_mode=RunMode.RUN,
        from_shell=True,
    )
    if str(cfg.hydra.get("mode")).endswith("MULTIRUN"):
        return  # a preset that sweeps: each job checks its own config
    with open_dict(cfg):
        del cfg["hydra"]
    validate(cfg, APP_SCHEMAS[config_name])


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
        exit_on_user_error(check_before_run)(config_name, argv)
        app = hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=config_name)
        exit_on_user_error(app(task))()
    except (ConfigCompositionException, OverrideParseException) as e:
        print(f"error: {composition_error(e)}", file=sys.stderr)
        sys.exit(2)
    except JobFailed as e:  # a job the launcher could not finish (mazerl.apps.launchers)
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
