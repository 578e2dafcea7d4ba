"""A method acting through the ratio rho only (Clip-Cov, KL-Cov) run at one update per batch
is GRPO: the leaderboard shows its values but compares it with nothing."""

import yaml
from test_leaderboard import GRPO, T2, line, section
from test_paired import fake_run

from mazerl.algos import POLICY_LOSSES
from mazerl.analysis import summarize


def ratio_sweep(root, minibatches: int):
    """GRPO, MaxRL (+0.1, +0.2, +0.3 by seed) and Clip-Cov (+0.05, +0.1, +0.0) at N = 8,
    Clip-Cov run with `minibatches` optimizer steps per batch."""
    shifts = {"grpo": (0, 0, 0), "maxrl": (0.1, 0.2, 0.3), "clip_cov": (0.05, 0.1, 0.0)}
    for algo, shift in shifts.items():
        for seed in (0, 1, 2):
            overrides = [f"algo={algo}", "focal.gamma=0", f"seed={seed}", "train.group_size=8"]
            p = [x + shift[seed] for x in GRPO[seed]]
            run = fake_run(root, f"{algo}_s{seed}", overrides, p, tb=False, rise=0.0)
            path = run / ".hydra" / "config.yaml"
            config = yaml.safe_load(path.read_text())
            config["algo"]["loss"] = algo if algo in POLICY_LOSSES else "clip"  # GRPO's, MaxRL's
            config["train"] |= {
                "ppo_epochs": 1,
                "minibatches": minibatches if algo != "grpo" else 1,
            }
            path.write_text(yaml.safe_dump(config))
    return root


def test_clip_cov_at_one_update_per_batch_is_shown_but_not_compared(tmp_path):
    table = summarize(ratio_sweep(tmp_path / "one", minibatches=1))
    rows = section(table, "### Leaderboard, id")
    clip = line(rows, "| 8 | Clip-Cov")
    # its values: GRPO's pass@1 0.3 on every seed plus 0.05, 0.1, 0: (0.35 + 0.4 + 0.3) / 3
    assert clip[2:4] == ["3", "35.0"]
    assert clip[6:9] == ["not compared", "not compared", "= GRPO at one update per batch"]
    # only MaxRL's two intervals are counted
    assert "2 intervals in this table" in table.split("### Leaderboard, id")[1]
    # with 4 minibatches rho moves: compared as any method, differences 5, 10, 0 points on
    # both mazes: mean 5, sd 5, se 5 / sqrt(3) on 2 df
    rows = section(summarize(ratio_sweep(tmp_path / "four", minibatches=4)), "### Leaderboard, id")
    half = T2 * 5 / 3**0.5
    assert line(rows, "| 8 | Clip-Cov")[6] == f"+5.0 [{5 - half:+.1f}, {5 + half:+.1f}]"


def test_the_losses_acting_through_the_ratio_say_so():
    """Each loss's declaration (`@surrogate(..., on_policy=...)`) names a registered loss; the
    covariance methods' losses are GRPO's clip at one update per batch, the others themselves."""
    from mazerl.algos import on_policy_loss

    at_one_update = {name: on_policy_loss(name) for name in POLICY_LOSSES.names()}
    assert all(loss in POLICY_LOSSES for loss in at_one_update.values())
    assert {n for n, loss in at_one_update.items() if loss != n} == {"clip_cov", "kl_cov"}
    assert at_one_update["clip_cov"] == at_one_update["kl_cov"] == "clip"
    assert on_policy_loss("not_installed") == "not_installed"
