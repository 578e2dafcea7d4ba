"""Sequence policies (registered by name) that read a maze and emit moves.

Each module of `MODULES` registers its policy when imported (`@POLICIES.register`): a new
policy is its module (the policy class), added to `MODULES`, its config class in
`mazerl.policy.config` and its `conf/policy/NAME.yaml`. A policy from outside the repository
is a plug-in (`mazerl.core.plugins`).

Importing the package loads no torch: `PolicyConfig` (and every config class, in
`mazerl.policy.config`) is here at once, so `--help` reads the configs without the models; the
first use of `POLICIES`, `SequencePolicy` or `build_policy` imports every module of `MODULES`.
"""

import importlib
from typing import TYPE_CHECKING

from mazerl.policy.config import PolicyConfig

if TYPE_CHECKING:
    from mazerl.policy.base import SequencePolicy

MODULES = ("gru", "transformer")  # the built-in policies' modules
LAZY = ("POLICIES", "SequencePolicy")  # from `mazerl.policy.base`, on first use


def _base():
    """`mazerl.policy.base`, every module of `MODULES` imported (their policies registered)."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return importlib.import_module(f"{__name__}.base")


def __getattr__(name: str):
    """A name of `LAZY`, on its first use."""
    if name not in LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_base(), name)


def build_policy(cfg) -> "SequencePolicy":
    """The registered policy named `cfg.name`, built from its config (a dataclass, a dict or
    an OmegaConf node with the same fields)."""
    name = cfg["name"] if isinstance(cfg, dict) else cfg.name
    cls = _base().POLICIES.get(name)
    if not isinstance(cfg, cls.config_class):
        cfg = cls.config_class(**dict(cfg))
    return cls(cfg)


__all__ = ["POLICIES", "PolicyConfig", "SequencePolicy", "build_policy"]
