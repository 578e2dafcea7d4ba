"""Sequence policies (registered by name) that read a maze and emit moves.

Each policy module is imported here, by name, so that its `@POLICIES.register` runs: a new
policy is its module (the policy class and its config class), added to the import list
below, and its `conf/policy/NAME.yaml`. A policy from outside the repository is a plug-in
(`mazerl.core.plugins`).
"""

from mazerl.policy import gru, transformer  # noqa: F401  (they register their policies)
from mazerl.policy.base import POLICIES, PolicyConfig, SequencePolicy


def build_policy(cfg) -> SequencePolicy:
    """The registered policy named `cfg.name`, built from its config (a dataclass, a dict or
    an OmegaConf node with the same fields)."""
    name = cfg["name"] if isinstance(cfg, dict) else cfg.name
    cls = POLICIES.get(name)
    if not isinstance(cfg, cls.config_class):
        cfg = cls.config_class(**dict(cfg))
    return cls(cfg)


__all__ = ["POLICIES", "PolicyConfig", "SequencePolicy", "build_policy"]
