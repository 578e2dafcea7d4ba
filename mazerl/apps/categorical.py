"""`mazerl-categorical`: the categorical simulation as a Hydra app.

    mazerl-categorical                                   # GRPO + focal (gamma 0.5), N = 8
    mazerl-categorical -m algo=grpo,dapo,cispo focal.gamma=0,1 sim.group_size=2,4,8,16,32
    mazerl-categorical -m experiment=paper_categorical   # the paper's setting and sweep

Writes TensorBoard scalars (`sim/...`, `theory/...`), `metrics.json` and PNG plots into the
run dir: `tail_miss.png` (Pr(B_tau) versus N for several tau at this run's p) and
`masses.png` (rare correct mass, Q_pos and M_ret over training, this method against the same
method without focal weighting at the same N).
"""

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import hydra
import matplotlib
import numpy as np
import torch
from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter

from mazerl.algos import ADVANTAGES, AGGREGATIONS, POLICY_LOSSES, AlgoConfig, FocalConfig
from mazerl.algos.tail_miss import active, peak_group_size, tail_miss
from mazerl.apps.schema import register_configs
from mazerl.categorical.sim import SimConfig, masses, simulate
from mazerl.core.cli import exit_on_user_error
from mazerl.core.errors import ConfigError
from mazerl.core.files import write_json_atomic

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RHOS = (0.01, 0.05, 0.1, 0.2)  # rare fraction of the correct mass, as the paper's Fig. 3


@dataclass
class CategoricalConfig:
    sim: SimConfig = field(default_factory=SimConfig)
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    focal: FocalConfig = field(default_factory=FocalConfig)
    compare_base: bool = True  # also simulate gamma = 0 for the comparison plot
    threads: int = 0


def validate(cfg) -> None:
    s = cfg.sim
    checks = [
        (s.num_actions >= 2, "sim.num_actions must be >= 2"),
        (1 <= s.num_correct < s.num_actions, "sim.num_correct must be in [1, num_actions)"),
        (0 <= s.num_rare < s.num_correct, "sim.num_rare must be in [0, num_correct)"),
        (s.group_size >= 2, "sim.group_size must be >= 2"),
        (s.steps >= 1 and s.replicas >= 1, "sim.steps and sim.replicas must be >= 1"),
        (s.lr > 0, "sim.lr must be > 0"),
        (s.optimizer in ("sgd", "adam"), "sim.optimizer must be sgd or adam"),
        (s.reward_correct > s.reward_wrong, "sim.reward_correct must exceed sim.reward_wrong"),
        (cfg.focal.gamma >= 0, "focal.gamma must be >= 0"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    ADVANTAGES.get(cfg.algo.advantage)
    POLICY_LOSSES.get(cfg.algo.loss)
    AGGREGATIONS.get(cfg.algo.loss_agg_mode)


def plot_tail_miss(p: float, n_obs: int, path: Path) -> None:
    n = np.unique(np.logspace(0, 17, 400).astype(int))
    fig, ax = plt.subplots(figsize=(6, 4))
    for rho in RHOS:
        peak = peak_group_size(p, rho * p)[0]
        ax.plot(n, tail_miss(n, p, rho * p), label=f"tau = {rho:g} p (peak N={peak})")
    ax.plot(n, active(n, p), "k:", label="Pr(active)")
    ax.axvline(n_obs, color="grey", lw=0.8)
    ax.set(
        xscale="log",
        xlabel="group size N",
        ylabel="probability",
        title=f"tail miss Pr(B_tau), p = {p:.3f}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_masses(runs: dict[str, dict], path: Path, n: int) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for label, out in runs.items():
        c = out["curves"]
        for ax, key in zip(axes, ("rare_mass", "q_pos", "m_ret"), strict=True):
            ax.plot(c["step"], c[key], label=label)
            ax.set(xlabel="step", title=key)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"group size N = {n}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(cfg: DictConfig) -> dict:
    validate(cfg)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out = Path(HydraConfig.get().runtime.output_dir)
    sim = SimConfig(**cfg.sim)
    algo, focal = AlgoConfig(**cfg.algo), FocalConfig(**cfg.focal)
    p, tau = masses(sim)
    writer = SummaryWriter(str(out / "tb"))
    writer.add_text("config", f"```yaml\n{OmegaConf.to_yaml(cfg)}\n```")
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
    writer.add_hparams(
        {"algo": algo.name, "gamma": focal.gamma, "group_size": sim.group_size},
        {f"final/{k}": v for k, v in final.items()},
        run_name=".",
    )
    writer.close()
    metrics = {
        "final": final,
        "final_per_replica": result["final"],
        "theory": theory,
        "curves": {k: v["curves"] for k, v in runs.items()},
        "hparams": {"algo": algo.name, "gamma": focal.gamma, "group_size": sim.group_size},
        "wall_time_s": time.time() - t0,
    }
    write_json_atomic(metrics, out / "metrics.json")
    print(json.dumps({"group_size": sim.group_size, "gamma": focal.gamma, **final}))
    return final


@hydra.main(version_base="1.3", config_path="../conf", config_name="categorical")
def main(cfg: DictConfig) -> None:
    exit_on_user_error(run)(cfg)


register_configs()
ConfigStore.instance().store(name="categorical_schema", node=CategoricalConfig)

if __name__ == "__main__":
    main()
