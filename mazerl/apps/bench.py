"""`mazerl-bench`: throughput figures, each against a reference measured in the same process.

Prints one JSON line per figure, then a table. Figures:
  1. env_steps_per_s   batched stepper (and the VectorEnv on it) vs gymnasium SyncVectorEnv
  2. generation        rollout tokens/s per policy at 64x8 and 256x8, time outside the network
  3. token_cost        tokens/s of policy.step at max length 32, 64, 128 (O(1) per token?)
  4. iteration_ms      one iteration of the default job by phase (the trainer's own step)
  4b. phases           one iteration of each leaderboard cell (N = 32, N = 8) from bank
                       model 0 on one thread, by phase (`mazerl.core.phases`): draw the
                       training mazes, encode, generate, advantages, the update's forward,
                       backward and optimizer step: ms, share, and the FLOP rate of the
                       matmul-bound phases against the matmul peak (`--phases`: these only)
  5. flops             achieved FLOP/s of the policy in generation and update vs torch matmul
  6. smoke_sweep_s     wall time of `mazerl-train -m experiment=smoke` (joblib)
  7. skip_update       the trainer's update at 16 x 8 and 16 x 128 with 0, 50, 88%
                       zero-advantage groups, skipping them vs the full computation (ratio)
  8. sharing           generation at 128, 2,048, 16,384 rows, the policy once per distinct
                       unfinished prefix vs once per row
  9. help_s            whole-process `--help` of each Hydra app vs `python -c pass` and
                       `python -c "import torch"` (help loads no torch)
 10. long_run          (--long) iterations 1,001-1,500 of an N=8 sweep run, update skipping
                       off vs on (minutes)
 10. trl_vs_mazerl     the same GRPO steps (same mazes, N, steps) with TRL's GRPOTrainer on a
                       Qwen2 of mazerl's transformer shape and with mazerl's training step,
                       one after the other: rollouts/s of each and their ratio (needs
                       the extra mazerl[llm], else skipped with a note; `--trl`: this row only)
Every timing is the median of repeats with min and max. `--quick` runs in under a minute.

The policies, mazes and training settings are the shipped ones (the `mazerl-train` config,
composed with the figure's overrides), and every figure that trains calls the trainer's own
step (`mazerl.train.step.TrainStep`: collect, advantages, update): a variant (guided episodes,
update skipping off) is the step's argument or an override, never a copy of the step.

Generation is measured with the policy's full network running at every step but the action
taken from the maze's solution, so episodes have the length a good policy produces whatever
the weights (an untrained policy hits a wall after about two moves).
"""

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from mazerl.core import phases as phase_meter
from mazerl.core.cli import ArgumentParser
from mazerl.envs.batch import MazeBatch, MazeVectorEnv
from mazerl.envs.maze_env import MazeEnv
from mazerl.envs.spec import MazeSpec, MazeTask
from mazerl.eval.evaluate import excluded_keys
from mazerl.eval.runner import cached_sets, held_out_keys
from mazerl.policy import build_policy
from mazerl.policy.tokens import N_ACTIONS
from mazerl.rollout import generate
from mazerl.train.collect import TrainingMazes
from mazerl.train.config import Config
from mazerl.train.sft import obtain_base
from mazerl.train.step import Batch, Learner, TrainStep

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ("gru", "transformer")  # the shipped CPU policies (conf/policy/*.yaml)
CPU = torch.device("cpu")


@functools.cache
def composed(*overrides: str) -> Config:
    """The `mazerl-train` config with `overrides`, composed, validated and typed as the
    trainer's: the benchmark's policies, mazes and training settings are the shipped ones."""
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs, typed, validate
    from mazerl.core.config import CONF_DIR

    register_configs()
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    validate(cfg)
    return typed(cfg)


def policy_of(name: str):
    """A freshly initialised policy `name` as `conf/policy/<name>.yaml` configures it."""
    return build_policy(composed(f"policy={name}").policy)


def default_mazes(count: int, *seed: int) -> list:
    """`count` mazes of the default job's distribution (`conf/maze`), maze i drawn from
    `default_rng([*seed, i])`."""
    spec = MazeSpec.of(composed().maze)
    return [spec.sample(np.random.default_rng([*seed, i])) for i in range(count)]


class Drawn:
    """A training-maze source (as `TrainingMazes`) that gives mazes drawn beforehand, so a
    figure times the drawing apart from the step."""

    def __init__(self, mazes) -> None:
        self.mazes = mazes

    def draw(self, count: int, it: int, rounds: int) -> list:
        return self.mazes[:count]


def trainer(*overrides: str) -> tuple[Learner, TrainStep]:
    """The learner (an untrained policy, seed 0) and the training step of the `mazerl-train`
    config with `overrides`: the objects and calls the trainer itself uses."""
    cfg = composed(*overrides)
    torch.manual_seed(0)
    step = TrainStep.of(cfg, MazeTask.of(cfg.maze), CPU)
    return Learner.start(cfg.train, build_policy(cfg.policy), 1), step


def mixed(batch: Batch) -> Batch:
    """Every third rollout failed: mixed groups, so the update has work to do (a solution
    follower's rollouts all succeed)."""
    batch.rollouts.reward[::3] = 0.0
    return batch


def timed(fn, repeats: int) -> dict:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"median": float(np.median(times)), "min": min(times), "max": max(times)}


def solution_moves(mazes, group_size: int) -> torch.Tensor:
    """`[P * G, T + 1]` each row's maze solution then stop (action 4), T the longest."""
    longest = max(len(m.solution) for m in mazes)
    moves = torch.full((len(mazes), longest + 1), 4, dtype=torch.long)
    for i, m in enumerate(mazes):
        moves[i, : len(m.solution)] = torch.as_tensor(m.solution)
    return moves.repeat_interleave(group_size, 0)  # [P, T + 1] -> [P * G, T + 1]


class SolutionFollower(torch.nn.Module):
    """Runs the wrapped policy's `step` (timed) and takes the maze's solution move: move t of
    every row, then stop. It needs no position, so the engine runs as for the policy alone."""

    def __init__(self, policy, mazes, group_size: int) -> None:
        super().__init__()
        self.policy, self.inside, self.lookup, self.t = policy, 0.0, 0.0, 0
        self.sees_position = policy.sees_position
        self.moves = solution_moves(mazes, group_size)

    def prefill(self, prompts, group_size, max_len):
        t0 = time.perf_counter()
        state = self.policy.prefill(prompts, group_size, max_len)
        self.inside += time.perf_counter() - t0
        self.t = 0
        return state

    def step(self, state, prev, pos):
        t0 = time.perf_counter()
        logits, state = self.policy.step(state, prev, pos)
        t1 = time.perf_counter()
        move = self.moves[:, min(self.t, self.moves.shape[1] - 1), None]
        # +-30: the solution move has probability 1 - 4e-26; larger gaps would send `exp`
        # into its underflow path (6x slower), which no policy's logits reach
        forced = torch.full_like(logits, -30.0).scatter(1, move, 30.0)
        self.t += 1
        self.inside += t1 - t0
        self.lookup += time.perf_counter() - t1  # the benchmark's own work, not the engine's
        return forced, state

    def select_rows(self, state, rows):
        return None  # moves are looked up by the full batch's rows: every row keeps running


class GuidedPolicy(torch.nn.Module):
    """The wrapped policy with `bonus` added to the logit of each maze's solution move (stop
    after it): episodes of varied length, most of them long, as a partly trained policy's.
    Supports `select_rows` where the wrapped policy does (generation shares its rows)."""

    def __init__(self, policy, mazes, group_size: int, bonus: float = 4.0) -> None:
        super().__init__()
        self.policy, self.bonus, self.t = policy, bonus, 0
        self.sees_position = policy.sees_position
        self.moves = solution_moves(mazes, group_size)

    def prefill(self, prompts, group_size, max_len):
        self.t = 0
        return self.policy.prefill(prompts, group_size, max_len), torch.arange(len(self.moves))

    def step(self, state, prev, pos):
        inner, rows = state
        logits, inner = self.policy.step(inner, prev, pos)
        move = self.moves[rows, min(self.t, self.moves.shape[1] - 1), None]
        self.t += 1
        return logits.scatter_add(1, move, torch.full_like(move, self.bonus, dtype=logits.dtype)), (
            inner,
            rows,
        )

    def select_rows(self, state, rows):
        inner = self.policy.select_rows(state[0], rows)
        return None if inner is None else (inner, state[1][rows])


def env_figure(n_envs: int, steps: int, repeats: int) -> dict:
    maze = MazeSpec(size=8).sample(np.random.default_rng(0))
    actions = np.random.default_rng(1).integers(4, size=(steps, n_envs))
    actions_t = torch.as_tensor(actions)
    sync = gym.vector.SyncVectorEnv([lambda: MazeEnv(layout=maze) for _ in range(n_envs)])
    vec = MazeVectorEnv(n_envs, layout=maze)
    batch = MazeBatch([maze] * n_envs)

    def run_sync():
        sync.reset(seed=0)
        for a in actions:
            sync.step(a)

    def run_vec():
        vec.reset(seed=0)
        for a in actions:
            vec.step(a)

    def run_batch():  # the trainer's stepper, with a vectorised reset of ended rows
        batch.reset()
        for a in actions_t:
            batch.step(a)
            if bool(batch.done.any()):
                batch.reset(batch.done)

    out = {"figure": "env_steps_per_s", "n_envs": n_envs}
    for name, fn, reps in (
        ("batched", run_batch, repeats),
        ("vector_env", run_vec, repeats),
        ("sync_vector_env", run_sync, max(1, repeats // 2)),
    ):
        t = timed(fn, reps)
        out[name] = n_envs * steps / t["median"]
        out[f"{name}_range"] = [n_envs * steps / t["max"], n_envs * steps / t["min"]]
    out["ratio_vs_sync"] = out["batched"] / out["sync_vector_env"]
    out["vector_env_ratio_vs_sync"] = out["vector_env"] / out["sync_vector_env"]
    return out


def generation_figure(name: str, prompts: int, group: int, repeats: int) -> dict:
    torch.manual_seed(0)
    policy = policy_of(name).eval()
    mazes = default_mazes(prompts)
    follower = SolutionFollower(policy, mazes, group)
    runs = []  # (engine seconds, network seconds, tokens) per repeat

    def run():
        follower.inside = follower.lookup = 0.0
        t0 = time.perf_counter()
        r = generate(follower, mazes, group, generator=torch.Generator().manual_seed(0))
        engine = time.perf_counter() - t0 - follower.lookup
        runs.append((engine, follower.inside, float(r.mask.sum())))

    t = timed(run, repeats)
    measured = sorted(runs[1:])  # without the warm-up
    engine, inside, tokens = measured[len(measured) // 2]  # the median repeat
    return {
        "figure": "generation",
        "policy": name,
        "prompts": prompts,
        "group_size": group,
        "tokens_per_s": tokens / engine,
        "tokens": tokens,
        "seconds": t,
        "engine_seconds": [e for e, _, _ in measured],
        "outside_network_frac": 1 - inside / engine,
        "params": policy.num_parameters(),
    }


def token_cost_figure(name: str, repeats: int) -> dict:
    """tokens/s of `policy.step` alone for 64 x 8 rows at max length 32, 64 and 128."""
    torch.manual_seed(0)
    policy = policy_of(name).eval()
    from mazerl.policy.tokens import encode

    prompts = encode(default_mazes(64))
    b = 64 * 8
    out = {"figure": "token_cost", "policy": name}
    for length in (32, 64, 128):
        prev = torch.randint(0, N_ACTIONS, (length, b), generator=torch.Generator().manual_seed(0))
        pos = torch.ones(b, 2, dtype=torch.long)

        def run(length=length, prev=prev, pos=pos):
            with torch.inference_mode():
                state = policy.prefill(prompts, 8, length)
                _, state = policy.step(state, torch.full((b,), 5), pos)
                for t in range(length - 1):
                    _, state = policy.step(state, prev[t], pos)

        t = timed(run, repeats)
        out[f"tokens_per_s@{length}"] = b * length / t["median"]
    out["ratio_128_vs_32"] = out["tokens_per_s@128"] / out["tokens_per_s@32"]
    return out


def iteration_figure(repeats: int) -> dict:
    """One iteration of the default job (`mazerl-train` with no overrides: GRU, 5x5 mazes, 32
    prompts x 8) by phase, each the trainer's own call: `TrainingMazes.draw`, then
    `TrainStep.collect` (episodes of solution length: `SolutionFollower`, every third one
    failed: `mixed`), `TrainStep.advantages` and `TrainStep.update`."""
    cfg = composed()
    learner, step = trainer()
    prompts, group = cfg.train.num_prompts, cfg.train.group_size
    source = TrainingMazes(MazeTask.of(cfg.maze), set(), cfg.seed)
    phases: dict[str, list[float]] = {k: [] for k in ("mazes", "rollout", "advantages", "update")}
    for it in range(repeats + 1):
        t0 = time.perf_counter()
        mazes = source.draw(prompts, it, 0)
        t1 = time.perf_counter()
        follower = SolutionFollower(learner.policy, mazes, group)
        batch = mixed(step.collect(learner, Drawn(mazes), it, sampler=follower))
        t2 = time.perf_counter()
        advantages, _ = step.advantages(batch)
        t3 = time.perf_counter()
        step.update(learner, batch, advantages, it)
        t4 = time.perf_counter()
        if it:  # the first is a warm-up
            for k, a, b in (
                ("mazes", t0, t1),
                ("rollout", t1, t2),
                ("advantages", t2, t3),
                ("update", t3, t4),
            ):
                phases[k].append((b - a) * 1e3)
    out = {
        "figure": "iteration_ms",
        "policy": cfg.policy.name,
        "prompts": prompts,
        "group_size": group,
    }
    out.update({k: float(np.median(v)) for k, v in phases.items()})
    out.update({f"{k}_range": [min(v), max(v)] for k, v in phases.items()})
    out["total"] = sum(out[k] for k in phases)
    return out


PHASES = ("mazes", "encode", "generate", "advantages", "forward", "backward", "optimizer")
MATMUL_PHASES = ("encode", "generate", "forward", "backward")  # FLOP rates of these


def matmul_peak(repeats: int, n: int = 2048) -> float:
    """FLOP/s of one `n x n` float32 matmul on this thread count (the peak the rates are
    compared to)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    return 2 * n**3 / timed(lambda: a @ b, repeats)["median"]


def phase_figure(cell: str, iterations: int, warmup: int = 10) -> dict:
    """One iteration of the leaderboard cell `cell` (`experiment=leaderboard cell=<cell>
    seed=0`) by phase, each the trainer's own call marked with `mazerl.core.phases.phase`:
    fresh training mazes (`TrainingMazes.draw`, uncached), `TrainStep.collect` (phases
    `encode`, `generate`), `TrainStep.advantages` and `TrainStep.update` (phases `forward`,
    `backward`, `optimizer`), from bank model 0 (the cell's base model) over iterations
    `warmup` ... `warmup + iterations - 1`, so episodes have the length a trained policy
    gives. Then one more iteration with FLOPs counted (`FlopCounterMode`) per phase: the
    FLOP rate of each matmul-bound phase is its FLOPs over its median time."""
    cfg = composed("experiment=leaderboard", f"cell={cell}", "seed=0")
    task = MazeTask.of(cfg.maze)
    spec = task.spec
    with tempfile.TemporaryDirectory() as tmp:
        sets = cached_sets(spec, cfg.eval, Path(tmp), lambda line: None)
        held = held_out_keys(spec, cfg.eval, cfg.base.held_out, Path(tmp), lambda line: None)
        base, _, _ = obtain_base(
            task, held, CPU, lambda line: None, policy=cfg.policy, base=cfg.base
        )
    learner = Learner.start(cfg.train, base, cfg.train.iterations)
    step = TrainStep.of(cfg, task, CPU)
    source = TrainingMazes(task, excluded_keys(sets), cfg.seed)
    prompts = cfg.train.num_prompts

    def iteration(it: int, clock) -> dict:
        with phase_meter.measured(clock) as totals:
            with phase_meter.phase("mazes"):
                mazes = source.draw(prompts, it, 0)
            batch = step.collect(learner, Drawn(mazes), it)
            with phase_meter.phase("advantages"):
                advantages, _ = step.advantages(batch)
            step.update(learner, batch, advantages, it)
        return totals

    times: dict[str, list[float]] = {k: [] for k in PHASES}
    for it in range(warmup + iterations):
        totals = iteration(it, time.perf_counter)
        if it >= warmup:
            for k in PHASES:
                times[k].append(1e3 * totals.get(k, 0.0))
    with FlopCounterMode(display=False) as counter:
        flops = iteration(warmup + iterations, counter.get_total_flops)
    ms = {k: float(np.median(v)) for k, v in times.items()}
    total = sum(ms.values())
    out = {"figure": "phases", "cell": cell, "prompts": prompts, "total_ms": total}
    out |= {"group_size": cfg.train.group_size, "iterations": iterations}
    out.update({f"{k}_ms": ms[k] for k in PHASES})
    out.update({f"{k}_share": ms[k] / total for k in PHASES})
    out.update({f"{k}_flops_per_s": flops.get(k, 0.0) / (ms[k] / 1e3) for k in MATMUL_PHASES})
    return out


def policy_flops(name: str, repeats: int) -> tuple[float, float]:
    """Achieved FLOP/s of one policy: generation (64 x 8 rollouts) and the trainer's update
    of those rollouts (`TrainStep.update`: forward and gradient passes, clipping, the
    optimizer), FLOPs counted by torch's FlopCounterMode."""
    learner, step = trainer(f"policy={name}", "train.num_prompts=64", "train.group_size=8")
    mazes = default_mazes(64)
    follower = SolutionFollower(learner.policy, mazes, 8)

    def gen():
        return generate(follower, mazes, 8, generator=torch.Generator().manual_seed(0))

    batch = mixed(step.collect(learner, Drawn(mazes), 0, sampler=follower))
    advantages, _ = step.advantages(batch)

    def upd():
        step.update(learner, batch, advantages, 0)

    with FlopCounterMode(display=False) as counter:
        gen()
    gen_rate = counter.get_total_flops() / timed(gen, repeats)["median"]
    with FlopCounterMode(display=False) as counter:
        upd()
    return gen_rate, counter.get_total_flops() / timed(upd, repeats)["median"]


def flops_figure(repeats: int) -> dict:
    peak = matmul_peak(repeats)
    out = {"figure": "flops", "matmul_flops_per_s": peak}
    for name in POLICIES:
        gen_rate, upd_rate = policy_flops(name, repeats)
        out[f"{name}_generation_flops_per_s"] = gen_rate
        out[f"{name}_update_flops_per_s"] = upd_rate
        out[f"{name}_generation_frac_of_matmul"] = gen_rate / peak
        out[f"{name}_update_frac_of_matmul"] = upd_rate / peak
    return out


def paired(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, the functions alternated within every repeat (so a
    change of machine load hits them alike)."""
    for fn in fns.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def skip_update_figure(group: int, zero_frac: float, repeats: int) -> dict:
    """The trainer's update (`TrainStep.update`, 16 mazes x `group`, the default job's GRU and
    settings) with `train.skip_zero_advantage` true and false, `zero_frac` of the 16 groups
    all-equal; episodes from `GuidedPolicy`."""
    prompts = 16
    shape = (f"train.num_prompts={prompts}", f"train.group_size={group}")
    learner, skip = trainer(*shape)
    _, full = trainer(*shape, "train.skip_zero_advantage=false")
    mazes = default_mazes(prompts)
    guided = GuidedPolicy(learner.policy, mazes, group)
    batch = skip.collect(learner, Drawn(mazes), 0, sampler=guided)
    zero = int(zero_frac * prompts)
    rewards = torch.zeros(prompts, group)
    rewards[zero:, : group // 2] = 1.0  # mixed groups
    rewards[:zero:2] = 1.0  # half the all-equal groups all correct, half all wrong
    batch.rollouts.reward[:] = rewards.flatten()
    advantages, _ = skip.advantages(batch)

    def run(step):
        return lambda: step.update(learner, batch, advantages, 0)

    t = paired({"full": run(full), "skip": run(skip)}, repeats)
    return {
        "figure": "skip_update",
        "prompts": prompts,
        "group_size": group,
        "zero_adv_groups": zero / prompts,
        "full_ms": 1e3 * t["full"],
        "skip_ms": 1e3 * t["skip"],
        "speedup": t["full"] / t["skip"],
    }


def sharing_figure(prompts: int, group: int, repeats: int) -> dict:
    """Generation (GRU, `GuidedPolicy` episodes) per row and once per distinct prefix of the
    unfinished rows; `finished_row_steps`: the fraction of row-steps the per-row loop spends
    on finished rows."""
    torch.manual_seed(0)
    policy = policy_of("gru").eval()
    mazes = default_mazes(prompts)
    guided = GuidedPolicy(policy, mazes, group)

    def run(share):
        return lambda: generate(
            guided, mazes, group, generator=torch.Generator().manual_seed(0), share=share
        )

    r = run(False)()
    t = paired({"full": run(False), "shared": run(True)}, repeats)
    return {
        "figure": "sharing",
        "rows": prompts * group,
        "finished_row_steps": 1 - float(r.mask.sum()) / (len(r.mask) * r.used_length),
        "full_s": t["full"],
        "shared_s": t["shared"],
        "speedup": t["full"] / t["shared"],
    }


def smoke_sweep_figure() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "mazerl.apps.train",
                "-m",
                "experiment=smoke",
                "hydra/launcher=joblib",
                f"hydra.sweep.dir={tmp}/sweep",
                f"base.cache_dir={tmp}/cache",
                "logger.progress=off",
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        wall = time.perf_counter() - t0
    return {"figure": "smoke_sweep_s", "jobs": 4, "seconds": wall, "ok": out.returncode == 0}


def help_figure(app: str, repeats: int) -> dict:
    """Whole-process seconds of `python -m mazerl.apps.<app> --help`, against the same for
    `python -c pass` (the interpreter's start) and `python -c "import torch"` (alternating,
    median of `repeats`): help loads no torch, so it costs a fraction of that import (target:
    under 1 s)."""
    commands = {
        "help": [sys.executable, "-m", f"mazerl.apps.{app}", "--help"],
        "python": [sys.executable, "-c", "pass"],
        "import_torch": [sys.executable, "-c", "import torch"],
    }
    times = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            t0 = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            times[name].append(time.perf_counter() - t0)
    out = {"figure": "help_s", "app": app}
    for name, ts in times.items():
        out |= {f"{name}_s": float(np.median(ts)), f"{name}_min_s": min(ts)}
    out["ratio_vs_python"] = out["help_s"] / out["python_s"]
    out["ratio_vs_import_torch"] = out["help_s"] / out["import_torch_s"]
    return out


def long_run_figure(first: int = 1000, last: int = 1500) -> dict:
    """Wall time of iterations `first`+1 .. `last` of one N=8 `maze_group_sweep` run (F-GRPO
    gamma 0.5, seed 0) with `train.skip_zero_advantage` false (the old update) and true, from
    each run's `time/iteration_s`; the runs share the cached base model. Minutes: `--long`."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = {"figure": "long_run", "iterations": [first + 1, last], "group_size": 8}
    with tempfile.TemporaryDirectory() as tmp:
        for skip in (False, True):
            run_dir = Path(tmp) / f"skip_{skip}"
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable, "-m", "mazerl.apps.train", "experiment=maze_group_sweep",
                    "train.group_size=8", "focal.gamma=0.5", "seed=0", "threads=1",
                    f"train.iterations={last}", "train.eval_every=0",
                    f"train.checkpoint_every={last}", f"train.skip_zero_advantage={skip}",
                    f"hydra.run.dir={run_dir}", f"base.cache_dir={tmp}/cache",
                    "logger.progress=off",
                ],
                check=True, capture_output=True, cwd=tmp,
            )  # fmt: skip
            acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0}).Reload()
            per_it = [e.value for e in acc.Scalars("time/iteration_s") if first < e.step <= last]
            zero = [e.value for e in acc.Scalars("train/frac_zero_adv_groups") if e.step > first]
            key = "skip" if skip else "full"
            out[f"{key}_s"] = float(sum(per_it))
            out[f"{key}_run_s"] = time.perf_counter() - t0
            out[f"{key}_frac_zero_adv_groups"] = float(np.mean(zero))
    out["speedup"] = out["full_s"] / out["skip_s"]
    return out


def mazerl_grpo_speed(mazes, group: int, steps: int) -> dict:
    """`steps` iterations (after one warm-up) of the trainer's step (`TrainStep`) with the
    shipped transformer on `mazes`: `group` rollouts each (the solution followed, the network
    run at every step, as in `generation`; every third one failed: `mixed`), advantages, one
    update. Returns rollouts/s and tokens per rollout."""
    shape = (f"train.num_prompts={len(mazes)}", f"train.group_size={group}")
    learner, step = trainer("policy=transformer", *shape)
    seconds, tokens = [], []
    for it in range(steps + 1):
        t0 = time.perf_counter()
        follower = SolutionFollower(learner.policy, mazes, group)
        batch = mixed(step.collect(learner, Drawn(mazes), it, sampler=follower))
        step.learn(learner, batch, it)
        if it:  # the first is a warm-up
            seconds.append(time.perf_counter() - t0)
            r = batch.rollouts
            tokens.append(r.mask.sum().item() / r.mask.shape[0])
    return {
        "rollouts_per_s": len(mazes) * group * steps / sum(seconds),
        "tokens_per_rollout": float(np.mean(tokens)),
    }


def trl_figure(prompts: int = 16, group: int = 8, steps: int = 3, pairs: int = 3) -> dict:
    """TRL's GRPOTrainer against mazerl's loop on the same mazes, N and steps (5x5 cells), in
    `pairs` alternating pairs (a busy machine slows one side or the other): medians of each
    side's rollouts/s, and the median and range of the per-pair ratios."""
    out = {"figure": "trl_vs_mazerl", "prompts": prompts, "group_size": group, "steps": steps}
    try:
        from mazerl.llm.speed import trl_grpo_speed
    except ImportError as e:
        return {**out, "skipped": f"needs the extra: pip install 'mazerl[llm]' ({e.name} missing)"}
    mazes = default_mazes(prompts, 7)
    transformer = composed("policy=transformer").policy
    runs = [
        (
            mazerl_grpo_speed(mazes, group, steps),
            trl_grpo_speed(mazes, group, steps, transformer),
        )
        for _ in range(pairs)
    ]
    out["threads"], out["pairs"] = torch.get_num_threads(), pairs
    for side, i in (("mazerl", 0), ("trl", 1)):
        for k in ("rollouts_per_s", "tokens_per_rollout"):
            out[f"{side}_{k}"] = float(np.median([r[i][k] for r in runs]))
    ratios = [m["rollouts_per_s"] / t["rollouts_per_s"] for m, t in runs]
    out["ratio"], out["ratio_range"] = float(np.median(ratios)), [min(ratios), max(ratios)]
    return out


def table(results: list[dict]) -> str:
    lines = ["", f"{'figure':28s} value"]
    for r in results:
        f = r["figure"]
        if f == "env_steps_per_s":
            lines.append(
                f"{'env steps/s @' + str(r['n_envs']):28s} batched {r['batched']:.3g}, "
                f"VectorEnv {r['vector_env']:.3g}, SyncVectorEnv "
                f"{r['sync_vector_env']:.3g}  (x{r['ratio_vs_sync']:.0f}, "
                f"x{r['vector_env_ratio_vs_sync']:.0f})"
            )
        elif f == "generation":
            label = f"gen {r['policy']} {r['prompts']}x{r['group_size']}"
            lines.append(
                f"{label:28s} "
                f"{r['tokens_per_s']:.3g} tokens/s, outside network "
                f"{100 * r['outside_network_frac']:.0f}%"
            )
        elif f == "token_cost":
            lines.append(
                f"{'tokens/s vs length ' + r['policy']:28s} "
                + ", ".join(
                    f"{k.split('@')[1]}: {v:.3g}"
                    for k, v in r.items()
                    if k.startswith("tokens_per_s@")
                )
                + f"  (128/32 = {r['ratio_128_vs_32']:.2f})"
            )
        elif f == "iteration_ms":
            label = f"iteration ms ({r['policy']} {r['prompts']}x{r['group_size']})"
            lines.append(
                f"{label:28s} "
                + ", ".join(
                    f"{k} {r[k]:.0f}" for k in ("mazes", "rollout", "advantages", "update", "total")
                )
            )
        elif f == "phases":
            label = f"phases {r['cell']} ({r['prompts']}x{r['group_size']})"
            lines.append(f"{label:28s}     ms  share  FLOP/s  of matmul peak")
            for k in PHASES:
                rate = r.get(f"{k}_flops_per_s")
                peak = f"  {rate:.3g}  {100 * rate / r['matmul_flops_per_s']:.0f}%" if rate else ""
                ms, share = r[f"{k}_ms"], 100 * r[f"{k}_share"]
                lines.append(f"{'  ' + k:28s} {ms:6.1f}  {share:4.0f}%{peak}")
            lines.append(f"{'  total':28s} {r['total_ms']:6.1f}")
        elif f == "flops":
            lines.append(f"{'matmul FLOP/s':28s} {r['matmul_flops_per_s']:.3g}")
            for name in POLICIES:
                lines.append(
                    f"{'  ' + name + ' of matmul peak':28s} generation "
                    f"{100 * r[name + '_generation_frac_of_matmul']:.1f}%, update "
                    f"{100 * r[name + '_update_frac_of_matmul']:.1f}%"
                )
        elif f == "skip_update":
            label = f"update skip 16x{r['group_size']} {100 * r['zero_adv_groups']:.0f}% zero"
            lines.append(
                f"{label:28s} {r['full_ms']:.0f} ms -> {r['skip_ms']:.0f} ms (x{r['speedup']:.2f})"
            )
        elif f == "sharing":
            label = f"gen sharing {r['rows']} rows"
            lines.append(
                f"{label:28s} {r['full_s']:.3g} s -> {r['shared_s']:.3g} s "
                f"(x{r['speedup']:.2f}, {100 * r['finished_row_steps']:.0f}% finished)"
            )
        elif f == "long_run":
            lines.append(
                f"{'N=8 run, its ' + str(r['iterations'][0]) + '-' + str(r['iterations'][1]):28s}"
                f" {r['full_s']:.0f} s -> {r['skip_s']:.0f} s (x{r['speedup']:.2f}, "
                f"{100 * r['skip_frac_zero_adv_groups']:.0f}% zero groups)"
            )
        elif f == "trl_vs_mazerl" and "skipped" in r:
            lines.append(f"{'TRL vs mazerl GRPO':28s} skipped: {r['skipped']}")
        elif f == "trl_vs_mazerl":
            lines.append(
                f"{'TRL vs mazerl GRPO ' + str(r['prompts']) + 'x' + str(r['group_size']):28s} "
                f"mazerl {r['mazerl_rollouts_per_s']:.3g} rollouts/s, TRL "
                f"{r['trl_rollouts_per_s']:.3g} (x{r['ratio']:.1f}, pairs "
                f"{r['ratio_range'][0]:.1f}-{r['ratio_range'][1]:.1f}; tokens/rollout "
                f"{r['mazerl_tokens_per_rollout']:.1f} vs {r['trl_tokens_per_rollout']:.1f})"
            )
        elif f == "help_s":
            lines.append(
                f"{'mazerl-' + r['app'] + ' --help':28s} {r['help_s']:.2f} s (python -c pass "
                f"{r['python_s']:.2f} s, import torch {r['import_torch_s']:.2f} s: "
                f"x{r['ratio_vs_import_torch']:.2f})"
            )
        elif f == "smoke_sweep_s":
            lines.append(f"{'smoke sweep (4 jobs)':28s} {r['seconds']:.1f} s (ok={r['ok']})")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = ArgumentParser(prog="mazerl-bench", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="under a minute: fewer repeats")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    ap.add_argument(
        "--long", action="store_true", help="also the long-run figure (two 1,500-iteration runs)"
    )
    ap.add_argument("--trl", action="store_true", help="only the TRL-versus-mazerl row")
    ap.add_argument(
        "--phases", action="store_true", help="only the leaderboard cells' phase tables"
    )
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    reps = 2 if args.quick else 5
    results = []

    def emit(r):
        results.append(r)
        print(json.dumps(r), flush=True)

    if args.trl:
        emit(trl_figure())
        print(table(results))
        return
    if args.phases:
        peak = matmul_peak(reps)
        for cell in ("n32", "n8"):
            emit({**phase_figure(cell, 10 if args.quick else 40), "matmul_flops_per_s": peak})
        print(table(results))
        return
    for n in (64, 256, 1024):
        emit(env_figure(n, steps=50 if args.quick else 200, repeats=reps))
    for name in POLICIES:
        for prompts in (64, 256):
            if args.quick and name == "transformer" and prompts == 256:
                continue
            emit(generation_figure(name, prompts, 8, reps))
        emit(token_cost_figure(name, 1 if args.quick else 3))
    for group in (8, 128):
        for zero_frac in (0.0, 0.5, 0.9):
            emit(skip_update_figure(group, zero_frac, 3 if args.quick else 7))
    for prompts, group in ((16, 8), (16, 128), (64, 256)):
        emit(sharing_figure(prompts, group, 1 if args.quick and group > 8 else 3))
    emit(iteration_figure(2 if args.quick else 5))
    peak = matmul_peak(reps)
    for cell in ("n32", "n8"):
        emit({**phase_figure(cell, 10 if args.quick else 40), "matmul_flops_per_s": peak})
    emit(flops_figure(1 if args.quick else 3))
    for app in ("train", "eval", "categorical"):
        emit(help_figure(app, 3 if args.quick else 5))
    emit(smoke_sweep_figure())
    emit(trl_figure())
    if args.long:
        emit(long_run_figure())
    print(table(results))


if __name__ == "__main__":
    main()
