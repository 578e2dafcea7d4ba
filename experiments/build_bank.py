"""Train the bank's base models and register them in `mazerl/bank/index.json`.

Bank model k is the base model of `base.seed=k` with every other maze, policy and base setting
at its default (the GRU on 5x5-cell Prim mazes, SFT with early stop at probe pass@1 0.3, the
first 1,024 mazes of each evaluation set held out): the base model of the main job (k = 0) and
of the study presets (k = the run seed). Each is trained in its own process with one torch
thread (`base.bank=off`, so nothing is read from an older bank), evaluated exactly on the
study sets (1,024 ID, 512 ood_large, 512 ood_dfs mazes; pass@1, pass@256, pass@2048), copied
into `mazerl/bank/` and listed with its cache key, sha256, CPU, torch and commit. Seeds the
bank already holds are skipped, so the bank only grows.

    python experiments/build_bank.py --models 12 --jobs 2     # about 2 minutes a model
"""

import argparse
import json
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir

from mazerl.apps.schema import register_configs, typed
from mazerl.core.config import CONF_DIR
from mazerl.core.device import cpu_info, setup
from mazerl.core.provenance import code_identity
from mazerl.envs.spec import MazeTask
from mazerl.eval.runner import BaseEvaluation, cached_sets, held_out_keys
from mazerl.train.bank import BANK_DIR, INDEX, bank_index, sha256
from mazerl.train.sft import obtain_base

EXACT = ("exact_pass@1", "exact_pass@256", "exact_pass@2048")


def train_one(seed: int, cache: str) -> dict:
    """Train (or take from `cache`) base model `seed`, evaluate it, copy it into the bank;
    its index entry."""
    register_configs()
    overrides = ["experiment=maze_long", f"seed={seed}", "base.bank=off", "threads=1"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = typed(compose("config", overrides=[*overrides, f"base.cache_dir={cache}"]))
    device = torch.device("cpu")
    setup(seed, 1, device)
    root = Path(cache)
    task = MazeTask.of(cfg.maze)
    sets = cached_sets(task.spec, cfg.eval, root / "eval_sets")
    held_out = held_out_keys(task.spec, cfg.eval, cfg.base.held_out, root / "eval_sets")
    policy, folder, origin = obtain_base(
        task, held_out, device, print, policy=cfg.policy, base=cfg.base
    )
    results = BaseEvaluation.load_or_run(
        folder, policy, sets, device, print, task=task, eval=cfg.eval, weights=origin["sha256"]
    ).results
    name = f"gru5-prim-s{seed}"
    shutil.copyfile(folder / "base.pt", BANK_DIR / f"{name}.pt")
    sft = torch.load(folder / "base.pt", weights_only=False)["sft"]
    return {
        "name": name,
        "seed": seed,
        "key": folder.name,
        "file": f"{name}.pt",
        "sha256": sha256(BANK_DIR / f"{name}.pt"),
        "made_by": {**cpu_info(), "threads": 1, "torch": torch.__version__, **code_identity()},
        "sft_steps": sft["steps"],
        "exact": {s: {k: results[s].to_json()[k] for k in EXACT} for s in results},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, required=True, help="bank models 0..models-1")
    ap.add_argument("--jobs", type=int, default=2, help="processes (one torch thread each)")
    args = ap.parse_args()
    BANK_DIR.mkdir(exist_ok=True)
    have = {e["seed"] for e in bank_index().values()}
    todo = [k for k in range(args.models) if k not in have]
    with tempfile.TemporaryDirectory() as cache, ProcessPoolExecutor(args.jobs) as pool:
        entries = list(pool.map(train_one, todo, [cache] * len(todo)))
    models = sorted([*bank_index().values(), *entries], key=lambda e: e["seed"])
    doc = {
        "about": "mazerl's bank of base models; see experiments/build_bank.py and "
        "docs/guide/base-model.md",
        "evaluation": "exact pass@k before RL on maze_long's sets: 1,024 ID, 512 ood_large, "
        "512 ood_dfs mazes (eval.seed 1234)",
        "models": models,
    }
    (BANK_DIR / INDEX).write_text(json.dumps(doc, indent=1) + "\n")
    for e in entries:
        print(e["name"], e["key"], {s: round(v["exact_pass@1"], 4) for s, v in e["exact"].items()})


if __name__ == "__main__":
    main()
