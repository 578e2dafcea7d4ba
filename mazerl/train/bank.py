"""The bank: base models trained once and shipped inside mazerl, so that a run starts from the
same weights on every machine (a base model trained here differs by CPU kind and thread count).

The bank is a pre-filled cache. `mazerl/bank/index.json` maps a base model's cache key (the
key `obtain_base` computes from the maze, policy and base settings and the held-out mazes) to
a file in `mazerl/bank/`, its sha256, what made it (CPU, torch, commit) and its exact pass@k
before RL. A run whose key is in the index loads that file (`base.bank=auto`); any other base
setting trains as before. Bank model k is `base.seed=k` with every other base setting at its
default (`experiments/build_bank.py` trains and registers them).
"""

import hashlib
import json
from pathlib import Path

from mazerl.core.errors import CheckpointError, ConfigError

BANK_DIR = Path(__file__).resolve().parent.parent / "bank"
INDEX = "index.json"


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes.

    Args:
        path: the file.

    Returns:
        64 hex digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def bank_index(folder: Path = BANK_DIR) -> dict[str, dict]:
    """The bank's index.

    Args:
        folder: the bank's folder.

    Returns:
        `{cache key: entry}`; empty when the folder has no index.
    """
    path = folder / INDEX
    if not path.is_file():
        return {}
    return {e["key"]: e for e in json.loads(path.read_text())["models"]}


def bank_file(key: str, mode: str, folder: Path = BANK_DIR) -> tuple[Path, str] | None:
    """The bank file of a base model, checked against its recorded sha256.

    Args:
        key: the base model's cache key.
        mode: `base.bank`: `auto`, `off` or `require`.
        folder: the bank's folder.

    Returns:
        The file and its sha256; None when the bank has no such model (or `mode` is `off`).

    Raises:
        ConfigError: `mode=require` and a miss: the run's base settings are not those of any
            bank model.
        CheckpointError: the file is missing or does not match its sha256.
    """
    if mode == "off":
        return None
    entry = bank_index(folder).get(key)
    if entry is None:
        if mode == "require":
            raise ConfigError(
                f"base.bank=require: no bank model has this run's base settings (cache key "
                f"{key}); the bank holds base.seed 0-{len(bank_index(folder)) - 1} of the "
                "default maze, policy, base and held-out settings (docs/guide/base-model.md)"
            )
        return None
    path = folder / entry["file"]
    if not path.is_file() or sha256(path) != entry["sha256"]:
        raise CheckpointError(
            f"bank file {path} is missing or does not match its sha256 in {folder / INDEX}; "
            "restore it (git checkout mazerl/bank) or run with base.bank=off"
        )
    return path, entry["sha256"]
