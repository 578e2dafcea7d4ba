"""Atomic checkpoint files: write to a temporary file, fsync, rename. A kill at any moment
leaves the previous checkpoint intact."""

import os
import re
from pathlib import Path

import torch

from mazerl.core.errors import CheckpointError

PATTERN = re.compile(r"^ckpt_(\d{7})\.pt$")


def save_atomic(obj, path: Path) -> None:
    """`torch.save` to `path` atomically (tmp file in the same folder, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load(path: str | Path, map_location="cpu") -> dict:
    """Load a checkpoint, or raise `CheckpointError` naming the path."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        return torch.load(path, map_location=map_location, weights_only=False)
    except Exception as e:  # a truncated or foreign file
        raise CheckpointError(f"checkpoint {path} cannot be read: {e}") from None


class CheckpointDir:
    """`ckpt_<iteration>.pt` files in one folder, keeping the newest `keep`."""

    def __init__(self, folder: Path, keep: int) -> None:
        self.folder, self.keep = Path(folder), keep

    def paths(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        found = [p for p in self.folder.iterdir() if PATTERN.match(p.name)]
        return sorted(found, key=lambda p: int(PATTERN.match(p.name).group(1)))

    def latest(self) -> Path | None:
        paths = self.paths()
        return paths[-1] if paths else None

    def save(self, state: dict, iteration: int) -> Path:
        path = self.folder / f"ckpt_{iteration:07d}.pt"
        save_atomic(state, path)
        for old in self.paths()[: -self.keep]:
            old.unlink(missing_ok=True)
        return path
