"""`train.csv`: a run's training scalars, small enough to commit beside `metrics.json`.

TensorBoard's event files hold every iteration but are not committed; this file keeps one row
per `train.log_every` iterations and one at every checkpoint (the mean of each scalar over the
iterations since the previous row), so a study's training curves, route masses and time split
can be redrawn from the repository alone. Columns: `step`, then the scalars' TensorBoard names
(`train/...`, `routes/...`, `time/...`). A resumed run drops the rows after its checkpoint and
goes on, so its file equals an uninterrupted run's (but for `time/...`), except after a stop
by a signal, whose checkpoint adds one row boundary.
"""

import csv
import io
import os
from pathlib import Path

import numpy as np

FILE = "train.csv"


class ScalarLog:
    """Window means of named scalars, appended to `path` every `every` iterations (and at
    `total`). Rows after `start` (a resumed run's checkpoint) are removed on opening."""

    def __init__(self, path: Path, every: int, start: int, total: int) -> None:
        self.path, self.every, self.total = path, every, total
        self.columns: list[str] | None = None
        self.window: dict[str, list[float]] = {}
        rows = _read(path)
        kept = [r for r in rows if int(r["step"]) <= start]
        if kept:
            self.columns = [c for c in kept[0] if c != "step"]
        if len(kept) != len(rows) or (rows and not start):
            self._rewrite(kept if start else [])

    def add(self, step: int, scalars: dict[str, float]) -> None:
        """Record iteration `step`'s scalars; writes a row at every `every`-th step and at
        the last."""
        for k, v in scalars.items():
            self.window.setdefault(k, []).append(float(v))
        if step % self.every == 0 or step == self.total:
            self.flush(step)

    def flush(self, step: int) -> None:
        """Write the row of the iterations up to `step` (the loop calls it before each
        checkpoint), if any were recorded since the last row."""
        if not self.window:
            return
        if self.columns is None:
            self.columns = list(self.window)
        means = {c: _g(np.mean(self.window.get(c, [np.nan]))) for c in self.columns}
        new = not self.path.exists()
        with open(self.path, "a", newline="") as f:
            writer = csv.DictWriter(
                f, ["step", *self.columns], extrasaction="ignore", lineterminator="\n"
            )
            if new:
                writer.writeheader()
            writer.writerow({"step": step} | means)
        self.window = {}

    def _rewrite(self, rows: list[dict]) -> None:
        if not rows:
            self.path.unlink(missing_ok=True)
            return
        buf = io.StringIO()
        writer = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        tmp = self.path.with_name(f".{self.path.name}.tmp{os.getpid()}")
        tmp.write_text(buf.getvalue())
        os.replace(tmp, self.path)


def _g(x: float) -> str:
    """Six significant digits: enough for a curve, a fifth of the file of `repr`."""
    return f"{x:.6g}"


def _read(path: Path) -> list[dict]:
    """Complete rows of `path` (a row cut short by a crash is dropped)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [r for r in rows if None not in r.values() and None not in r]
