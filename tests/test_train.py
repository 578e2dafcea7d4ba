"""The trainer end to end: TensorBoard output, metrics.json, learning, config composition."""

import math

import pytest
from conftest import metrics, scalars
from hydra import compose, initialize_config_dir
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from mazerl.apps.schema import register_configs, validate
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import ConfigError
from mazerl.eval.metric_names import Metric
from mazerl.train.schedule import iterations_for, lr_factor

TRAIN_TAGS = [
    "reward_mean",
    "success_rate",
    "frac_all_correct",
    "frac_all_wrong",
    "frac_zero_adv_groups",
    "focal_weight_mean",
    "entropy",
    "ratio_mean",
    "clipfrac_low",
    "clipfrac_high",
    "approx_kl",
    "grad_norm",
    "lr",
    "tokens_per_s",
    "rollouts_per_s",
    "loss",
    "skipped_steps",
]


def test_smoke_run_writes_tensorboard_metrics_and_checkpoints(train):
    _, run = train("train.iterations=6", "train.eval_every=3", "train.checkpoint_every=3")
    tags = scalars(run)
    for tag in TRAIN_TAGS:
        values = [v for _, v in tags[f"train/{tag}"]]
        assert [s for s, _ in tags[f"train/{tag}"]] == [1, 2, 3, 4, 5, 6], tag
        assert all(math.isfinite(v) for v in values), tag
    for s in ("id", "ood_large", "ood_dfs"):
        for k in (
            "pass@1",
            "pass@8",
            "exact_pass@1",
            "coverage",
            "success_rate",
            "delta_pass@1_vs_base",
            "delta_exact_pass@8_vs_base",
        ):
            steps = [step for step, _ in tags[Metric.on_set(k, s).tag]]
            assert steps == [0, 3, 6], (s, k)  # base at 0, during training, final
            assert all(math.isfinite(v) for _, v in tags[Metric.on_set(k, s).tag])
    assert tags["eval_vs_base/id/delta_pass@1"][0][1] == 0.0
    for t in ("time/rollout_s", "time/update_s", "time/eval_s", "time/elapsed_s"):
        assert t in tags
    acc = EventAccumulator(str(run / "tb"), size_guidance={"images": 0})
    acc.Reload()
    assert "images/id/0" in acc.Tags()["images"]
    assert "config/text_summary" in acc.Tags()["tensors"]
    assert "_hparams_/session_start_info" in acc.PluginTagToContent("hparams")
    m = metrics(run)
    assert m["iterations"] == 6 and m["hparams"]["algo"] == "grpo"
    assert m["hparams"]["gamma"] == 0.5 and m["hparams"]["group_size"] == 8
    assert set(m["final"]) >= {"eval/id/pass@1", "eval/id/pass@32", "eval/id/exact_pass@32"}
    assert m["base"]["eval/id/pass@1"] == pytest.approx(
        m["final"]["eval/id/pass@1"] - m["final"]["eval/id/delta_pass@1_vs_base"]
    )
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "ckpt_0000003.pt",
        "ckpt_0000006.pt",
    ]
    final_eval = (run / "eval" / "step_0000006.json").read_text()
    assert '"successes"' in final_eval  # per-maze success rates are saved


@pytest.mark.parametrize("sees_position", [False, True])
def test_rl_improves_on_the_base_policy(train, tmp_path, sees_position):
    """On small mazes the trained policy solves clearly more than the base (fixed seed)."""
    _, run = train(
        "train.iterations=80",
        "train.num_prompts=32",
        "train.group_size=8",
        "train.eval_every=0",
        "eval.n=64",
        f"policy.sees_position={sees_position}",
        run_dir=tmp_path / f"learn{int(sees_position)}",
        timeout=600,
    )
    m = metrics(run)
    base, final = m["base"]["eval/id/pass@1"], m["final"]["eval/id/pass@1"]
    # measured over seeds 0-2: +0.18 to +0.21 without positions, +0.49 to +0.51 with
    assert final > base + 0.1, (base, final)
    reward = [v for _, v in scalars(run)["train/reward_mean"]]
    assert sum(reward[-10:]) / 10 > sum(reward[:10]) / 10


@pytest.fixture
def composed():
    register_configs()

    def _compose(*overrides):
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose(config_name="config", overrides=list(overrides))

    return _compose


def test_defaults_are_f_grpo_and_groups_compose(composed):
    cfg = composed()
    assert (cfg.algo.name, cfg.focal.gamma, cfg.policy.name) == ("grpo", 0.5, "gru")
    validate(cfg)
    cfg = composed(
        "algo=cispo", "focal.gamma=1.0", "train.group_size=16", "maze.size=7", "policy=transformer"
    )
    assert (cfg.algo.loss, cfg.algo.clip_low, cfg.algo.clip_high) == ("cispo", 1.0, 5.0)
    assert (cfg.focal.gamma, cfg.train.group_size, cfg.maze.size) == (1.0, 16, 7)
    assert cfg.policy.layers == 2
    validate(cfg)
    assert composed("algo=dapo").algo.clip_high == 0.28
    assert composed("algo=drgrpo").algo.loss_agg_mode == "seq-mean-token-sum-norm"
    assert composed("focal=none").focal.gamma == 0.0
    paper = composed("experiment=paper_maze")
    assert (paper.maze.size, paper.train.num_prompts, paper.train.lr) == (8, 256, 1e-4)
    assert paper.policy.hidden == 256 and paper.train.iterations == 20000


def test_typos_and_wrong_types_fail_at_composition(composed):
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="lrr"):
        composed("train.lrr=1")
    with pytest.raises(ConfigCompositionException, match="group_size"):
        composed("train.group_size=eight")
    with pytest.raises(ConfigCompositionException, match="layers"):
        composed("policy.layers=3")  # the GRU has no `layers`


def test_validation_names_the_key(composed):
    with pytest.raises(ConfigError, match=r"train\.group_size must be >= 2"):
        validate(composed("train.group_size=1"))
    with pytest.raises(ConfigError, match=r"eval.ks must be in \[1, eval.n=256\]"):
        validate(composed("eval.ks=[1,512]"))


def test_budget_and_schedule():
    class T:
        iterations, group_size, budget, budget_reference_group_size = 100, 32, "rollouts", 8

    assert iterations_for(T) == 25  # 100 iterations at N=8 = 25 at N=32, same rollouts
    T.budget = "steps"
    assert iterations_for(T) == 100
    assert lr_factor(0, 100, 10, "constant") == pytest.approx(0.1)
    assert lr_factor(50, 100, 0, "cosine") == pytest.approx(0.5)
    assert lr_factor(99, 100, 0, "constant") == 1.0


def test_dapo_dynamic_sampling_keeps_only_mixed_groups(train, tmp_path):
    _, run = train(
        "algo=dapo",
        "algo.dynamic_sampling=true",
        "algo.dynamic_sampling_max_rounds=3",
        "train.iterations=4",
        "train.eval_every=0",
        run_dir=tmp_path / "dapo",
    )
    tags = scalars(run)
    rounds = [v for _, v in tags["train/sampling_rounds"]]
    zero_adv = [v for _, v in tags["train/frac_zero_adv_groups"]]
    assert all(1 <= r <= 4 for r in rounds) and max(rounds) > 1  # refilling happened
    assert zero_adv == [0.0, 0.0, 0.0, 0.0]  # every kept group carries a learning signal
