"""The settings of `mazerl-categorical`: the simulation (`SimConfig`, the `sim` section) and
the method it trains with, each field with its rule and description. No torch here: `--help`
reads these classes without loading the simulation (`mazerl.categorical.sim`).
"""

from dataclasses import dataclass

from omegaconf import OmegaConf

from mazerl.algos import AlgoConfig, FocalConfig
from mazerl.core.device import threads_setting
from mazerl.core.settings import (
    COUNT,
    FLAG,
    NATURAL,
    POSITIVE,
    SEED,
    need,
    number,
    one_of,
    part,
    setting,
)

# the optimizer of the logits: its name -> the `torch.optim` class
OPTIMIZERS = {
    "sgd": "SGD",  # z <- z - lr grad: the paper's "gradient ascent" read literally
    "adam": "Adam",  # no weight decay; per-logit steps of about lr (BroRL's AdamW)
}


@dataclass
class SimConfig:
    """The `sim` section of `mazerl-categorical`: the answers, their initial logits and
    rewards, the group size and the optimizer."""

    num_actions: int = setting(1000, number(2, integer=True), "answers of the categorical policy")
    num_correct: int = setting(100, COUNT, "answers 0 .. num_correct-1 are correct")
    num_rare: int = setting(40, NATURAL, "the last num_rare correct answers start with rare_logit")
    anchor_logit: float = setting(3.0, number(), "initial logit of correct answer 0")
    correct_logit: float = setting(
        1.0, number(), "initial logit of the other common correct answers"
    )
    rare_logit: float = setting(-1.5, number(), "initial logit of the rare correct answers")
    incorrect_logit: float = setting(-1.0, number(), "initial logit of the incorrect answers")
    reward_correct: float = setting(1.0, number(), "reward of a correct answer")
    reward_wrong: float = setting(0.0, number(), "reward of a wrong answer")
    group_size: int = setting(8, number(2, integer=True), "samples per group, N")
    steps: int = setting(300, COUNT, "optimizer steps")
    lr: float = setting(0.3, POSITIVE, "learning rate")
    optimizer: str = setting("sgd", one_of(*OPTIMIZERS), "sgd | adam")
    replicas: int = setting(64, COUNT, "independent seeds, simulated as one batch")
    forget_fraction: float = setting(
        0.1, number(0, 1), "a correct answer is forgotten below this fraction of its first mass"
    )
    log_every: int = setting(10, COUNT, "steps between logged values")
    seed: int = setting(0, SEED, "random seed of the simulation")

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """Some answers wrong, some correct answers common; a correct answer pays more."""
        need(
            node.num_correct < node.num_actions,
            f"{prefix}num_correct",
            f"< {prefix}num_actions={node.num_actions}",
            node.num_correct,
        )
        need(
            node.num_rare < node.num_correct,
            f"{prefix}num_rare",
            f"< {prefix}num_correct={node.num_correct}",
            node.num_rare,
        )
        need(
            node.reward_correct > node.reward_wrong,
            f"{prefix}reward_correct",
            f"> {prefix}reward_wrong={node.reward_wrong}",
            node.reward_correct,
        )


@dataclass
class CategoricalConfig:
    """`mazerl-categorical`'s settings: the simulation and the method it trains with."""

    sim: SimConfig = part(SimConfig, "the categorical simulation")
    algo: AlgoConfig = part(AlgoConfig, "the method (conf/algo)")
    focal: FocalConfig = part(FocalConfig, "F-GRPO's focal weighting (conf/focal)")
    compare_base: bool = setting(True, FLAG, "also simulate gamma = 0 for the comparison plot")
    threads: int = threads_setting()

    @classmethod
    def check_between(cls, node, prefix: str) -> None:
        """The method on groups of `sim.group_size` (`check_algo`)."""
        from mazerl.algos import check_algo  # the objectives: torch, loaded only to check

        check_algo(OmegaConf.to_object(node.algo), node.sim.group_size)
