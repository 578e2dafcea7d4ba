"""What a run shows while it trains: a tqdm bar on a terminal, plain lines otherwise, and a
clean stop on SIGTERM/SIGINT."""

import signal
import sys
import time

from tqdm import tqdm


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


class Progress:
    """Iteration progress from `start` to `total`: a bar (`bar`), a line every `log_every`
    iterations (`lines`) or nothing (`off`). `log` prints without breaking the bar."""

    def __init__(self, mode: str, log_every: int) -> None:
        self.mode, self.log_every = mode, log_every
        self.start = self.total = 0
        self.bar: tqdm | None = None
        self.t0 = time.time()

    def begin(self, start: int, total: int) -> None:
        """Show iterations `start` (already done) to `total`."""
        self.start, self.total, self.t0 = start, total, time.time()
        self.bar = tqdm(
            total=total, initial=start, disable=self.mode != "bar", desc="train", dynamic_ncols=True
        )

    def log(self, message: str) -> None:
        (tqdm.write if self.mode == "bar" else print)(message)

    def update(
        self, step: int, reward: float, pass1: float, zero_adv: float, focal: float, seconds: float
    ) -> None:
        self.bar.update(1)
        self.bar.set_postfix(reward=f"{reward:.3f}", pass1=f"{pass1:.3f}", g=f"{focal:.2f}")
        if self.mode == "lines" and (step % self.log_every == 0 or step == self.total):
            eta = (time.time() - self.t0) / (step - self.start) * (self.total - step)
            print(
                f"iteration {step}/{self.total}  reward {reward:.3f}  eval pass@1 {pass1:.3f}  "
                f"zero-adv groups {zero_adv:.2f}  {seconds:.2f}s/it  eta {eta:.0f}s",
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
