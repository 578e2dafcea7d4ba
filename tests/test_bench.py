"""`mazerl-bench` measures the trainer: its training figures call the trainer's own step."""

import ast
import inspect

import pytest

from mazerl.apps import bench
from mazerl.train.step import TrainStep

# what a copy of the training step would call: a backward pass, an optimizer, a loss
STEP_CALLS = {"backward", "zero_grad", "clip_grad_norm_", "AdamW", "policy_loss", "SimpleNamespace"}


def test_bench_holds_no_copy_of_the_step_and_no_policy_settings_of_its_own():
    tree = ast.parse(inspect.getsource(bench))
    called = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not called & STEP_CALLS, called & STEP_CALLS
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not {m for m in imported if m.startswith(("mazerl.algos", "mazerl.train.update"))}
    # settings come from the composed config, never typed into a config class here
    typed = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", "").endswith("Config")
        and (node.args or any(k.arg is not None for k in node.keywords))
    ]
    assert not typed, typed


@pytest.fixture
def recorded(monkeypatch):
    """The `TrainStep.update` calls a figure makes: (skip setting, update metrics) each."""
    calls = []
    update = TrainStep.update

    def spy(self, learner, batch, advantages, it):
        metrics, skipped = update(self, learner, batch, advantages, it)
        calls.append((self.train.skip_zero_advantage, metrics))
        return metrics, skipped

    monkeypatch.setattr(TrainStep, "update", spy)
    return calls


def test_default_job_row_times_the_trainers_step_at_the_default_shape(recorded):
    cfg = bench.composed()
    row = bench.iteration_figure(1)
    assert (row["policy"], row["prompts"], row["group_size"]) == (
        cfg.policy.name,
        cfg.train.num_prompts,
        cfg.train.group_size,
    )
    assert len(recorded) == 2  # the warm-up and one timed iteration
    for _, metrics in recorded:  # mixed groups: every row takes part, the gradient is not zero
        assert metrics["update_rows_frac"] == 1.0 and metrics["grad_norm"] > 0
    assert row["total"] == pytest.approx(
        sum(row[k] for k in ("mazes", "rollout", "advantages", "update"))
    )


def test_skip_row_gets_its_variant_through_the_step_settings(recorded):
    row = bench.skip_update_figure(8, 0.5, 1)
    assert row["zero_adv_groups"] == 0.5
    by_setting = {skip: metrics["update_rows_frac"] for skip, metrics in recorded}
    # skipping computes the 8 mixed groups of 16; the full computation every group
    assert by_setting == {True: 0.5, False: 1.0}


def test_phase_table_times_every_phase_of_the_trainers_step_at_the_cell_shape(recorded):
    cfg = bench.composed("experiment=leaderboard", "cell=n8", "seed=0")
    row = bench.phase_figure("n8", iterations=1, warmup=0)
    assert (row["prompts"], row["group_size"]) == (cfg.train.num_prompts, cfg.train.group_size)
    assert len(recorded) == 2  # the timed iteration and the one whose FLOPs are counted
    assert all(row[f"{k}_ms"] > 0 for k in bench.PHASES), row
    assert row["total_ms"] == pytest.approx(sum(row[f"{k}_ms"] for k in bench.PHASES))
    assert sum(row[f"{k}_share"] for k in bench.PHASES) == pytest.approx(1.0)
    assert all(row[f"{k}_flops_per_s"] > 0 for k in bench.MATMUL_PHASES), row
