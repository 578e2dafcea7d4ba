"""What a run shows while it trains: a tqdm bar on a terminal, plain lines otherwise, and a
clean stop on SIGTERM/SIGINT.

Messages go through Python logging (logger `mazerl`): under Hydra the job-logging config
(`conf/hydra/job_logging/mazerl.yaml`) sends them to the console and to `<run dir>/train.log`,
so the log holds what the console showed. While the bar is shown, console handlers write
above it (`tqdm.contrib.logging.logging_redirect_tqdm`); the file gets every line.
"""

import contextlib
import logging
import shlex
import signal
import sys
import time
from pathlib import Path

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from mazerl.algos import AlgoConfig, FocalConfig
from mazerl.core.provenance import short_code
from mazerl.envs.spec import MazeTask
from mazerl.eval.metric_names import Metric

logger = logging.getLogger("mazerl")


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


def progress_mode(logger_cfg) -> str:
    """auto: a bar on a terminal, log lines otherwise."""
    if logger_cfg.progress == "auto":
        return "bar" if sys.stderr.isatty() else "lines"
    return logger_cfg.progress


def config_summary(
    out,
    device,
    threads: int,
    mazes: str,
    cpu: dict[str, str],
    code: dict,
    *,
    algo: AlgoConfig,
    focal: FocalConfig,
    train,
    task: MazeTask,
    policy,
    seed: int,
) -> str:
    """One line naming the run: method (`algo.name`, `focal.gamma`), group size and prompts
    (`train`), the training mazes (`mazes`: what the maze spec says it draws; the `task`'s
    routes and pool size), `policy.name`, `seed`, where it runs (the CPU's model and vector
    capability), the code it runs (`code`: its commit, `short_code`) and where it writes."""
    t = train
    extra = (f", {task.spec.routes} routes" if task.braid else "") + (
        f", a pool of {task.pool_size}" if task.pool_size else ""
    )
    return (
        f"run {out}: {algo.name}, focal gamma {focal.gamma:g}, {t.num_prompts} mazes x "
        f"{t.group_size} rollouts, {mazes}{extra}, policy {policy.name}, seed {seed}, "
        f"{device} with {threads} threads ({cpu['cpu']}, {cpu['cpu_capability']}), "
        f"code {short_code(code)}"
    )


def final_summary(final: dict, base: dict, ks: list[int]) -> str:
    """Final pass@k per evaluation set, base -> trained, at the headline k."""
    metrics = [m for key in final if (m := Metric.parse(key)) and m.source == "eval"]
    lines = ["final pass@k (base -> trained):"]
    for s in dict.fromkeys(m.set for m in metrics):
        pairs = [
            f"pass@{k} {base[key]:.3f} -> {final[key]:.3f}"
            for k in ks
            if (key := Metric("pass", s, k).name) in final and key in base
        ]
        lines.append(f"  {s}: " + ", ".join(pairs))
    return "\n".join(lines)


def where_to_look(out: Path, logdir: Path) -> list[str]:
    """A run's last two lines: its folder `out` and the TensorBoard command that opens
    `logdir` (the run's folder, or a sweep's), each relative to the working directory when
    inside it. Two log records, so that a sweep's console prefixes each with its job."""

    def shown(path: Path) -> str:
        path = Path(path).resolve()
        with contextlib.suppress(ValueError):
            path = path.relative_to(Path.cwd().resolve())
        return shlex.quote(str(path))

    return [
        f"run folder: {shown(out)} (metrics.json, train.log, TensorBoard events in tb/)",
        f"open it in TensorBoard: tensorboard --logdir {shown(logdir)}",
    ]


class SignalCheck:
    """Can this run learn? A fresh run whose first `NO_SIGNAL_ITERATIONS` iterations (all of
    them, in a shorter run) have no group with a non-zero advantage has a zero gradient: its
    base model solves nothing (or everything) at this group size."""

    ITERATIONS = 10

    def __init__(self, start: int, total: int, base_pass1: str) -> None:
        self.window = min(self.ITERATIONS, total) if start == 0 else 0
        self.base_pass1, self.equal = base_pass1, []  # base_pass1: e.g. "id pass@1 0.000"

    def add(self, step: int, metrics: dict) -> str | None:
        """Record iteration `step`'s group metrics; after the window's last iteration, a
        message saying why the run cannot learn and what to change, if no group had a signal."""
        if step > self.window:
            return None
        if metrics["frac_zero_adv_groups"] == 1:
            wrong, right = metrics["frac_all_wrong"], metrics["frac_all_correct"]
            self.equal.append((float(wrong), float(right)))
        if step < self.window or len(self.equal) < self.window:
            return None
        wrong, right = (sum(x) for x in zip(*self.equal, strict=True))
        solves = "nothing" if wrong >= right else "every maze"
        fix = (
            "raise base.steps or train.group_size, or lower maze.size"
            if wrong >= right
            else "raise maze.size or lower base.steps"
        )
        return (
            f"no group of the first {step} iterations had a non-zero advantage: the base model "
            f"solves {solves} ({self.base_pass1}), so RL cannot learn; {fix}"
        )


class Progress:
    """Iteration progress from `start` to `total`: a bar and a logged line every `log_every`
    iterations (`bar`), the lines only (`lines`) or nothing (`off`). `log` logs a message
    without breaking the bar."""

    def __init__(self, mode: str, log_every: int) -> None:
        self.mode, self.log_every = mode, log_every
        self.start = self.total = 0
        self.bar: tqdm | None = None
        self.redirect = contextlib.ExitStack()
        self.t0 = time.time()

    def begin(self, start: int, total: int) -> None:
        """Show iterations `start` (already done) to `total`."""
        self.start, self.total, self.t0 = start, total, time.time()
        self.bar = tqdm(
            total=total, initial=start, disable=self.mode != "bar", desc="train", dynamic_ncols=True
        )
        if self.mode == "bar":
            self.redirect.enter_context(logging_redirect_tqdm())

    def log(self, message: str, level: int = logging.INFO) -> None:
        logger.log(level, message)

    def warn(self, message: str) -> None:
        """A warning: on stderr and in the run's log."""
        logger.warning(message)

    def update(
        self, step: int, reward: float, pass1: float, zero_adv: float, focal: float, seconds: float
    ) -> None:
        """Show an iteration; the focal weight (a mean over groups with a non-zero advantage)
        shows as n/a when there were none (`zero_adv` 1)."""
        g = "n/a" if zero_adv == 1 else f"{focal:.2f}"
        self.bar.update(1)
        self.bar.set_postfix(reward=f"{reward:.3f}", pass1=f"{pass1:.3f}", g=g)
        if self.mode != "off" and (step % self.log_every == 0 or step == self.total):
            eta = (time.time() - self.t0) / (step - self.start) * (self.total - step)
            self.log(
                f"iteration {step}/{self.total}  reward {reward:.3f}  eval pass@1 {pass1:.3f}  "
                f"zero-adv groups {zero_adv:.2f}  focal g {g}  {seconds:.2f}s/it  "
                f"eta {eta:.0f}s"
            )

    def close(self) -> None:
        self.redirect.close()
        if self.bar is not None:
            self.bar.close()
