"""The policy registry and configs: the fields every policy shares (`PolicyConfig`) and the
built-in policies' config classes, each field with its rule and description.

No torch here: `--help` and the config checks read these classes and the policies' names
(`POLICIES.known()`, read from the source of the modules of `mazerl.policy` that use
`@POLICIES.register`) without loading the models. A policy class names its config class as
its `config_class`; a new policy's config class may sit beside it in its module (then
`policy_config` imports that module, and torch, to find it), a plug-in's in its own module.
"""

import inspect
from dataclasses import dataclass

from mazerl.core.registry import Registry
from mazerl.core.settings import COUNT, FLAG, POSITIVE, need, number, registered, setting

# a module of `mazerl.policy` that uses `@POLICIES.register("NAME")` holds a policy
POLICIES = Registry("policy", "mazerl.policy", ("POLICIES.register",))


def policy_name(name: str):
    """The `name` field of a policy config, defaulting to the policy's registered `name`."""
    return setting(
        name,
        registered(POLICIES),
        "the policy architecture (pick it with policy=gru | transformer | ...)",
    )


@dataclass
class PolicyConfig:
    """Fields shared by every policy config (`conf/policy/*.yaml`): every policy has a width
    `hidden` (the smoke preset sets it, whatever the policy). A policy's config class
    derives from it, sets `name: str = policy_name("NAME")`, gives each of its own fields a
    `setting` (rule and description), and is its policy class's `config_class`."""

    name: str = policy_name("gru")
    sees_position: bool = setting(
        False, FLAG, "true: also feed the current cell at each step (a Markov variant)"
    )
    hidden: int = setting(
        64, COUNT, "model width d (GRU: conv channels, state and attention width)"
    )


@dataclass
class GruConfig(PolicyConfig):
    name: str = policy_name("gru")
    encoder_layers: int = setting(
        6, COUNT, "GRU: residual 3x3 convs of the maze encoder, dilations 1, 2, 4"
    )


@dataclass
class TransformerConfig(PolicyConfig):
    name: str = policy_name("transformer")
    layers: int = setting(2, COUNT, "transformer blocks")
    hidden: int = setting(
        128,
        number(2, integer=True),
        "model width d (GRU: conv channels, state and attention width)",
    )
    heads: int = setting(4, COUNT, "attention heads")
    kv_heads: int = setting(2, COUNT, "key-value heads (grouped-query attention; divides heads)")
    ffn: int = setting(512, COUNT, "feed-forward width")
    rope_theta: float = setting(1_000_000.0, POSITIVE, "RoPE base frequency")
    pos2d: bool = setting(
        True, FLAG, "add 2-D position features to the cell tokens (off in the paper)"
    )

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """An even head size (for RoPE); the key-value heads divide the heads."""
        need(
            node.hidden % node.heads == 0 and (node.hidden // node.heads) % 2 == 0,
            f"{prefix}hidden",
            f"a multiple of 2 x {prefix}heads={node.heads} (an even head size, for RoPE)",
            node.hidden,
        )
        need(
            node.heads % node.kv_heads == 0,
            f"{prefix}kv_heads",
            f"a divisor of {prefix}heads={node.heads}",
            node.kv_heads,
        )


def policy_config(name: str) -> type[PolicyConfig]:
    """The config class of the policy `name`: its policy class's `config_class`. The config
    classes defined so far that set their `name` to it (`policy_name("NAME")`) answer without
    loading a policy module; any other registered name loads them (`POLICIES`, with torch)
    and reads its class's `config_class` (a copied policy may share another's config class);
    `PolicyConfig` itself for a name no policy has (its `name` rule then refuses it)."""
    if name in _config_classes():
        return _config_classes()[name]
    if name in POLICIES.known():
        return POLICIES.get(name).config_class
    return PolicyConfig


def defined_policies() -> list[str]:
    """The policies whose config classes are defined so far (no module imported): the
    built-ins' of this module, a loaded plug-in's, and those of imported policy modules."""
    return sorted(_config_classes())


def _config_classes(cls: type = PolicyConfig) -> dict[str, type[PolicyConfig]]:
    """Name -> config class, for every subclass of `cls` that sets its own `name`."""
    found = {}
    for sub in cls.__subclasses__():
        if "name" in inspect.get_annotations(sub):
            found[sub.name] = sub
        found |= _config_classes(sub)
    return found
