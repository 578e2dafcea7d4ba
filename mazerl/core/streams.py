"""Independent random streams derived from a seed: `rng(seed, STREAM_..., index, ...)`.

Every stream id of the project is listed here, so two uses can never share one by accident.
A stream depends only on its keys, so a resumed run or another job draws the same values."""

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch loads on use: `--help` reads the configs that import this module
    import torch

STREAM_TRAIN_MAZES = 1  # fresh training mazes: (run seed, stream, iteration, round, i)
STREAM_EVAL = 2  # evaluation mazes: (eval.seed, stream, crc32(set name), i)
STREAM_SAMPLING = 3  # training rollouts: (run seed, stream, iteration, round)
STREAM_TRAIN_POOL = 4  # a fixed training pool: (run seed, stream, i)
STREAM_MINIBATCH = 5  # minibatch order of each PPO epoch: (run seed, stream, iteration)
STREAM_SFT = 11  # base-model demonstrations: (base.seed, stream, step, i)
STREAM_PROBE = 12  # base-model probe mazes and samples: (base.seed, stream)
STREAM_EVAL_SAMPLING = 21  # evaluation rollouts: (eval.seed, stream, step, set index)


def rng(*keys: int) -> np.random.Generator:
    """A numpy generator for one stream.

    Args:
        *keys: the stream's keys: `rng(seed, STREAM_..., index, ...)`.

    Returns:
        A PCG64 generator that depends on the keys only.
    """
    return np.random.default_rng([int(k) for k in keys])


def torch_generator(device: "torch.device", *keys: int) -> "torch.Generator":
    """A torch generator for one stream.

    Args:
        device: where it generates.
        *keys: the stream's keys, as for `rng`.

    Returns:
        A generator on `device` seeded from the keys only.
    """
    import torch

    seed = int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0])
    return torch.Generator(device=device).manual_seed(seed)
