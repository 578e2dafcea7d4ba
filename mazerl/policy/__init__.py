"""Sequence policies (registered by name) that read a maze and emit moves."""

import importlib
import pkgutil

from mazerl.policy.base import POLICIES, PolicyConfig, SequencePolicy

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")


def build_policy(cfg) -> SequencePolicy:
    """The registered policy named `cfg.name`, built from its config (a dataclass, a dict or
    an OmegaConf node with the same fields)."""
    name = cfg["name"] if isinstance(cfg, dict) else cfg.name
    cls = POLICIES.get(name)
    if not isinstance(cfg, cls.config_class):
        cfg = cls.config_class(**dict(cfg))
    return cls(cfg)


__all__ = ["POLICIES", "PolicyConfig", "SequencePolicy", "build_policy"]
