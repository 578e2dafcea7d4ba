"""`mazerl-categorical`: the categorical simulation as a Hydra app.

    mazerl-categorical                                   # GRPO + focal (gamma 0.5), N = 8
    mazerl-categorical -m algo=grpo,dapo,cispo focal.gamma=0,1 sim.group_size=2,4,8,16,32
    mazerl-categorical -m experiment=paper_categorical   # the paper's setting and sweep

Writes TensorBoard scalars (`sim/...`, `theory/...`), `metrics.json` and PNG plots into the
run dir: `tail_miss.png` (Pr(B_tau) versus N for several tau at this run's p) and
`masses.png` (rare correct mass, Q_pos and M_ret over training, this method against the same
method without focal weighting at the same N).

The paper presets (`experiment=paper_categorical`, `paper_categorical_literal`) add the
`PaperFigure` callback: when the sweep ends it writes, into the sweep dir, `fig2.png` (the
paper's Fig. 2: Q_pos and M_ret over training for four N, final values against N with the
concentration zone M_ret < 0.5 shaded and Pr(B_tau) on a second axis) and `regimes.md` /
`regimes.csv` (final values per N and gamma, replica ranges, the zone per gamma). For a sweep
dir already on disk: `python -c "from mazerl.categorical.report import paper_figure;
paper_figure('SWEEP_DIR')"`.
"""

from pathlib import Path

from omegaconf import DictConfig

from mazerl.apps.launch import launch
from mazerl.categorical.config import CategoricalConfig
from mazerl.core.cli import hydra_task


def run(cfg: CategoricalConfig, out: Path) -> dict:
    """One simulation of the typed config `cfg` (and, with `compare_base`, the same method at
    gamma 0) into `out`: its modules are imported here, so `--help` loads no matplotlib."""
    import json
    import time

    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from torch.utils.tensorboard import SummaryWriter

    from mazerl.algos import FocalConfig
    from mazerl.algos.tail_miss import active, peak_group_size, tail_miss
    from mazerl.categorical.report import plot_masses, plot_tail_miss
    from mazerl.categorical.sim import masses, simulate
    from mazerl.core.files import write_json_atomic
    from mazerl.core.provenance import code_identity
    from mazerl.eval.dashboard import categorical_layout, write_hparams

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    sim, algo, focal = cfg.sim, cfg.algo, cfg.focal
    p, tau = masses(sim)
    writer = SummaryWriter(str(out / "tb"))
    writer.add_text("config", f"```yaml\n{OmegaConf.to_yaml(cfg)}\n```")
    writer.add_custom_scalars(categorical_layout())
    t0 = time.time()

    def log(step, scalars):
        for k, v in scalars.items():
            writer.add_scalar(f"sim/{k}", v, step)

    result = simulate(sim, algo, focal, log)
    runs = {f"{algo.name}, gamma={focal.gamma:g}": result}
    if cfg.compare_base and focal.gamma > 0:
        runs[f"{algo.name}, gamma=0"] = simulate(sim, algo, FocalConfig(0.0, focal.correct_reward))
    theory = {
        "p": p,
        "tau": tau,
        "tail_miss": float(tail_miss(sim.group_size, p, tau)),
        "active": float(active(sim.group_size, p)),
        "peak_group_size": peak_group_size(p, tau)[0],
    }
    for k, v in theory.items():
        writer.add_scalar(f"theory/{k}", v, 0)
    plot_tail_miss(p, sim.group_size, out / "tail_miss.png")
    plot_masses(runs, out / "masses.png", sim.group_size)
    final = {k: float(np.mean(v)) for k, v in result["final"].items()}
    hparams = {"algo": algo.name, "gamma": focal.gamma, "group_size": sim.group_size}
    write_hparams(writer, hparams, [f"sim/{k}" for k in final])  # the last logged step
    writer.close()
    metrics = {
        "final": final,
        "final_per_replica": result["final"],
        "theory": theory,
        "curves": {k: v["curves"] for k, v in runs.items()},
        "hparams": {"algo": algo.name, "gamma": focal.gamma, "group_size": sim.group_size},
        "wall_time_s": time.time() - t0,
        "code": dict(code_identity()),
    }
    write_json_atomic(metrics, out / "metrics.json")
    print(json.dumps({"group_size": sim.group_size, "gamma": focal.gamma, **final}))
    return final


@hydra_task
def job(cfg: DictConfig) -> None:
    """One simulation in Hydra's run dir (removed again on a user error)."""
    from hydra.core.hydra_config import HydraConfig

    from mazerl.apps.callbacks import check_job
    from mazerl.apps.schema import typed

    check_job(cfg, "categorical")
    run(typed(cfg), Path(HydraConfig.get().runtime.output_dir))


def main() -> None:
    launch(job, "categorical")


if __name__ == "__main__":
    main()
