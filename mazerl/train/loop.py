"""`train(cfg)`: RLVR on mazes with group-based objectives, one page from set-up to metrics.

One iteration: draw `num_prompts` mazes, sample `group_size` rollouts of each, score them with
the batched stepper, compute group advantages times the focal weight g = (1 - mu_hat)^gamma,
then `ppo_epochs` x `minibatches` clipped updates against the sampling-time log-probs.
Outputs (in the run dir `out`): `tb/` TensorBoard events, `checkpoints/`, `eval/*.json`,
`train.csv` (training scalars every `log_every` iterations), `metrics.json` (written last: its
presence marks a finished run; `code`: the version and git commit of the code, `code_identity`,
as the job that finished the run found it at its start; `base_model`: the base weights' source,
cache key and sha256; `forked`: the checkpoint a `train.fork` run started from, its iteration
and the settings that differ, else null), and `.run.lock` while a job trains it
(one job per run dir).
"""

import contextlib
import copy
import signal
import time
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter

from mazerl.algos import AlgoConfig, FocalConfig, group_advantages
from mazerl.core.cache import cache_root
from mazerl.core.config import to_container
from mazerl.core.device import cpu_info, select_device, setup
from mazerl.core.errors import UserError
from mazerl.core.files import LockHeld, locked, write_json_atomic
from mazerl.core.provenance import code_identity
from mazerl.envs.spec import maze_spec
from mazerl.eval.dashboard import (
    headline_ks,
    hparams_metrics,
    run_hparams,
    train_layout,
    write_hparams,
)
from mazerl.eval.evaluate import excluded_keys
from mazerl.eval.routes import route_tracking
from mazerl.eval.runner import (
    BaseEvaluation,
    cached_sets,
    evaluate_all,
    held_out_keys,
    last_saved,
    log_eval,
)
from mazerl.train.collect import TRAIN_BLOCK, TrainingMazes, collect, rollout_metrics
from mazerl.train.progress import (
    Progress,
    SignalCheck,
    StopSignal,
    config_summary,
    final_summary,
    logger,
    progress_mode,
)
from mazerl.train.run_state import RunState, finite, read_metrics, start_fork
from mazerl.train.scalar_log import FILE as SCALARS_FILE
from mazerl.train.scalar_log import ScalarLog
from mazerl.train.schedule import iterations_for, lr_factor
from mazerl.train.sft import obtain_base
from mazerl.train.update import update


class TrainingError(UserError):
    """The run cannot go on (non-finite steps); the message says why and what is kept."""


def train(cfg: DictConfig, out: Path) -> dict:
    """The whole run in the folder `out`; returns the final metrics (also in `metrics.json`)."""
    job_start = time.time()
    # one job per run dir: a second writer would interleave its checkpoints, train.csv, evals
    with contextlib.ExitStack() as hold:
        try:
            hold.enter_context(locked(out / ".run.lock", logger.warning, wait=False))
        except LockHeld as held:
            raise UserError(
                f"{out}: another job (pid {held.pid} on host {held.host}) is training this run; "
                "two jobs would write one folder: stop that job (kill its whole process group; "
                "a joblib sweep's workers outlive their parent) or wait for it"
            ) from None
        if (out / "metrics.json").exists():  # a finished job of a re-launched sweep
            finished, problem = read_metrics(out / "metrics.json")
            if finished is not None:
                logger.info(f"{out}: already finished (metrics.json exists); skipping")
                return finished["final"]
            logger.warning(f"{out}: {problem}; treating the run as unfinished and resuming it")
        return _train(cfg, out, job_start)


def _train(cfg: DictConfig, out: Path, job_start: float) -> dict:
    """`train`'s body, run while this job holds the run dir's lock."""
    device = select_device(cfg.device)
    threads = setup(cfg.seed, cfg.threads, device)
    algo, focal = AlgoConfig(**cfg.algo), FocalConfig(**cfg.focal)
    progress = Progress(progress_mode(cfg.logger), cfg.train.log_every)
    cpu, code = cpu_info(), dict(code_identity())
    mazes = maze_spec(cfg.maze).describe()
    summary = config_summary(
        out, device, threads, mazes, cpu, code, algo=algo, focal=focal, train=cfg.train,
        maze=cfg.maze, policy=cfg.policy, seed=cfg.seed,
    )  # fmt: skip
    progress.log(summary)

    # ---- evaluation sets, the base policy (SFT, cached) and its evaluation
    cache = cache_root(cfg.base.cache_dir)
    sets = cached_sets(cfg.maze, cfg.eval, cache / "eval_sets", progress.log)
    excluded, names = excluded_keys(sets), [s.name for s in sets]
    spec, pool_size = maze_spec(cfg.maze), cfg.maze.pool_size
    total = iterations_for(cfg.train)
    training_mazes = TrainingMazes(
        spec, pool_size, excluded, cfg.seed, progress.log,
        cache_dir=cache / "train_mazes", block=min(TRAIN_BLOCK, total),
    )  # fmt: skip
    held_out = held_out_keys(
        cfg.maze, cfg.eval, cfg.base.held_out, cache / "eval_sets", progress.log
    )
    base_policy, base_dir, base_origin = obtain_base(
        held_out, device, progress.log, maze=cfg.maze, policy=cfg.policy, base=cfg.base
    )
    base_eval = BaseEvaluation.load_or_run(
        base_dir, base_policy, sets, device, progress.log,
        maze=cfg.maze, eval=cfg.eval, weights=base_origin["sha256"],
    )  # fmt: skip

    # ---- the trained policy, its optimizer and schedule; resume from the run dir
    policy = copy.deepcopy(base_policy).train()
    ref_policy = base_policy if algo.kl_beta > 0 else None
    t = cfg.train
    optimizer = torch.optim.AdamW(
        policy.parameters(), lr=t.lr, betas=tuple(t.betas), weight_decay=t.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda it: lr_factor(it, total, t.warmup, t.schedule)
    )
    state = RunState(
        out / "checkpoints",
        t.keep_checkpoints,
        to_container(cfg),
        base_dir,
        base_origin,
        policy_state=policy,
        optimizer=optimizer,
        scheduler=scheduler,
    )
    fork = Path(t.fork).expanduser().resolve() if t.fork is not None else None
    resumed = state.resume(device, progress.warn) if t.resume else None
    if resumed is not None:
        if fork is not None and (state.forked or {}).get("checkpoint") != str(fork):
            raise UserError(
                f"train.fork: {out} has checkpoints of its own ({resumed}) that did not start "
                f"from {fork}; fork into another run dir"
            )
        progress.log(f"resuming from {resumed} at iteration {state.iteration}")
    elif fork is not None:  # a counterfactual: another run's state, these settings
        progress.log(start_fork(state, fork, out, total, device))
    start = state.iteration

    # events after the checkpoint (a crash before the next one) are purged and logged again
    writer = SummaryWriter(
        str(out / "tb"), purge_step=start + 1 if start else None, flush_secs=cfg.logger.flush_secs
    )
    if resumed is None:  # new events: from scratch, or a fork's first launch
        writer.add_text("config", f"```yaml\n{OmegaConf.to_yaml(cfg, resolve=True)}\n```")
        writer.add_custom_scalars(
            train_layout(names, cfg.eval.n, cfg.eval.exact_ks, cfg.maze.routes > 1)
        )
        log_eval(writer, base_eval.results, base_eval.results, 0, cfg.eval.images)

    scalar_log = ScalarLog(out / SCALARS_FILE, t.log_every, start, total)
    stop, bad_in_row, train_scalars = StopSignal(), 0, {}
    eval_pass1 = base_eval.scalars().get(f"eval/{sets[0].name}/pass@1", float("nan"))
    signal_check = SignalCheck(start, total, f"{sets[0].name} pass@1 {eval_pass1:.3f}")
    if start:  # resumed: progress shows the last evaluation's pass@1, not the base model's
        last_eval = last_saved(out / "eval", start).get(sets[0].name, {})
        eval_pass1 = last_eval.get("pass@1", eval_pass1)
    progress.begin(start, total)
    try:
        for it in range(start, total):
            step = it + 1
            # ---- collect: num_prompts mazes x group_size rollouts, scored by the stepper
            t0 = time.time()
            rollouts, rounds = collect(
                policy, training_mazes, it, device,
                maze=cfg.maze, train=t, algo=algo, seed=cfg.seed,
            )  # fmt: skip
            t_rollout = time.time() - t0
            routes = {}
            if cfg.maze.routes > 1:  # exact route masses: tail misses, rare-route mass
                routes = route_tracking(policy, base_policy, rollouts, t.temperature)

            # ---- advantages: group-normalised rewards x focal weight
            advantages, group_metrics = group_advantages(rollouts.rewards_by_group, algo, focal)
            if (message := signal_check.add(step, group_metrics)) is not None:
                if t.stop_on_zero_advantage:
                    raise TrainingError(f"{message}; stopping (train.stop_on_zero_advantage)")
                progress.warn(f"warning: {message} (train.stop_on_zero_advantage=true stops)")

            # ---- update: clipped policy-gradient steps
            loss_metrics, skipped = update(
                policy, ref_policy, optimizer, rollouts, advantages.flatten(), algo, t,
                seed=cfg.seed, it=it,
            )  # fmt: skip
            scheduler.step()
            state.iteration, state.skipped = step, state.skipped + skipped
            bad_in_row = bad_in_row + 1 if skipped else 0
            t_iter = time.time() - t0

            # ---- log
            train_scalars = {
                **rollout_metrics(rollouts),
                **{k: float(v) for k, v in group_metrics.items()},
                **loss_metrics,
                "lr": scheduler.get_last_lr()[0],
                "skipped_steps": float(state.skipped),
                "sampling_rounds": float(rounds),
                "tokens_per_s": float(rollouts.mask.sum()) / t_rollout,
                "rollouts_per_s": len(rollouts.reward) / t_rollout,
            }
            scalars = {
                **{f"train/{k}": v for k, v in train_scalars.items()},
                **{f"routes/{k}": v for k, v in routes.items()},
                "time/rollout_s": t_rollout,
                "time/update_s": t_iter - t_rollout,
                "time/iteration_s": t_iter,
                "time/elapsed_s": state.elapsed(),
            }
            for k, v in scalars.items():
                writer.add_scalar(k, v, step)
            if bad_in_row >= t.max_bad_steps:
                raise TrainingError(
                    f"{bad_in_row} iterations in a row had a non-finite loss or gradient "
                    f"(iteration {step}); stopping. Last good checkpoint: "
                    f"{state.ckpts.latest() or 'none'}"
                )
            if not finite(policy.state_dict()):  # a finite step can still overflow
                raise TrainingError(
                    f"the parameters became non-finite at iteration {step} (lower train.lr?); "
                    f"stopping. Last good checkpoint: {state.ckpts.latest() or 'none'}"
                )

            # ---- evaluate, checkpoint
            last, scalars["time/eval_s"] = step == total, 0.0
            if not last and t.eval_every and step % t.eval_every == 0:
                t0 = time.time()
                every = cfg.eval.images_every
                images = cfg.eval.images if every is None or step % every == 0 else 0
                results = evaluate_all(
                    policy, sets, device, cfg.eval.n_during, step, out / "eval", images,
                    maze=cfg.maze, eval=cfg.eval,
                )  # fmt: skip
                flat = log_eval(writer, results, base_eval.results, step, images)
                eval_pass1 = flat.get(f"eval/{sets[0].name}/pass@1", eval_pass1)
                scalars["time/eval_s"] = time.time() - t0
                writer.add_scalar("time/eval_s", scalars["time/eval_s"], step)
            scalar_log.add(step, scalars)  # time/eval_s: a mean per iteration in train.csv
            if last or stop.signum is not None or step % t.checkpoint_every == 0:
                scalar_log.flush(step)  # the rows up to a checkpoint are final
                path = state.save()
            progress.update(
                step,
                train_scalars["reward_mean"],
                eval_pass1,
                train_scalars["frac_zero_adv_groups"],
                train_scalars["focal_weight_mean"],
                t_iter,
            )
            if stop.signum is not None:
                writer.flush()
                logger.warning(
                    f"stopped by {signal.Signals(stop.signum).name} after iteration "
                    f"{step}/{total}; checkpoint {path}; run the same command again to resume"
                )
                raise SystemExit(128 + stop.signum)
    finally:
        stop.restore()
        progress.close()

    # ---- final evaluation at eval.n samples per maze, metrics.json, hparams
    t0 = time.time()
    results = evaluate_all(
        policy, sets, device, cfg.eval.n, total, out / "eval", cfg.eval.images,
        maze=cfg.maze, eval=cfg.eval,
    )  # fmt: skip
    final = log_eval(writer, results, base_eval.results, total, cfg.eval.images)
    writer.add_scalar("time/eval_s", time.time() - t0, total)
    hparams = run_hparams(cfg)
    write_hparams(writer, hparams, hparams_metrics(names, cfg.eval.n, cfg.eval.exact_ks), cfg)
    writer.close()
    metrics = {
        "final": final,
        "base": base_eval.scalars(),
        "train": train_scalars,
        "iterations": total,
        "wall_time_s": state.elapsed(),
        "threads": threads,
        "device": str(device),
        **cpu,
        "code": code,
        "base_model": base_origin,
        "forked": state.forked,
        "hparams": hparams,
    }
    write_json_atomic(metrics, out / "metrics.json")
    logger.info(f"done in {time.time() - job_start:.0f}s (training {state.elapsed():.0f}s)")
    logger.info(final_summary(final, metrics["base"], headline_ks(cfg.eval.n)))
    return final
