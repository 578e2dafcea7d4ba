"""The policy configs: the fields every policy shares (`PolicyConfig`) and each built-in
policy's, each field with its rule and description.

No torch here: `--help` and the config checks read these classes without loading the models
(`policy_config` finds a policy's config class by its name). A policy class names its config
class as its `config_class`; a plug-in's config class is in its own module, defined when
`load_plugins` imports it.
"""

import importlib
import inspect
from dataclasses import dataclass

from mazerl.core.settings import COUNT, FLAG, POSITIVE, need, number, registered, setting


def policy_name(name: str):
    """The `name` field of a policy config, defaulting to the policy's registered `name`."""
    return setting(
        name,
        registered(lambda: importlib.import_module("mazerl.policy").POLICIES),
        "the policy architecture (pick it with policy=gru | transformer | ...)",
    )


@dataclass
class PolicyConfig:
    """Fields shared by every policy config (`conf/policy/*.yaml`). A policy's config class
    derives from it, sets `name: str = policy_name("NAME")`, gives each of its own fields a
    `setting` (rule and description), and is its policy class's `config_class`."""

    name: str = policy_name("gru")
    sees_position: bool = setting(
        False, FLAG, "true: also feed the current cell at each step (a Markov variant)"
    )


@dataclass
class GruConfig(PolicyConfig):
    name: str = policy_name("gru")
    hidden: int = setting(
        64, COUNT, "model width d (GRU: conv channels, state and attention width)"
    )
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
    """The config class of the policy `name`: the subclass of `PolicyConfig` that sets its
    `name` to it (`policy_name("NAME")`). A name none of the classes defined so far has loads
    the policy modules (`mazerl.policy.MODULES`, with torch: a config class beside its model)
    and looks again; `PolicyConfig` itself for a name no policy has (its `name` rule then
    refuses it)."""
    if name not in _config_classes():
        _ = importlib.import_module("mazerl.policy").POLICIES  # imports every module
    return _config_classes().get(name, PolicyConfig)


def policy_names() -> list[str]:
    """The names of the policies whose config classes are defined: the built-ins', and each
    loaded plug-in's."""
    return sorted(_config_classes())


def _config_classes(cls: type = PolicyConfig) -> dict[str, type[PolicyConfig]]:
    """Name -> config class, for every subclass of `cls` that sets its own `name`."""
    found = {}
    for sub in cls.__subclasses__():
        if "name" in inspect.get_annotations(sub):
            found[sub.name] = sub
        found |= _config_classes(sub)
    return found
