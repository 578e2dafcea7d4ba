"""`FocalGRPOTrainer`: TRL's `GRPOTrainer` whose advantages are mazerl's (any registered
estimator by name, times the focal weight g = (1 - mu_hat)^gamma).

TRL has no advantage hook: its maintainers point users to subclassing `GRPOTrainer` and
overriding `_generate_and_score_completions`, which computes the advantages inline and returns
them in its output dict (huggingface/trl#4525). This class overrides that method (call it,
replace `advantages`) and `_calculate_rewards` (call it, keep its result): the latter returns
the rewards of the whole generation batch gathered over processes, `[B * G, F]` for F reward
functions, which the groups need; keeping them avoids running the reward functions twice.
Rewards are combined as TRL does (weighted sum over functions), grouped `[B, G]`, passed to
`mazerl.llm.objective.focal_advantages`, and sliced back to this process's rows. A completion
that every reward function left unscored (None) gets advantage 0, as in TRL, but counts as
reward 0 in its group's statistics (TRL leaves it out); `maze_reward` never returns None. TRL's loss
(`loss_type`), clipping and KL are unchanged; only the advantages differ.

Logged with TRL's metrics (TensorBoard with `report_to="tensorboard"`): `focal_weight_mean`
(over groups with a non-zero advantage, as `mazerl-train`) and `frac_zero_adv_groups`.
Tested with TRL 1.16.
"""

import warnings

import torch
from trl import GRPOTrainer

from mazerl.llm.objective import check_objective, focal_advantages

# the FutureWarnings of transformers 5's deprecated `gradient_checkpointing*` names, which TRL's
# `_generate_and_score_completions` calls (`is_gradient_checkpointing`, `..._disable`,
# `..._enable`); pass `activation_checkpointing` to `GRPOConfig` to avoid the config's own
DEPRECATED_CHECKPOINTING = r"`(is_)?gradient_checkpointing\w*` is deprecated"


class FocalGRPOTrainer(GRPOTrainer):
    """`GRPOTrainer(..., algo="grpo", focal_gamma=0.5, advantage_kwargs=None)`: `algo` a
    registered mazerl advantage estimator (`drgrpo`, `grpo`, `maxrl`, `passk`, `rloo`,
    `w_reinforce`, `pkpo`), `focal_gamma` >= 0 (0: the estimator alone), `advantage_kwargs`
    the estimator's hyperparameters over those of its method file `conf/algo/<algo>.yaml`
    (`objective.method_kwargs`: `{"k": 4}` for `passk` and `pkpo`). Every other argument is
    `GRPOTrainer`'s."""

    def __init__(
        self,
        *args,
        algo: str = "grpo",
        focal_gamma: float = 0.5,
        advantage_kwargs: dict | None = None,
        **kwargs,
    ):
        # the method file's hyperparameters under the given ones, checked before TRL's set-up
        self.advantage_kwargs = check_objective(algo, focal_gamma, dict(advantage_kwargs or {}))
        super().__init__(*args, **kwargs)
        self.algo, self.focal_gamma = algo, focal_gamma
        self._gathered_rewards: torch.Tensor | None = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        self._gathered_rewards = super()._calculate_rewards(
            inputs, prompts, completions, completion_ids_list
        )
        return self._gathered_rewards

    def _generate_and_score_completions(self, inputs):
        with warnings.catch_warnings():  # TRL 1.16 reads transformers' deprecated names here
            warnings.filterwarnings("ignore", DEPRECATED_CHECKPOINTING, FutureWarning)
            output = super()._generate_and_score_completions(inputs)
        mode = "train" if self.model.training else "eval"
        group = self.num_generations if mode == "train" else self.num_generations_eval
        per_func = self._gathered_rewards
        weights = self.reward_weights.to(per_func.device)
        rewards = (per_func * weights).nansum(dim=1).view(-1, group)  # [B, G]
        advantages, g = focal_advantages(
            rewards, self.algo, self.focal_gamma, **self.advantage_kwargs
        )
        advantages = advantages.masked_fill(per_func.isnan().all(dim=1).view(-1, group), 0.0)
        mixed = rewards.ne(rewards[:, :1]).any(dim=1)
        local = len(output["advantages"])
        start = self.accelerator.process_index * local
        output["advantages"] = advantages.reshape(-1)[start : start + local].to(
            output["advantages"].device
        )
        focal_mean = (g.squeeze(1) * mixed).sum() / mixed.sum().clamp(min=1)
        self._metrics[mode]["focal_weight_mean"].append(focal_mean.item())
        self._metrics[mode]["frac_zero_adv_groups"].append((~mixed).float().mean().item())
        return output
