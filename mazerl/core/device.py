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


def threads_setting():
    """The `threads` field: torch threads (`setup`; 0: `job_threads`)."""
    return setting(
        1, NATURAL, "torch threads per run or job (1: fastest on a shared machine); 0: cores / jobs"
    )


def select_device(name: str) -> "torch.device":
    """auto: CUDA when available, else CPU."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device={name} requested but CUDA is not available here")
    return torch.device(name)


def job_threads() -> int:
    """Torch threads for this job, from the Hydra launcher running it: joblib runs `n_jobs`
    jobs at once, so cores / n_jobs each; Ray and SLURM reserve `ray.remote.num_cpus` (default 1)
    and `cpus_per_task` CPUs per job; otherwise (basic launcher, no Hydra) all cores."""
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ImportError, ValueError):
        return cpu_count()
    if "n_jobs" in launcher:
        n = int(launcher.n_jobs)
        return max(1, cpu_count() // (cpu_count() if n < 0 else max(n, 1)))
    if "ray" in launcher:  # a Ray task reserves 1 CPU unless told otherwise
        return int(launcher.ray.remote.get("num_cpus") or 1)
    if launcher.get("cpus_per_task"):
        return int(launcher.cpus_per_task)
    return cpu_count()


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def setup(seed: int, threads: int, device: "torch.device") -> int:
    """Seed python/numpy/torch, turn on deterministic algorithms, set torch threads
    (`threads` = 0: `job_threads()`). Returns the threads."""
    import torch

    if threads == 0:
        threads = job_threads()
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
