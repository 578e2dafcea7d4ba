"""`mazerl-train`: RLVR on mazes with group-based objectives (F-GRPO by default).

    mazerl-train                                    # the default F-GRPO run (gamma 0.5)
    mazerl-train algo=grpo focal.gamma=0            # the GRPO baseline
    mazerl-train -m train.group_size=4,8,16 focal.gamma=0,0.5 seed=0,1,2

The loop itself is `mazerl.train.loop.train`; this app validates the config, types it once
(its config classes) and runs it in the Hydra run dir.
"""

from pathlib import Path

from omegaconf import DictConfig

from mazerl.apps.launch import launch
from mazerl.core.cli import hydra_task
from mazerl.eval.metric_names import Metric


@hydra_task
def run(cfg: DictConfig) -> float:
    """One training run in Hydra's run dir; returns the final ID pass@1 (a sweeper's
    objective). Its config is checked before the loop (torch) loads: a single run's before
    it started, a sweep job's here (`mazerl.apps.callbacks`)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from mazerl.apps.callbacks import check_job

    hydra = HydraConfig.get()
    out = Path(hydra.runtime.output_dir)
    check_job(cfg, "config")
    from mazerl.apps.schema import typed
    from mazerl.train.loop import train
    from mazerl.train.progress import logger, where_to_look

    final = train(typed(cfg), out)  # the sections travel typed from here
    # the last lines: where the run is and how to look at it (a sweep's job: the whole sweep)
    for line in where_to_look(out, out if hydra.mode == RunMode.RUN else Path(hydra.sweep.dir)):
        logger.info(line)
    return final.get(Metric("pass", "id", 1).name, float("nan")) if final else float("nan")


def main() -> None:
    launch(run, "config")


if __name__ == "__main__":
    main()
