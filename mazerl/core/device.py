"""Process set-up shared by the entry points: device, threads, determinism, and the `seed`,
`device` and `threads` settings the apps share."""

import contextlib
import os
import platform
import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mazerl.core.errors import ConfigError
from mazerl.core.settings import NATURAL, SEED, Rule, setting

if TYPE_CHECKING:  # torch loads on use: `--help` reads the settings below without it
    import torch
    from omegaconf import DictConfig


def _device_ok(v) -> bool:
    if not isinstance(v, str):
        return False
    kind, _, index = v.partition(":")
    return v in ("auto", "cpu", "cuda") or (kind == "cuda" and index.isdigit())


def seed_setting():
    """The run's `seed` field (of every app that trains or evaluates)."""
    return setting(0, SEED, "random seed of the run (training mazes, sampling, initialisation)")


def device_setting():
    """The `device` field: the name `select_device` reads."""
    device = Rule(_device_ok, "auto, cpu, cuda or cuda:N")
    return setting("auto", device, "auto | cpu | cuda | cuda:N")


# the default of `threads`: one torch thread (fastest on a shared machine); a Ray or SLURM job
# left at it runs as many as the CPUs it reserves (`setup`)
THREADS = 1


def threads_setting():
    """The `threads` field: torch threads (`setup`; 0: `job_threads`; the default in a job
    that reserves CPUs: `reserved_cpus`)."""
    return setting(
        THREADS,
        NATURAL,
        "torch threads per run or job (1: fastest on a shared machine; a Ray or SLURM job left "
        "at 1 runs one per CPU it reserves); 0: cores / jobs",
    )


def select_device(name: str) -> "torch.device":
    """auto: CUDA when available, else CPU."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device={name} requested but CUDA is not available here")
    return torch.device(name)


def _job() -> "DictConfig | None":
    """The Hydra config of the job this process runs (None outside Hydra)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return HydraConfig.get()
    except (ImportError, ValueError):
        return None


def reserved_cpus() -> int | None:
    """The CPUs the Hydra launcher running this job reserves for it: Ray's
    `ray.remote.num_cpus` (1 when not given), submitit's `cpus_per_task` (SLURM); None for a
    launcher that reserves none (basic, joblib), a submitit job without `cpus_per_task`, or
    outside Hydra."""
    launcher = job.launcher if (job := _job()) is not None else {}
    if "ray" in launcher:  # a Ray task reserves 1 CPU unless told otherwise
        return int(launcher.ray.remote.get("num_cpus") or 1)
    return int(launcher.cpus_per_task) if launcher.get("cpus_per_task") else None


def job_threads() -> int:
    """Torch threads for this job, from the Hydra launcher running it: joblib runs `n_jobs`
    jobs at once, so cores / n_jobs each; Ray and SLURM the CPUs they reserve
    (`reserved_cpus`); otherwise (basic launcher, no Hydra) all cores."""
    launcher = job.launcher if (job := _job()) is not None else {}
    if reserved := reserved_cpus():
        return reserved
    if "n_jobs" in launcher:
        n = int(launcher.n_jobs)
        return max(1, cpu_count() // (cpu_count() if n < 0 else max(n, 1)))
    return cpu_count()


def threads_given() -> bool:
    """Whether this job's `threads` was given on the command line (or among a sweep's values):
    Hydra's record of the job's overrides names it. False outside Hydra."""
    overrides = job.overrides.task if (job := _job()) is not None else []
    return any(o.lstrip("+~").partition("=")[0] == "threads" for o in overrides)


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def setup(seed: int, threads: int, device: "torch.device") -> int:
    """Seed python/numpy/torch, turn on deterministic algorithms, set torch threads
    (`threads` = 0: `job_threads()`; the default, 1, in a job that a launcher reserves CPUs
    for: that many, `reserved_cpus()`, unless `threads` was given on the command line).
    Returns the threads."""
    import torch

    if threads == 0:
        threads = job_threads()
    elif threads == THREADS and not threads_given():
        threads = reserved_cpus() or threads
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if device.type == "cuda":  # cuBLAS needs this for deterministic matmuls
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=device.type == "cuda")
    return threads


def cpu_info() -> dict[str, str]:
    """The CPU's model name (from /proc/cpuinfo; the platform's processor string elsewhere)
    and its vector capability as torch reports it (`DEFAULT`, `AVX2`, `AVX512`, ...): the
    kernels torch picks, so results repeat on the same kind of CPU and thread count only."""
    import torch

    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
