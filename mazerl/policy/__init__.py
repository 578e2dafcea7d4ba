"""Sequence policies (registered by name) that read a maze and emit moves.

A new policy is one module of this package: its policy class, registered with
`@POLICIES.register("NAME")` (the registry finds the module, `mazerl.core.registry`), and its
config class beside it. `policy=NAME` then picks it with its config class's defaults; a
`conf/policy/NAME.yaml` is needed only for a preset of other values. A policy from outside the
repository is a plug-in (`mazerl.core.plugins`).

Importing the package loads no torch: `PolicyConfig`, the built-in config classes and the
registry (`mazerl.policy.config`) are here at once, so `--help` reads the configs without the
models; the first lookup in `POLICIES` (or use of `SequencePolicy`, `build_policy`) imports the
policy modules.
"""

from typing import TYPE_CHECKING

from mazerl.core.lazy import lazy_getattr
from mazerl.policy.config import POLICIES, PolicyConfig

if TYPE_CHECKING:
    from mazerl.policy.base import SequencePolicy


# `SequencePolicy`, from `mazerl.policy.base` (torch), on its first use
__getattr__ = lazy_getattr(__name__, {"SequencePolicy": "base"})


def build_policy(cfg) -> "SequencePolicy":
    """The registered policy named `cfg.name`, built from its config (a dataclass, a dict or
    an OmegaConf node with the same fields)."""
    name = cfg["name"] if isinstance(cfg, dict) else cfg.name
    cls = POLICIES.get(name)
    if not isinstance(cfg, cls.config_class):
        cfg = cls.config_class(**dict(cfg))
    return cls(cfg)


__all__ = ["POLICIES", "PolicyConfig", "SequencePolicy", "build_policy"]
