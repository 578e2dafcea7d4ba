"""Group advantage estimators and reward transforms: `[P, G]` (P prompts, G rollouts each) ->
`[P, G]`.

An estimator is registered with `@estimator("name")`: `fn(rewards, **params)`, its
hyperparameters keyword arguments that come from `algo.advantage_kwargs` (an argument it does
not take is an error). It checks its own values and raises `ConfigError` on a bad one (the
config is checked by calling it once on a group of the run's size before any work starts).
It declares whether it gives exactly 0 to every group whose rewards are all equal
(`all_equal_zero`, in any dtype and never NaN): the GRPO family does; W-REINFORCE does not
(it pushes down all-wrong groups), so DAPO's filter, which drops such groups, cannot be used
with it. An estimator that needs more than the rewards asks for it by a keyword parameter
named after one of `INPUTS` (`estimator_inputs`): the step computes and hands over only what
it asks for, so an estimator of rewards alone stays a pure function of them. A reward
transform (`@REWARD_TRANSFORMS.register("name")`, `fn(rewards, **params)` from
`algo.reward_transform_kwargs`) maps a group's rewards to new ones before the estimator sees
them (PKPO's pass@k transform).
"""

import math
from collections.abc import Callable

import torch

from mazerl.algos.config import ADVANTAGES, REWARD_TRANSFORMS  # noqa: F401  (the API)
from mazerl.core.errors import ConfigError

AdvantageFn = Callable[..., torch.Tensor]

# what an estimator may ask for besides the rewards, by a keyword parameter of that name
INPUTS = {
    "logp_mean": "[P, G] float, each sample's mean token log-probability (sampling policy)",
    "greedy_correct": "[P] bool, whether the prompt's greedy answer (argmax per token) is correct",
}


def estimator(name: str, *, all_equal_zero: bool = True) -> Callable[[AdvantageFn], AdvantageFn]:
    """`@estimator("name")` registers an advantage estimator.

    Args:
        name: the estimator's name, the option `algo.advantage=NAME`.
        all_equal_zero: False declares that it gives some all-equal groups a non-zero
            advantage (W-REINFORCE), so DAPO's filter is refused with it.

    Returns:
        The decorator: it marks the function and registers it in `ADVANTAGES`.
    """

    def add(fn: AdvantageFn) -> AdvantageFn:
        fn.all_equal_zero = all_equal_zero
        return ADVANTAGES.register(name)(fn)

    return add


def declares_all_equal_zero(name: str) -> bool:
    """Whether an estimator declares exactly 0 for every all-equal group.

    Args:
        name: a registered estimator.

    Returns:
        Its declaration; False for one registered without `estimator` (it does not say, so
        it is not assumed to).
    """
    return getattr(ADVANTAGES.get(name), "all_equal_zero", False)


def estimator_inputs(name: str) -> tuple[str, ...]:
    """What an estimator asks for besides the rewards.

    Args:
        name: a registered estimator.

    Returns:
        The names of `INPUTS` among its keyword parameters (named ones: `**kwargs` asks for
        nothing), in `INPUTS`' order.
    """
    params = ADVANTAGES.parameters(name)
    return tuple(k for k in INPUTS if k in params)


def non_negative(name: str, value) -> float:
    """A checked weight, such as W-REINFORCE's lambda.

    Args:
        name: the parameter's name, for the error.
        value: the value given.

    Returns:
        `value` as a float.

    Raises:
        ConfigError: `value` is not a finite number >= 0.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
    if value < 0:
        raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def subset_size(name: str, value, group_size: int) -> int:
    """A checked subset size: the k of pass@k from a group of N.

    Args:
        name: the parameter's name, for the error.
        value: the value given.
        group_size: N.

    Returns:
        `value`.

    Raises:
        ConfigError: `value` is not an integer in [1, N].
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= group_size:
        raise ConfigError(
            f"{name} must be an integer in [1, the group size N={group_size}], got {value!r}"
        )
    return value


def all_equal(rewards: torch.Tensor) -> torch.Tensor:
    """Whether each group's rewards are all equal.

    Args:
        rewards: `[P, G]` rewards.

    Returns:
        `[P, 1]` bool.
    """
    return (rewards == rewards[..., :1]).all(-1, keepdim=True)


def normalised(rewards: torch.Tensor, eps: float = 1e-6, correction: int = 1) -> torch.Tensor:
    """(r_i - mean(r)) / (std(r) + eps) within each group, exactly 0 in an all-equal group.

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        eps: added to the std (a group of one has std 1).
        correction: the std's degrees-of-freedom correction: 1 the unbiased (G - 1) estimate,
            0 the population std.

    Returns:
        `[P, G]` normalised rewards, in `rewards`' dtype.
    """
    centred = rewards - rewards.mean(-1, keepdim=True)
    if rewards.shape[-1] > 1:
        std = rewards.std(-1, keepdim=True, correction=correction)
    else:
        std = torch.ones_like(centred)
    return torch.where(all_equal(rewards), 0.0, centred / (std + eps))


@estimator("grpo")
def grpo(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """A_i = (r_i - mean(r)) / (std(r) + eps) within each group (GRPO, arXiv 2402.03300).

    std is the unbiased (N - 1) estimate and eps = 1e-6, as in verl's
    `compute_grpo_outcome_advantage`, which the paper's Maze runs use.

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.
        eps: added to the std (a group of one has std 1).

    Returns:
        `[P, G]` advantages, exactly 0 in an all-equal group.
    """
    return normalised(rewards, eps)


@estimator("drgrpo")
def drgrpo(rewards: torch.Tensor) -> torch.Tensor:
    """A_i = r_i - mean(r): mean baseline, no std (Dr. GRPO, arXiv 2503.20783).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.

    Returns:
        `[P, G]` advantages, exactly 0 in an all-equal group.
    """
    centred = rewards - rewards.mean(-1, keepdim=True)
    return torch.where(all_equal(rewards), 0.0, centred)


@estimator("rloo")
def rloo(rewards: torch.Tensor) -> torch.Tensor:
    """A_i = r_i - mean_{j != i} r_j = G/(G-1) (r_i - mean(r)): leave-one-out baseline
    (RLOO, Ahmadian et al. 2024, arXiv 2402.14740).

    Args:
        rewards: `[P, G]` rewards, P prompts of G rollouts each.

    Returns:
        `[P, G]` advantages, exactly 0 in an all-equal group.
    """
    g = rewards.shape[-1]
    centred = rewards - rewards.mean(-1, keepdim=True)
    return torch.where(all_equal(rewards), 0.0, centred * (g / max(g - 1, 1)))
