"""The base policy every RL run starts from: supervised training on solver demonstrations.

As in the paper (SFT from scratch; AdamW, lr 5e-4, batch 32, betas (0.9, 0.95), weight decay
0.01, grad clip 1.0; loss on response tokens only), with two options for a middling base:
a noisy demonstrator (each step is, with probability `noise`, a random other move that ends
the demonstration) and stopping once a probe pass@1 reaches `target_pass1`.

The result is cached under `cache_root(base.cache_dir)/<hash of the maze, policy and base
configs>/` (`mazerl.core.cache`), so every
run of a sweep starts from the same base model; a file lock makes parallel jobs wait for the
first one instead of training it twice. Its evaluation is stored beside it, once per
evaluation config.
"""

import copy
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from mazerl.core import checkpoint
from mazerl.core.cache import cache_root
from mazerl.core.config import to_container
from mazerl.core.errors import CheckpointError, ConfigError
from mazerl.core.files import config_hash, locked
from mazerl.core.streams import STREAM_PROBE, STREAM_SFT, rng, torch_generator
from mazerl.envs.maze import Maze
from mazerl.envs.spec import MazeSpec, MazeTask, base_spec, sample_mazes
from mazerl.policy import PolicyConfig, build_policy
from mazerl.policy.base import SequencePolicy
from mazerl.policy.tokens import encode
from mazerl.rollout import generate, teacher_forced
from mazerl.train.bank import bank_file, sha256
from mazerl.train.config import BaseConfig


def demonstrations(
    mazes: Sequence[Maze], noise: float, gen: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Solver demonstrations: actions `[B, T]`, cells before each action `[B, T, 2]`, mask.

    The solver follows the maze's solution (route 0); at each step, with probability `noise`,
    it makes a random wrong move instead, which ends its demonstration."""
    rows = []
    for m in mazes:
        moves = list(m.solution)
        if noise > 0:
            wrong = np.flatnonzero(gen.random(len(moves)) < noise)
            if len(wrong):
                t = int(wrong[0])
                moves = [*moves[:t], int((moves[t] + gen.integers(1, 4)) % 4)]
        rows.append(moves)
    return teacher_forced(mazes, rows, 1)


def probe_pass1(policy, mazes, samples, allow_revisits, device, seed) -> float:
    r = generate(
        policy,
        mazes,
        samples,
        allow_revisits=allow_revisits,
        device=device,
        generator=torch_generator(device, seed, STREAM_PROBE),
    )
    return float(r.reward.mean())


def train_base(
    policy: SequencePolicy,
    spec: MazeSpec,
    base: BaseConfig,
    *,
    allow_revisits: bool,
    excluded: set[bytes],
    device: torch.device,
    log: Callable[[str], None] = print,
) -> dict:
    """Supervised training of `policy` in place; returns what happened (steps, probe curve)."""
    opt = torch.optim.AdamW(policy.parameters(), lr=base.lr, betas=(0.9, 0.95), weight_decay=0.01)
    probe = sample_mazes(spec, base.probe_mazes, excluded, base.seed, STREAM_PROBE)
    if spec.collection is None:  # generated: the probe mazes are never demonstrated
        excluded = excluded | {m.key for m in probe}
    curve, start, step = [], time.time(), 0
    for step in range(1, base.steps + 1):
        policy.train()
        mazes = sample_mazes(spec, base.batch_size, excluded, base.seed, STREAM_SFT, step)
        actions, positions, mask = demonstrations(mazes, base.noise, rng(base.seed, step))
        logits = policy(encode(mazes, device), 1, actions.to(device), positions.to(device))
        nll = F.cross_entropy(logits.flatten(0, 1), actions.to(device).flatten(), reduction="none")
        loss = (nll * mask.to(device).flatten()).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        if step % base.probe_every == 0 or step == base.steps:
            policy.eval()
            p1 = probe_pass1(policy, probe, base.probe_samples, allow_revisits, device, base.seed)
            curve.append({"step": step, "loss": loss.item(), "probe_pass@1": p1})
            log(
                f"base model: step {step}/{base.steps}  loss {loss.item():.3f}  "
                f"probe pass@1 {p1:.3f}"
            )
            if base.target_pass1 is not None and p1 >= base.target_pass1:
                break
    policy.eval()
    return {"steps": step, "seconds": time.time() - start, "curve": curve}


def load_base(
    path: str | Path, policy_cfg: dict, device: torch.device
) -> tuple[SequencePolicy, dict]:
    """A base checkpoint that must match the configured policy."""
    ckpt = checkpoint.load(path)
    if "policy_state" not in ckpt or "policy_config" not in ckpt:
        raise CheckpointError(f"checkpoint {path} is not a mazerl base model")
    if ckpt["policy_config"] != policy_cfg:
        diff = sorted(
            k
            for k in set(policy_cfg) | set(ckpt["policy_config"])
            if policy_cfg.get(k) != ckpt["policy_config"].get(k)
        )
        keys = ", ".join(f"policy.{k}" for k in diff)
        raise CheckpointError(f"checkpoint {path} holds a different policy (differs in {keys})")
    policy = build_policy(policy_cfg).to(device)
    policy.load_state_dict(ckpt["policy_state"])
    return policy.eval(), ckpt


def obtain_base(
    task: MazeTask,
    held_out: set[bytes],
    device: torch.device,
    log: Callable[[str], None] = print,
    *,
    policy: PolicyConfig,
    base: BaseConfig,
) -> tuple[SequencePolicy, Path, dict]:
    """The base policy of a run on the mazes of `task` (its spec, under its maze rule
    `allow_revisits`) and its `policy` and `base` config sections: `base.path`, the bank
    (`mazerl.train.bank`, per `base.bank`), the cache (under `cache_root(base.cache_dir)`),
    or trained now (and cached).
    It learns from the run's mazes with one route (`base_spec`: perfect mazes), also for braid
    runs, whose longer routes thereby start rare; `held_out` mazes (`held_out_keys`: evaluation
    mazes) are never shown.

    A layout run's base model learns from the layout collection itself (a layout has no
    generator to draw more mazes from), evaluation mazes of the collection included.

    The task's episodes (`MazeTask.episodes`: the spec's settings and `allow_revisits`) less
    the RL-only routes (`routes`, `route_lengths`), the `policy` and `base` sections, and a
    layout's mazes, key the cache (and the bank). Returns the base policy, the folder
    where its evaluations are stored, and where the weights came from: `{"source": bank |
    cache | trained | path, "key", "sha256"}` (the cache key and the checkpoint file's sha256:
    runs that started from the same base model show the same sha256; `base.path` adds
    `"path"`, the file)."""
    parts = {
        "maze": task.episodes(),
        "policy": to_container(policy),
        "base": to_container(base),
    }
    spec, pool, excluded = base_spec(task.spec), [], held_out
    if spec.collection is not None:
        pool = sorted({m.key for m in spec.collection})
        excluded = excluded - set(pool)
    if base.path:
        try:
            model, _ = load_base(base.path, parts["policy"], device)
        except CheckpointError as e:
            raise CheckpointError(f"base.path: {e}") from None
        path = Path(base.path).expanduser().resolve()
        origin = {"source": "path", "key": None, "sha256": sha256(path), "path": str(path)}
        return model, path.parent, origin
    not_key = ("path", "cache_dir", "bank", "held_out")  # held_out acts through `excluded`
    key_base = {k: v for k, v in parts["base"].items() if k not in not_key}
    # RL-only settings: the base model learns from perfect mazes of the same size
    rl_only = ("routes", "route_lengths")
    key_maze = {k: v for k, v in parts["maze"].items() if k not in rl_only}
    layout_key = [pool] if pool else []  # generated runs keep their cache keys
    key = config_hash(key_maze, parts["policy"], key_base, sorted(excluded), *layout_key)
    folder = cache_root(base.cache_dir) / key
    banked = bank_file(key, base.bank)
    if banked is not None:  # the weights from the bank; its evaluations go to the cache folder
        path, digest = banked
        log(f"base model: bank model {path.stem} (key {key})")
        folder.mkdir(parents=True, exist_ok=True)
        origin = {"source": "bank", "key": key, "sha256": digest}
        return load_base(path, parts["policy"], device)[0], folder, origin
    ckpt_path = folder / "base.pt"
    with locked(folder.parent / f".{folder.name}.lock", log):
        if ckpt_path.exists():
            log(f"base model: using the cached {ckpt_path}")
            try:
                model, _ = load_base(ckpt_path, parts["policy"], device)
            except CheckpointError as e:
                raise CheckpointError(
                    f"{e}. The cached base model is damaged: delete the folder {folder} "
                    "and run the same command again to rebuild it"
                ) from None
            return model, folder, {"source": "cache", "key": key, "sha256": sha256(ckpt_path)}
        torch.manual_seed(base.seed)
        model = build_policy(policy).to(device)
        log(
            f"base model: training {parts['policy']['name']} "
            f"({model.num_parameters():,} parameters) -> {ckpt_path}"
        )
        try:
            info = train_base(
                model,
                spec,
                base,
                allow_revisits=task.allow_revisits,
                excluded=excluded,
                device=device,
                log=log,
            )
        except ConfigError as e:  # too few mazes left: the held-out ones may be the cause
            raise ConfigError(
                f"{e}, or lower base.held_out={base.held_out} (the base model never sees the "
                "first base.held_out mazes of each evaluation set)"
            ) from None
        checkpoint.save_atomic(
            {
                "policy_state": copy.deepcopy(model.state_dict()),
                "policy_config": parts["policy"],
                "config": parts,
                "sft": info,
            },
            ckpt_path,
        )
    return model, folder, {"source": "trained", "key": key, "sha256": sha256(ckpt_path)}
