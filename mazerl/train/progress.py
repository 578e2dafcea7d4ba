"""What a run shows while it trains: a tqdm bar on a terminal, plain lines otherwise, and a
clean stop on SIGTERM/SIGINT.

Messages go through Python logging (logger `mazerl`): under Hydra the job-logging config
(`conf/hydra/job_logging/mazerl.yaml`) sends them to the console and to `<run dir>/train.log`,
so the log holds what the console showed. While the bar is shown, console handlers write
above it (`tqdm.contrib.logging.logging_redirect_tqdm`); the file gets every line.
"""

import contextlib
import logging
import signal
import sys
import time

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

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


def config_summary(cfg, out, device, threads: int) -> str:
    """One line naming the run: method, group size, mazes, policy, length, where it writes."""
    t, m = cfg.train, cfg.maze
    return (
        f"run {out}: {cfg.algo.name}, focal gamma {cfg.focal.gamma:g}, {t.num_prompts} mazes x "
        f"{t.group_size} rollouts, {m.size}x{m.size} {m.generator} mazes, policy "
        f"{cfg.policy.name}, seed {cfg.seed}, {device} with {threads} threads"
    )


def final_summary(final: dict, base: dict, ks: list[int]) -> str:
    """Final pass@k per evaluation set, base -> trained, at the headline k."""
    sets = dict.fromkeys(key.split("/")[1] for key in final if key.startswith("eval/"))
    lines = ["final pass@k (base -> trained):"]
    for s in sets:
        pairs = [
            f"pass@{k} {base[key]:.3f} -> {final[key]:.3f}"
            for k in ks
            if (key := f"eval/{s}/pass@{k}") in final and key in base
        ]
        lines.append(f"  {s}: " + ", ".join(pairs))
    return "\n".join(lines)


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
        self.bar.update(1)
        self.bar.set_postfix(reward=f"{reward:.3f}", pass1=f"{pass1:.3f}", g=f"{focal:.2f}")
        if self.mode != "off" and (step % self.log_every == 0 or step == self.total):
            eta = (time.time() - self.t0) / (step - self.start) * (self.total - step)
            self.log(
                f"iteration {step}/{self.total}  reward {reward:.3f}  eval pass@1 {pass1:.3f}  "
                f"zero-adv groups {zero_adv:.2f}  focal g {focal:.2f}  {seconds:.2f}s/it  "
                f"eta {eta:.0f}s"
            )

    def close(self) -> None:
        self.redirect.close()
        if self.bar is not None:
            self.bar.close()
