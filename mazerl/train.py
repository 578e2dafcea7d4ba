"""`mazerl-train`: RLVR on mazes with group-based objectives (F-GRPO by default).

    mazerl-train                                    # the default F-GRPO run (gamma 0.5)
    mazerl-train algo=grpo focal.gamma=0            # the GRPO baseline
    mazerl-train -m train.group_size=4,8,16 focal.gamma=0,0.5 seed=0,1,2

One iteration: draw `num_prompts` mazes, sample `group_size` rollouts of each, score them with
the batched stepper, compute group advantages times the focal weight g = (1 - mu_hat)^gamma,
then `ppo_epochs` x `minibatches` clipped updates against the sampling-time log-probs.
Outputs (in the Hydra run dir): `tb/` TensorBoard events, `checkpoints/`, `eval/*.json`,
`metrics.json` (written last: its presence marks a finished run) and `.hydra/config.yaml`.
"""

import copy
import dataclasses
import json
import math
import random
import signal
import sys
import time
from pathlib import Path

import hydra
import numpy as np
import torch
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from mazerl import checkpoint
from mazerl.algos import AlgoConfig, FocalConfig, group_advantages, keep_mixed_groups, policy_loss
from mazerl.base_model import obtain_base, sample_mazes
from mazerl.config import register_configs, to_container, validate
from mazerl.envs.maze_env import EVENTS
from mazerl.errors import CheckpointError, UserError
from mazerl.eval.evaluate import build_sets, excluded_keys, maze_spec
from mazerl.eval.routes import rare_routes, route_masses, tail_miss_stats
from mazerl.eval.runner import BaseEvaluation, evaluate_all, log_eval
from mazerl.rollout import Rollouts, generate, score
from mazerl.runtime import (
    STREAM_SAMPLING,
    STREAM_TRAIN_MAZES,
    STREAM_TRAIN_POOL,
    rng,
    select_device,
    setup,
    torch_generator,
)

register_configs()
CONF_DIR = str(Path(__file__).resolve().parents[1] / "conf")  # the repo's conf/ (editable install)


class TrainingError(UserError):
    """The run cannot go on (non-finite steps); the message says why and what is kept."""


class StopSignal:
    """SIGTERM/SIGINT set a flag; the loop finishes its iteration, checkpoints and exits."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old = {s: signal.signal(s, self._handle) for s in (signal.SIGTERM, signal.SIGINT)}

    def _handle(self, signum, frame) -> None:
        if self.signum is not None:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signum = signum

    def restore(self) -> None:
        for s, handler in self._old.items():
            signal.signal(s, handler)


# settings that may change between a run and its resumption
RESUMABLE = {
    "train": {
        "iterations",
        "eval_every",
        "checkpoint_every",
        "keep_checkpoints",
        "resume",
        "log_every",
        "max_bad_steps",
    },
    "eval": None,
    "logger": None,
    "threads": None,
    "device": None,
    "base": {"cache_dir"},
}


def check_same_run(saved: dict, current: dict, path: Path) -> None:
    """Refuse to resume a checkpoint written by a different configuration."""
    diff = []
    for key in sorted(set(saved) | set(current)):
        if key in RESUMABLE and RESUMABLE[key] is None:
            continue
        a, b = saved.get(key), current.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            skip = RESUMABLE.get(key, set())
            diff += [
                f"{key}.{k}"
                for k in sorted(set(a) | set(b))
                if k not in skip and a.get(k) != b.get(k)
            ]
        elif a != b:
            diff.append(key)
    if diff:
        raise CheckpointError(
            f"{path} was written by a different config (differs in {', '.join(diff)}); "
            "use another run dir or train.resume=false"
        )


def iterations_for(train_cfg) -> int:
    """Fixed steps, or (budget=rollouts) iterations scaled so prompts x N x iterations is
    the same as `iterations` at `budget_reference_group_size`."""
    if train_cfg.budget == "steps":
        return train_cfg.iterations
    ref = train_cfg.budget_reference_group_size
    return max(1, round(train_cfg.iterations * ref / train_cfg.group_size))


def lr_factor(it: int, total: int, warmup: int, schedule: str) -> float:
    if warmup and it < warmup:
        return (it + 1) / warmup
    if schedule == "cosine":
        progress = (it - warmup) / max(1, total - warmup)
        return 0.5 * (1 + math.cos(math.pi * progress))
    return 1.0


class TrainingMazes:
    """Training prompts: fresh mazes every iteration (`maze.pool_size=0`), or draws without
    replacement from a fixed pool of `pool_size` mazes. Both skip evaluation mazes and depend
    only on (seed, iteration, round), so a resumed run draws exactly the same mazes."""

    def __init__(self, spec, pool_size: int, excluded: set[bytes], seed: int) -> None:
        self.spec, self.excluded, self.seed = spec, excluded, seed
        self.pool = sample_mazes(spec, pool_size, excluded, seed, STREAM_TRAIN_POOL)

    def draw(self, count: int, it: int, rounds: int) -> list:
        keys = (self.seed, STREAM_TRAIN_MAZES, it, rounds)
        if not self.pool:
            return sample_mazes(self.spec, count, self.excluded, *keys)
        idx = rng(*keys).choice(len(self.pool), size=min(count, len(self.pool)), replace=False)
        return [self.pool[i] for i in idx]


def collect(policy, cfg, mazes_source, it, device) -> tuple[Rollouts, int]:
    """Sample the iteration's groups. With DAPO's dynamic sampling, groups with all-equal
    rewards are dropped and more mazes are drawn (up to `dynamic_sampling_max_rounds` extra
    rounds) to refill the batch. Returns the rollouts and the rounds used."""
    t, a = cfg.train, cfg.algo
    parts, kept, rounds = [], 0, 0
    while True:
        mazes = mazes_source.draw(t.num_prompts, it, rounds)
        r = generate(
            policy,
            mazes,
            t.group_size,
            temperature=t.temperature,
            top_p=t.top_p,
            allow_revisits=cfg.maze.allow_revisits,
            device=device,
            generator=torch_generator(device, cfg.seed, STREAM_SAMPLING, it, rounds),
        )
        if not a.dynamic_sampling:
            return r, 1
        keep = keep_mixed_groups(r.rewards_by_group).nonzero().squeeze(1)
        parts.append(r.select(keep))
        kept += len(keep)
        rounds += 1
        if kept >= t.num_prompts or rounds > a.dynamic_sampling_max_rounds:
            if kept == 0:  # no mixed group at all: the last batch, whose update is zero
                return r, rounds
            merged = Rollouts.cat(parts)
            return merged.select(list(range(min(kept, t.num_prompts)))), rounds


def update(policy, ref_policy, optimizer, rollouts, advantages, algo, train_cfg):
    """`ppo_epochs` passes of `minibatches` optimizer steps each (split by prompt).
    Returns averaged loss metrics and the number of non-finite steps skipped."""
    p = len(rollouts.mazes)
    per_mb = max(1, p // train_cfg.minibatches)
    ref_logp = None
    if algo.kl_beta > 0:
        with torch.no_grad():
            ref_logp, _ = score(ref_policy, rollouts, train_cfg.temperature)
    sums: dict[str, float] = {}
    steps = skipped = 0
    policy.train()
    for _ in range(train_cfg.ppo_epochs):
        for lo in range(0, p, per_mb):
            idx = list(range(lo, min(p, lo + per_mb)))
            mb = rollouts.select(idx)
            rows = slice(lo * rollouts.group_size, (lo + len(idx)) * rollouts.group_size)
            logp, entropy = score(policy, mb, train_cfg.temperature)
            loss, metrics = policy_loss(
                algo,
                logp=logp,
                old_logp=mb.logp,
                advantages=advantages[rows],
                mask=mb.mask,
                ref_logp=None if ref_logp is None else ref_logp[rows],
                entropy=entropy,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), train_cfg.grad_clip)
            if not (torch.isfinite(loss) and torch.isfinite(grad_norm)):
                optimizer.zero_grad(set_to_none=True)
                skipped += 1
                continue
            optimizer.step()
            steps += 1
            for k, v in {"loss": loss, "grad_norm": grad_norm, **metrics}.items():
                sums[k] = sums.get(k, 0.0) + v.item()
    return {k: v / max(steps, 1) for k, v in sums.items()}, skipped


def route_tracking(policy, base_policy, rollouts: Rollouts, cfg) -> dict[str, float]:
    """Tail-miss rate of this iteration's groups (mixed rewards, no rare route sampled) and
    its closed form at the exact p and tau of the sampling policy; rare routes are those the
    base model gives less than RARE_FRACTION of the maze's success mass."""
    device = rollouts.actions.device
    mass = route_masses(policy, rollouts.mazes, cfg.train.temperature, device)
    base = route_masses(base_policy, rollouts.mazes, cfg.train.temperature, device)
    width = mass.shape[1]
    valid = np.array([[k < len(m.routes) for k in range(width)] for m in rollouts.mazes])
    rare = rare_routes(base, valid)
    return tail_miss_stats(rollouts.rewards_by_group, rollouts.route, rare, mass)


def rollout_metrics(r: Rollouts) -> dict[str, float]:
    rewards = r.rewards_by_group
    events = torch.bincount(r.event.clamp(min=0), minlength=len(EVENTS)).float() / len(r.event)
    out = {
        "reward_mean": float(r.reward.mean()),
        "success_rate": float((rewards > 0).float().mean()),
        "response_length": float(r.length.float().mean()),
    }
    out.update({f"end_{name}": float(events[i]) for i, name in enumerate(EVENTS)})
    return out


def progress_mode(logger_cfg) -> str:
    if logger_cfg.progress == "auto":
        return "bar" if sys.stderr.isatty() else "lines"
    return logger_cfg.progress


def train(cfg: DictConfig) -> dict:
    """The whole run; returns the final metrics (also written to `metrics.json`)."""
    job_start = time.time()
    validate(cfg)
    out = Path(HydraConfig.get().runtime.output_dir)
    if (out / "metrics.json").exists():  # a finished job of a re-launched sweep
        print(f"{out}: already finished (metrics.json exists); skipping")
        return json.loads((out / "metrics.json").read_text())["final"]
    device = select_device(cfg.device)
    threads = setup(cfg.seed, cfg.threads, device)
    algo = AlgoConfig(**cfg.algo)
    focal = FocalConfig(**cfg.focal)
    spec = maze_spec(cfg.maze)
    sets = build_sets(cfg.maze, cfg.eval)
    excluded = excluded_keys(sets)
    log = tqdm.write if progress_mode(cfg.logger) == "bar" else print
    parts = {k: to_container(cfg[k]) for k in ("maze", "policy", "base")}

    # ---- the base policy and its evaluation (computed once, stored with it)
    base_policy, base_dir = obtain_base(
        parts,
        dataclasses.replace(spec, routes=1),  # the base model learns from perfect mazes
        cfg.base,
        allow_revisits=cfg.maze.allow_revisits,
        excluded=excluded,
        device=device,
        log=log,
    )
    base_eval = BaseEvaluation.load_or_run(base_dir, base_policy, sets, cfg, device, log)
    training_mazes = TrainingMazes(spec, cfg.maze.pool_size, excluded, cfg.seed)
    policy = copy.deepcopy(base_policy).train()
    ref_policy = base_policy if algo.kl_beta > 0 else None
    optimizer = torch.optim.AdamW(
        policy.parameters(),
        lr=cfg.train.lr,
        betas=tuple(cfg.train.betas),
        weight_decay=cfg.train.weight_decay,
    )
    total = iterations_for(cfg.train)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda it: lr_factor(it, total, cfg.train.warmup, cfg.train.schedule)
    )

    # ---- resume from the last checkpoint of this run dir
    ckpts = checkpoint.CheckpointDir(out / "checkpoints", cfg.train.keep_checkpoints)
    start, bad_in_row, skipped_total, elapsed0 = 0, 0, 0, 0.0
    latest = ckpts.latest() if cfg.train.resume else None
    if latest is not None:
        state = checkpoint.load(latest, map_location=device)
        check_same_run(state["config"], to_container(cfg), latest)
        try:
            policy.load_state_dict(state["policy_state"])
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint {latest} does not match policy: {e}") from None
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start, skipped_total, elapsed0 = state["iteration"], state["skipped"], state["elapsed"]
        torch.set_rng_state(state["rng"]["torch"])
        np.random.set_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])
        log(f"resuming from {latest} at iteration {start}")

    # events up to step `start` were logged before that checkpoint; anything later (a crash
    # between a checkpoint and the next) is purged and logged again
    writer = SummaryWriter(
        str(out / "tb"), purge_step=start + 1 if start else None, flush_secs=cfg.logger.flush_secs
    )
    if start == 0:
        writer.add_text("config", f"```yaml\n{OmegaConf.to_yaml(cfg, resolve=True)}\n```")
        log_eval(writer, base_eval.results, base_eval.results, 0, cfg.eval.images)

    def save(it: int) -> Path:
        return ckpts.save(
            {
                "iteration": it,
                "policy_state": policy.state_dict(),
                "policy_config": parts["policy"],
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "skipped": skipped_total,
                "elapsed": elapsed0 + time.time() - t_start,
                "config": to_container(cfg),
                "base": str(base_dir),
                "rng": {
                    "torch": torch.get_rng_state(),
                    "numpy": np.random.get_state(),
                    "python": random.getstate(),
                },
            },
            it,
        )

    stop = StopSignal()
    mode = progress_mode(cfg.logger)
    bar = tqdm(total=total, initial=start, disable=mode != "bar", desc="train", dynamic_ncols=True)
    t_start = time.time()
    train_scalars: dict[str, float] = {}
    eval_pass1 = base_eval.scalars().get(f"eval/{sets[0].name}/pass@1", float("nan"))
    try:
        for it in range(start, total):
            # ---- rollouts: num_prompts mazes x group_size samples, scored by the stepper
            t0 = time.time()
            rollouts, rounds = collect(policy, cfg, training_mazes, it, device)
            t_rollout = time.time() - t0

            if cfg.maze.routes > 1:  # exact route masses: tail misses, rare-route mass
                for k, v in route_tracking(policy, base_policy, rollouts, cfg).items():
                    writer.add_scalar(f"routes/{k}", v, it + 1)

            # ---- group advantages x focal weight, then the clipped update(s)
            advantages, group_metrics = group_advantages(rollouts.rewards_by_group, algo, focal)
            loss_metrics, skipped = update(
                policy, ref_policy, optimizer, rollouts, advantages.flatten(), algo, cfg.train
            )
            scheduler.step()
            skipped_total += skipped
            bad_in_row = bad_in_row + 1 if skipped else 0
            t_iter = time.time() - t0
            tokens = float(rollouts.mask.sum())
            train_scalars = {
                **rollout_metrics(rollouts),
                **{k: float(v) for k, v in group_metrics.items()},
                **loss_metrics,
                "lr": scheduler.get_last_lr()[0],
                "skipped_steps": float(skipped_total),
                "sampling_rounds": float(rounds),
                "tokens_per_s": tokens / t_rollout,
                "rollouts_per_s": len(rollouts.reward) / t_rollout,
            }
            step = it + 1
            for k, v in train_scalars.items():
                writer.add_scalar(f"train/{k}", v, step)
            writer.add_scalar("time/rollout_s", t_rollout, step)
            writer.add_scalar("time/update_s", t_iter - t_rollout, step)
            writer.add_scalar("time/iteration_s", t_iter, step)
            writer.add_scalar("time/elapsed_s", elapsed0 + time.time() - t_start, step)
            if bad_in_row >= cfg.train.max_bad_steps:
                kept = ckpts.latest()
                raise TrainingError(
                    f"{bad_in_row} iterations in a row had a non-finite loss or gradient "
                    f"(iteration {step}); stopping. Last good checkpoint: {kept or 'none'}"
                )

            # ---- evaluation, checkpoints, progress
            last = step == total
            if not last and cfg.train.eval_every and step % cfg.train.eval_every == 0:
                t0 = time.time()
                results = evaluate_all(policy, sets, cfg, device, cfg.eval.n_during, step)
                flat = log_eval(writer, results, base_eval.results, step, cfg.eval.images)
                eval_pass1 = flat.get(f"eval/{sets[0].name}/pass@1", eval_pass1)
                writer.add_scalar("time/eval_s", time.time() - t0, step)
            if last or stop.signum is not None or step % cfg.train.checkpoint_every == 0:
                path = save(step)
            bar.update(1)
            bar.set_postfix(
                reward=f"{train_scalars['reward_mean']:.3f}",
                pass1=f"{eval_pass1:.3f}",
                g=f"{train_scalars['focal_weight_mean']:.2f}",
            )
            if mode == "lines" and (step % cfg.train.log_every == 0 or last):
                eta = (time.time() - t_start) / (step - start) * (total - step)
                print(
                    f"iteration {step}/{total}  reward {train_scalars['reward_mean']:.3f}  "
                    f"eval pass@1 {eval_pass1:.3f}  "
                    f"zero-adv groups {train_scalars['frac_zero_adv_groups']:.2f}  "
                    f"{t_iter:.2f}s/it  eta {eta:.0f}s",
                    flush=True,
                )
            if stop.signum is not None:
                writer.flush()
                name = signal.Signals(stop.signum).name
                print(
                    f"stopped by {name} after iteration {step}/{total}; checkpoint {path}; "
                    "run the same command again to resume",
                    file=sys.stderr,
                )
                raise SystemExit(128 + stop.signum)
    finally:
        stop.restore()
        bar.close()

    # ---- final evaluation at eval.n samples per maze, metrics.json, hparams
    t0 = time.time()
    results = evaluate_all(policy, sets, cfg, device, cfg.eval.n, total, save_dir=out / "eval")
    final = log_eval(writer, results, base_eval.results, total, cfg.eval.images)
    writer.add_scalar("time/eval_s", time.time() - t0, total)
    wall = elapsed0 + time.time() - t_start
    hparams = {
        "algo": algo.name,
        "group_size": cfg.train.group_size,
        "gamma": focal.gamma,
        "maze_size": cfg.maze.size,
        "generator": cfg.maze.generator,
        "seed": cfg.seed,
        "policy": cfg.policy.name,
        "sees_position": cfg.policy.sees_position,
        "lr": cfg.train.lr,
        "num_prompts": cfg.train.num_prompts,
    }
    headline = {f"final/{k}": v for k, v in final.items() if "_se" not in k}
    writer.add_hparams(hparams, headline, run_name=".")
    writer.close()
    metrics = {
        "final": final,
        "base": {k: v for k, v in base_eval.scalars().items()},
        "train": train_scalars,
        "iterations": total,
        "wall_time_s": wall,
        "threads": threads,
        "device": str(device),
        "hparams": hparams,
    }
    checkpoint.write_json_atomic(metrics, out / "metrics.json")
    print(
        f"done in {time.time() - job_start:.0f}s (training {wall:.0f}s): "
        + ", ".join(
            f"{k} {v:.3f}" for k, v in final.items() if k.endswith(("/pass@1", "/pass@256"))
        )
    )
    return final


def run_cli(fn, cfg: DictConfig):
    """Run an entry point: a user error becomes one line on stderr and exit code 2."""
    try:
        return fn(cfg)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def main(cfg: DictConfig) -> float:
    final = run_cli(train, cfg)
    return final.get("eval/id/pass@1", float("nan")) if final else float("nan")


if __name__ == "__main__":
    main()
