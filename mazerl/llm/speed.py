"""TRL's GRPO throughput on maze prompts, for `mazerl-bench`'s TRL-versus-mazerl row (which
imports this module only to learn whether the extra is installed)."""

import tempfile
import time
from collections.abc import Sequence

from datasets import Dataset
from transformers import PrinterCallback, TrainerCallback
from trl import GRPOConfig

from mazerl.envs.maze import Maze
from mazerl.llm.export import records
from mazerl.llm.models import maze_tokenizer, tiny_model
from mazerl.llm.trainer import FocalGRPOTrainer
from mazerl.llm.verifier import maze_reward
from mazerl.policy.transformer import TransformerConfig


def trl_grpo_speed(
    mazes: Sequence[Maze], group: int, steps: int, policy: TransformerConfig, seed: int = 0
) -> dict:
    """Time `steps` GRPO steps of `FocalGRPOTrainer` (after one warm-up step) on a randomly
    initialised Qwen2 of `policy`'s shape: every step generates `group` completions for each of
    the `mazes` (one batch) and updates once. Completions are capped at the longest solution
    plus one token (a solving policy's answer length). Returns `rollouts_per_s` (rollouts over
    the timed steps' wall time) and `tokens_per_rollout` (mean completion length)."""

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds.append(time.perf_counter() - self.t0)

    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            per_device_train_batch_size=len(mazes) * group,
            num_generations=group,
            max_completion_length=max(len(m.solution) for m in mazes) + 1,
            max_steps=steps + 1,
            learning_rate=1e-4,
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            seed=seed,
            activation_checkpointing=True,  # GRPOConfig's default, by its non-deprecated name
        )
        trainer = FocalGRPOTrainer(
            model=tiny_model(policy, seed),
            processing_class=maze_tokenizer(),
            reward_funcs=maze_reward,
            args=config,
            train_dataset=Dataset.from_list(records(mazes, "maxrl", "train", "bench")),
            callbacks=[timer],
        )
        trainer.remove_callback(PrinterCallback)  # keep the bench's output to its JSON lines
        trainer.train()
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history[1:] if "loss" in h]
    return {
        "rollouts_per_s": len(mazes) * group * steps / sum(timer.seconds[1:]),
        "tokens_per_rollout": sum(lengths) / len(lengths),
    }
