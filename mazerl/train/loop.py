"""`train(cfg)`: RLVR on mazes with group-based objectives: the I/O around the training step.

One iteration is `mazerl.train.step.TrainStep`: draw `num_prompts` mazes, sample `group_size`
rollouts of each, score them with the batched stepper, compute group advantages times the focal
weight g = (1 - mu_hat)^gamma, then `ppo_epochs` x `minibatches` clipped updates against the
sampling-time log-probs. This module does the rest: the run dir's lock, resume and fork, the
base model, logging, evaluation, checkpoints and signals.
Outputs (in the run dir `out`): `tb/` TensorBoard events, `checkpoints/`, `eval/*.json`,
`train.csv` (training scalars every `log_every` iterations), `metrics.json` (written last: its
presence marks a finished run; `code`: the version and git commit of the code, `code_identity`,
as the job that finished the run found it at its start; `base_model`: the base weights' source,
cache key and sha256; `forked`: the checkpoint a `train.fork` run started from, its iteration
and the settings that differ, else null), and `.run.lock` while a job trains it
(one job per run dir).
"""

import contextlib
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from omegaconf import OmegaConf
from torch.utils.tensorboard import SummaryWriter

from mazerl.core.cache import cache_root
from mazerl.core.config import to_container
from mazerl.core.device import cpu_info, select_device, setup
from mazerl.core.errors import UserError
from mazerl.core.files import LockHeld, locked, read_metrics, write_json_atomic
from mazerl.core.provenance import code_identity
from mazerl.envs.spec import MazeTask
from mazerl.eval.dashboard import (
    headline_ks,
    hparams_metrics,
    run_hparams,
    train_layout,
    write_hparams,
)
from mazerl.eval.evaluate import excluded_keys
from mazerl.eval.metric_names import Metric
from mazerl.eval.passk import sampled_ks
from mazerl.eval.runner import (
    BaseEvaluation,
    cached_sets,
    evaluate_all,
    held_out_keys,
    last_saved,
    log_eval,
)
from mazerl.train.collect import TRAIN_BLOCK, TrainingMazes, rollout_metrics
from mazerl.train.config import Config
from mazerl.train.progress import (
    Progress,
    SignalCheck,
    StopSignal,
    config_summary,
    final_summary,
    logger,
    progress_mode,
)
from mazerl.train.run_state import RunState, finite, start_fork
from mazerl.train.scalar_log import FILE as SCALARS_FILE
from mazerl.train.scalar_log import ScalarLog
from mazerl.train.schedule import iterations_for
from mazerl.train.sft import obtain_base
from mazerl.train.step import Learner, StepStats, TrainStep


class TrainingError(UserError):
    """The run cannot go on (non-finite steps); the message says why and what is kept."""


def train(cfg: Config, out: Path) -> dict:
    """The whole run of the typed config `cfg` (`mazerl.apps.schema.typed`) in the folder
    `out`; returns the final metrics (also in `metrics.json`)."""
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


def _train(cfg: Config, out: Path, job_start: float) -> dict:
    """`train`'s body, run while this job holds the run dir's lock: set up, iterate, finish."""
    run = _set_up(cfg, out)
    writer = _open_events(run)
    train_scalars = _iterate(run, writer)
    return _finish(run, writer, train_scalars, job_start)


@dataclass
class Run:
    """A run's parts while its job trains it: the typed config and its plain dicts
    (`record`: the checkpoints' and the hparams'), the maze task, the run
    dir, the device, the console, the evaluation sets and their base-model results, the
    training mazes, the learner and its step, the checkpointed state, the iterations, and
    what `metrics.json` records of the machine and the code (`info`)."""

    cfg: Config
    record: dict
    task: MazeTask
    out: Path
    device: torch.device
    progress: Progress
    sets: list
    base_eval: BaseEvaluation
    base_origin: dict
    mazes: TrainingMazes
    learner: Learner
    step: TrainStep
    state: RunState
    total: int
    resumed: Path | None
    info: dict


def _set_up(cfg: Config, out: Path) -> Run:
    """Device and threads, the console summary, the evaluation sets, the training mazes, the
    base policy (SFT, cached) and its evaluation, the learner; resumed or forked."""
    device = select_device(cfg.device)
    threads = setup(cfg.seed, cfg.threads, device)
    progress = Progress(progress_mode(cfg.logger), cfg.train.log_every)
    cpu, code = cpu_info(), dict(code_identity())
    task = MazeTask.of(cfg.maze)  # the run's one maze source: sets, training mazes, base model
    spec = task.spec
    progress.log(
        config_summary(
            out, device, threads, spec.describe(), cpu, code, algo=cfg.algo,
            focal=cfg.focal, train=cfg.train, task=task, policy=cfg.policy, seed=cfg.seed,
        )
    )  # fmt: skip
    cache = cache_root(cfg.base.cache_dir)
    sets = cached_sets(spec, cfg.eval, cache / "eval_sets", progress.log)
    total = iterations_for(cfg.train)
    mazes = TrainingMazes(
        task, excluded_keys(sets), cfg.seed, progress.log,
        cache_dir=cache / "train_mazes", block=min(TRAIN_BLOCK, total),
    )  # fmt: skip
    held_out = held_out_keys(spec, cfg.eval, cfg.base.held_out, cache / "eval_sets", progress.log)
    base, base_dir, base_origin = obtain_base(
        task, held_out, device, progress.log, policy=cfg.policy, base=cfg.base
    )
    base_eval = BaseEvaluation.load_or_run(
        base_dir, base, sets, device, progress.log,
        task=task, eval=cfg.eval, weights=base_origin["sha256"],
    )  # fmt: skip
    learner = Learner.start(cfg.train, base, total)
    record = to_container(cfg)
    state = RunState(
        out / "checkpoints", cfg.train.keep_checkpoints, record, base_dir,
        base_origin, policy_state=learner.policy, optimizer=learner.optimizer,
        scheduler=learner.scheduler,
    )  # fmt: skip
    resumed = _resume_or_fork(cfg.train, state, out, total, device, progress)
    step = TrainStep.of(cfg, task, device)
    info = {"threads": threads, "device": str(device), **cpu, "code": code}
    return Run(
        cfg, record, task, out, device, progress, sets, base_eval, base_origin, mazes, learner,
        step, state, total, resumed, info,
    )  # fmt: skip


def _resume_or_fork(t, state: RunState, out: Path, total: int, device, progress) -> Path | None:
    """Resume from the run dir's last checkpoint (`train.resume`), else start from another
    run's (`train.fork`), else nothing; returns the checkpoint resumed from."""
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
    return resumed


def _open_events(run: Run) -> SummaryWriter:
    """The TensorBoard writer; events after the checkpoint (a crash before the next one) are
    purged and logged again. A new run's first events: the config, the layout, the base
    model's evaluation at step 0."""
    cfg, start = run.cfg, run.state.iteration
    writer = SummaryWriter(
        str(run.out / "tb"), purge_step=start + 1 if start else None,
        flush_secs=cfg.logger.flush_secs,
    )  # fmt: skip
    if run.resumed is None:  # new events: from scratch, or a fork's first launch
        writer.add_text("config", f"```yaml\n{OmegaConf.to_yaml(cfg)}\n```")
        names = [s.name for s in run.sets]
        e = cfg.eval  # the sampled k written at the final and the intermediate evaluations
        ks = sorted(set(sampled_ks(e.ks, e.n)) | set(sampled_ks(e.ks, e.n_during)))
        layout = train_layout(names, e.n, ks, e.exact_ks, run.task.braid)
        writer.add_custom_scalars(layout)
        results = run.base_eval.results
        log_eval(writer, results, results, 0, cfg.eval.images)
    return writer


def _iterate(run: Run, writer: SummaryWriter) -> dict[str, float]:
    """Iterations `state.iteration` ... `total`: the step, its scalars, the checks, the
    evaluations and checkpoints; a signal stops after a checkpoint. Returns the last
    iteration's `train/*` scalars."""
    t, state, progress = run.cfg.train, run.state, run.progress
    start, total, first = state.iteration, run.total, run.sets[0].name
    scalar_log = ScalarLog(run.out / SCALARS_FILE, t.log_every, start, total)
    stop, bad_in_row, train_scalars = StopSignal(), 0, {}
    pass1 = Metric("pass", first, 1)  # the first set's sampled pass@1: the progress line's
    eval_pass1 = run.base_eval.scalars().get(pass1.name, float("nan"))
    signal_check = SignalCheck(start, total, f"{first} pass@1 {eval_pass1:.3f}")
    if start:  # resumed: progress shows the last evaluation's pass@1, not the base model's
        last = last_saved(run.out / "eval", start).get(first)
        eval_pass1 = last.on_set(first).get(pass1, eval_pass1) if last else eval_pass1
    progress.begin(start, total)
    try:
        for it in range(start, total):
            step = it + 1
            run.mazes.prepare(t.num_prompts, it)  # a block of cached mazes: the step reads none
            t0 = time.time()
            batch = run.step.collect(run.learner, run.mazes, it)
            t_rollout = time.time() - t0
            stats = run.step.learn(run.learner, batch, it)
            t_iter = time.time() - t0
            _check_signal(signal_check.add(step, stats.group_metrics), t, progress)
            state.iteration, state.skipped = step, state.skipped + stats.skipped
            bad_in_row = bad_in_row + 1 if stats.skipped else 0
            train_scalars = _train_scalars(stats, state.skipped, t_rollout)
            scalars = _scalars(train_scalars, batch.routes, t_rollout, t_iter, state.elapsed())
            for k, v in scalars.items():
                writer.add_scalar(k, v, step)
            _check_finite(run, bad_in_row, step)
            scalars["time/eval_s"], eval_pass1 = _evaluate_during(run, writer, step, eval_pass1)
            scalar_log.add(step, scalars)  # time/eval_s: a mean per iteration in train.csv
            if step == total or stop.signum is not None or step % t.checkpoint_every == 0:
                scalar_log.flush(step)  # the rows up to a checkpoint are final
                path = state.save()
            progress.update(
                step, train_scalars["reward_mean"], eval_pass1,
                train_scalars["frac_zero_adv_groups"], train_scalars["focal_weight_mean"], t_iter,
            )  # fmt: skip
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
    return train_scalars


def _check_signal(message: str | None, t, progress: Progress) -> None:
    """Warn, or stop (`train.stop_on_zero_advantage`), when the run cannot learn."""
    if message is None:
        return
    if t.stop_on_zero_advantage:
        raise TrainingError(f"{message}; stopping (train.stop_on_zero_advantage)")
    progress.warn(f"warning: {message} (train.stop_on_zero_advantage=true stops)")


def _train_scalars(stats: StepStats, skipped: int, t_rollout: float) -> dict[str, float]:
    """The `train/*` scalars of an iteration (`skipped`: the run's total so far)."""
    rollouts = stats.batch.rollouts
    return {
        **rollout_metrics(rollouts),
        **stats.group_metrics,
        **stats.loss_metrics,
        "lr": stats.lr,
        "skipped_steps": float(skipped),
        "sampling_rounds": float(stats.batch.rounds),
        "tokens_per_s": float(rollouts.mask.sum()) / t_rollout,
        "rollouts_per_s": len(rollouts.reward) / t_rollout,
    }


def _scalars(train: dict, routes: dict, t_rollout: float, t_iter: float, elapsed: float) -> dict:
    """An iteration's TensorBoard scalars: `train/*`, `routes/*` and `time/*`."""
    return {
        **{f"train/{k}": v for k, v in train.items()},
        **{f"routes/{k}": v for k, v in routes.items()},
        "time/rollout_s": t_rollout,
        "time/update_s": t_iter - t_rollout,
        "time/iteration_s": t_iter,
        "time/elapsed_s": elapsed,
    }


def _check_finite(run: Run, bad_in_row: int, step: int) -> None:
    """Stop after `train.max_bad_steps` non-finite steps in a row, or non-finite weights."""
    last_good = run.state.ckpts.latest() or "none"
    if bad_in_row >= run.cfg.train.max_bad_steps:
        raise TrainingError(
            f"{bad_in_row} iterations in a row had a non-finite loss or gradient "
            f"(iteration {step}); stopping. Last good checkpoint: {last_good}"
        )
    if not finite(run.learner.policy.state_dict()):  # a finite step can still overflow
        raise TrainingError(
            f"the parameters became non-finite at iteration {step} (lower train.lr?); "
            f"stopping. Last good checkpoint: {last_good}"
        )


def _evaluate_during(
    run: Run, writer: SummaryWriter, step: int, eval_pass1: float
) -> tuple[float, float]:
    """The evaluation at `eval.n_during` samples every `train.eval_every` iterations (not at
    the last: `_finish` evaluates at `eval.n`); returns its seconds (0 when none) and the
    first set's pass@1 (the last known where none)."""
    cfg, first = run.cfg, run.sets[0].name
    every = cfg.train.eval_every
    if step == run.total or not every or step % every:
        return 0.0, eval_pass1
    t0 = time.time()
    images_every = cfg.eval.images_every
    images = cfg.eval.images if images_every is None or step % images_every == 0 else 0
    results = evaluate_all(
        run.learner.policy, run.sets, run.device, cfg.eval.n_during, step, run.out / "eval",
        images, allow_revisits=run.task.allow_revisits, eval=cfg.eval,
    )  # fmt: skip
    flat = log_eval(writer, results, run.base_eval.results, step, images)
    seconds = time.time() - t0
    writer.add_scalar("time/eval_s", seconds, step)
    return seconds, flat.get(Metric("pass", first, 1).name, eval_pass1)


def _finish(run: Run, writer: SummaryWriter, train_scalars: dict, job_start: float) -> dict:
    """The final evaluation at `eval.n` samples per maze, the hparams, `metrics.json` (last:
    it marks the run finished) and the console summary; returns the final metrics."""
    cfg, state, total = run.cfg, run.state, run.total
    names = [s.name for s in run.sets]
    t0 = time.time()
    results = evaluate_all(
        run.learner.policy, run.sets, run.device, cfg.eval.n, total, run.out / "eval",
        cfg.eval.images, allow_revisits=run.task.allow_revisits, eval=cfg.eval,
    )  # fmt: skip
    final = log_eval(writer, results, run.base_eval.results, total, cfg.eval.images)
    writer.add_scalar("time/eval_s", time.time() - t0, total)
    hparams = run_hparams(run.record)
    tags = hparams_metrics(names, cfg.eval.n, cfg.eval.exact_ks)
    write_hparams(writer, hparams, tags, run.record)
    writer.close()
    metrics = {
        "final": final,
        "base": run.base_eval.scalars(),
        "train": train_scalars,
        "iterations": total,
        "wall_time_s": state.elapsed(),
        **run.info,
        "base_model": run.base_origin,
        "forked": state.forked,
        "hparams": hparams,
    }
    write_json_atomic(metrics, run.out / "metrics.json")
    logger.info(f"done in {time.time() - job_start:.0f}s (training {state.elapsed():.0f}s)")
    logger.info(final_summary(final, metrics["base"], headline_ks(cfg.eval.n)))
    return final
