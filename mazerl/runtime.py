"""Process set-up shared by the entry points: device, threads, determinism, random streams."""

import os
import random

import numpy as np
import torch

from mazerl.errors import ConfigError

# independent random streams derived from the run seed (`rng(seed, STREAM, ...)`)
STREAM_TRAIN_MAZES, STREAM_SAMPLING, STREAM_TRAIN_POOL = 1, 3, 4


def select_device(name: str) -> torch.device:
    """auto: CUDA when available, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device={name} requested but CUDA is not available here")
    return torch.device(name)


def launcher_parallelism() -> int:
    """How many jobs the Hydra launcher runs at once on this machine (1 outside Hydra)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ImportError, ValueError):
        return 1
    n_jobs = launcher.get("n_jobs") if "n_jobs" in launcher else None
    if n_jobs is None:
        return 1
    return cpu_count() if n_jobs < 0 else max(1, int(n_jobs))


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def setup(seed: int, threads: int, device: torch.device) -> int:
    """Seed python/numpy/torch, turn on deterministic algorithms, set torch threads
    (`threads` = 0: the cores divided by the launcher's parallel jobs). Returns the threads."""
    if threads == 0:
        threads = max(1, cpu_count() // launcher_parallelism())
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if device.type == "cuda":  # cuBLAS needs this for deterministic matmuls
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=device.type == "cuda")
    return threads


def rng(*keys: int) -> np.random.Generator:
    """A numpy generator for one stream: `rng(seed, STREAM_..., index)`."""
    return np.random.default_rng([int(k) for k in keys])


def torch_generator(device: torch.device, *keys: int) -> torch.Generator:
    """A torch generator on `device` seeded from the stream keys."""
    seed = int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0])
    return torch.Generator(device=device).manual_seed(seed)
