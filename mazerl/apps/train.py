"""`mazerl-train`: RLVR on mazes with group-based objectives (F-GRPO by default).

    mazerl-train                                    # the default F-GRPO run (gamma 0.5)
    mazerl-train algo=grpo focal.gamma=0            # the GRPO baseline
    mazerl-train -m train.group_size=4,8,16 focal.gamma=0,0.5 seed=0,1,2

The loop itself is `mazerl.train.loop.train`; this app validates the config and runs it in the
Hydra run dir.
"""

from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from mazerl.apps.schema import register_configs, validate
from mazerl.core.cli import checks_group_choices, exit_on_user_error, no_run_dir_on_user_error
from mazerl.core.config import CONF_DIR
from mazerl.train.loop import train

register_configs()


@exit_on_user_error
def run(cfg: DictConfig) -> dict:
    out = Path(HydraConfig.get().runtime.output_dir)
    with no_run_dir_on_user_error(out):
        validate(cfg)
        return train(cfg, out)


@checks_group_choices(CONF_DIR)
@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def main(cfg: DictConfig) -> float:
    final = run(cfg)
    return final.get("eval/id/pass@1", float("nan")) if final else float("nan")


if __name__ == "__main__":
    main()
