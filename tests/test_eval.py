"""The evaluator against a policy whose success probability is known exactly."""

import json

import numpy as np
import pytest
import torch
from conftest import ROOT, TINY_JOB

from mazerl.envs.maze import replay
from mazerl.envs.spec import MazeSpec, sample_mazes
from mazerl.eval.evaluate import EvalSet, SetResult, evaluate_set, route_logprobs
from mazerl.eval.metric_names import Metric, set_values
from mazerl.eval.passk import exact_pass_at_k
from mazerl.policy.base import SequencePolicy
from mazerl.policy.tokens import N_ACTIONS, encode


class NoisyFollower(SequencePolicy):
    """On the solution path it takes the next solution move with probability q and each of the
    other 4 actions with (1 - q) / 4; elsewhere it picks uniformly. Only the solution reaches
    the goal, so its success probability on a maze with an L-move solution is exactly q^L."""

    sees_position = True  # it looks its move up by cell

    def __init__(self, mazes, q: float) -> None:
        super().__init__()
        self.q = q
        self.tables = {}
        for m in mazes:
            table = np.full(m.shape, -1)
            for cell, move in zip(replay(m.grid, m.start, m.solution), m.solution, strict=False):
                table[cell] = move
            self.tables[encode([m]).cells[0].numpy().tobytes()] = torch.as_tensor(table)

    def _tables(self, prompts, group_size):
        per_prompt = [self.tables[c.numpy().tobytes()] for c in prompts.cells]
        return torch.stack(per_prompt).repeat_interleave(group_size, 0)

    def prefill(self, prompts, group_size, max_len=0):
        return self._tables(prompts, group_size)

    def step(self, state, prev, pos):
        rows = torch.arange(len(pos))
        move = state[rows, pos[:, 0], pos[:, 1]]
        logits = torch.full((len(pos), N_ACTIONS), float(np.log((1 - self.q) / 4)))
        on_path = move >= 0
        logits[on_path, move[on_path]] = float(np.log(self.q))
        logits[~on_path] = 0.0
        return logits, state

    def forward(self, prompts, group_size, actions, positions):
        tables = self._tables(prompts, group_size)
        out = []
        for t in range(actions.shape[1]):
            out.append(self.step(tables, None, positions[:, t])[0])
        return torch.stack(out, 1)


@pytest.fixture(scope="module")
def mazes():
    spec = MazeSpec(size=3, start_goal="random")
    return [spec.sample(np.random.default_rng([5, i])) for i in range(120)]


def test_exact_success_probability_is_q_to_the_length(mazes):
    policy = NoisyFollower(mazes, q=0.8)
    logp = route_logprobs(policy, mazes, temperature=1.0, device="cpu")
    lengths = np.array([m.shortest_path_length for m in mazes])
    np.testing.assert_allclose(logp[:, 0].exp().numpy(), 0.8**lengths, rtol=1e-5)


def test_sampled_pass_at_k_agrees_with_exact_within_standard_error(mazes):
    q = 0.8
    policy = NoisyFollower(mazes, q=q)
    result = evaluate_set(
        policy,
        EvalSet("known", mazes),
        n=256,
        ks=[1, 4, 16, 64, 256],
        exact_ks=[1, 4, 16, 64, 256, 1024],
        temperature=1.0,
        allow_revisits=False,
        generator=torch.Generator().manual_seed(0),
        batch_rollouts=8192,
        device="cpu",
    ).to_json()  # as saved: each value under its key within the set
    p = 0.8 ** np.array([m.shortest_path_length for m in mazes])
    for k in (1, 4, 16, 64, 256, 1024):  # exact values, by hand
        assert result[f"exact_pass@{k}"] == pytest.approx(exact_pass_at_k(p, k).mean(), abs=1e-6)
    for k in (1, 4, 16, 64, 256):  # the unbiased sampled estimate agrees within 3 SE
        gap = abs(result[f"pass@{k}"] - result[f"exact_pass@{k}"])
        assert gap <= 3 * result[f"pass@{k}_se"] + 0.02, (k, gap)
    assert result["success_rate"] == pytest.approx(result["pass@1"])
    assert result["coverage"] == pytest.approx(
        np.mean(np.array(result["per_maze"]["successes"]) > 0)
    )
    assert len(result["per_maze"]["successes"]) == len(mazes)


def test_a_sets_values_are_keyed_by_metric_and_saved_under_the_committed_keys(mazes):
    """`evaluate_set` returns its values keyed by `Metric` (named within the set); what a run
    saves is each under its `Metric.key`: a committed evaluation file read back and saved
    again holds the same keys and values."""
    result = evaluate_set(
        NoisyFollower(mazes[:6], q=0.8), EvalSet("known", mazes[:6]), n=4, ks=[1, 4],
        exact_ks=[1, 8], temperature=1.0, allow_revisits=False,
        generator=torch.Generator().manual_seed(0), batch_rollouts=64, device="cpu",
    )  # fmt: skip
    assert all(isinstance(m, Metric) and (m.set, m.source) == ("", "eval") for m in result.values)
    p = 0.8 ** np.array([m.shortest_path_length for m in mazes[:6]])
    assert result.values[Metric("exact_pass", k=1)] == pytest.approx(p.mean(), abs=1e-6)
    assert result.on_set("known")[Metric("exact_pass", "known", 1)] == pytest.approx(p.mean())
    assert result.to_json()["exact_pass@8"] == result.values[Metric("exact_pass", k=8)]
    run = ROOT / "experiments" / "runs" / "methods_routes" / "clip_cov_N8_g0.0_s0"
    committed = json.loads((run / "eval" / "step_0000250.json").read_text())
    again = {s: SetResult.from_json(r).to_json() for s, r in committed.items()}
    assert again == committed
    assert "exact_pass@256_se" in committed["id"] and "per_maze" in committed["id"]


def test_a_saved_evaluation_reads_back_as_metrics_of_its_sets():
    """The analysis reads a set's saved values as `Metric`s of that set (`set_values`), no
    name built by hand: a standard error is its own value, not the value it belongs to."""
    from mazerl.analysis.runs import eval_value, eval_values, read_run

    saved = {"pass@1": 0.5, "pass@1_se": 0.125, "per_maze": {"n": 4}, "mazes": {"exact": 2}}
    pass1 = Metric("pass", "id", 1)
    assert set_values(saved | {"flag": True}, "id") == {pass1: 0.5, pass1.se(): 0.125}
    # a language model's set also says its answers' length limit: a fact, not a metric
    assert set_values(saved | {"max_new_tokens": 64}, "id") == {pass1: 0.5, pass1.se(): 0.125}
    assert SetResult.from_json(saved | {"max_new_tokens": 64}).on_set("id") == {
        pass1: 0.5,
        pass1.se(): 0.125,
    }
    assert set_values({"rare_mass": 0.25}, "ood", "routes") == {
        Metric("rare_mass", "ood", source="routes"): 0.25
    }
    run = read_run(ROOT / "experiments" / "runs" / "methods_routes" / "clip_cov_N8_g0.0_s0")
    committed = json.loads((run.path / "eval" / "step_0000250.json").read_text())["id"]
    exact256 = Metric("exact_pass", "id", 256)
    assert committed["exact_pass@256_se"] != committed["exact_pass@256"]
    assert eval_value(run, 250, exact256.se()) == committed["exact_pass@256_se"]
    assert eval_value(run, 250, exact256) == committed["exact_pass@256"]
    values = eval_values(run, 250)
    assert values[exact256.se()] == committed["exact_pass@256_se"]
    assert {m.set for m in values} == set(
        json.loads((run.path / "eval" / "step_0000250.json").read_text())
    )


def test_temperature_scales_exact_probability(mazes):
    policy = NoisyFollower(mazes[:4], q=0.8)
    hot = route_logprobs(policy, mazes[:4], temperature=2.0, device="cpu")[:, 0]
    # at temperature 2 the correct move has probability sqrt(q) / (sqrt(q) + 4 sqrt((1-q)/4))
    step = np.sqrt(0.8) / (np.sqrt(0.8) + 4 * np.sqrt(0.05))
    lengths = torch.tensor([m.shortest_path_length for m in mazes[:4]], dtype=torch.float64)
    torch.testing.assert_close(hot.double().exp(), step**lengths, rtol=1e-5, atol=0)


def test_training_mazes_never_equal_evaluation_mazes():
    spec = MazeSpec(size=2)  # only 4 perfect 2x2 mazes exist
    every = {m.key for m in sample_mazes(spec, 400, set(), 1)}
    assert len(every) == 4
    held_out = {m.key for m in sample_mazes(spec, 2, set(), 99)}
    drawn = {m.key for m in sample_mazes(spec, 200, held_out, 7)}
    assert drawn == every - held_out  # the others are drawn, the held-out ones never


def test_exact_metrics_cover_every_maze_and_sampling_the_first_ones(mazes):
    q = 0.8
    policy = NoisyFollower(mazes, q=q)
    kw = dict(
        n=16,
        ks=[1, 16],
        exact_ks=[1, 2048],
        temperature=1.0,
        allow_revisits=False,
        batch_rollouts=4096,
        device="cpu",
    )
    part = evaluate_set(
        policy, EvalSet("known", mazes), **kw, generator=torch.Generator().manual_seed(0),
        sampled_mazes=10,
    ).to_json()  # fmt: skip
    alone = evaluate_set(
        policy, EvalSet("first", mazes[:10]), **kw, generator=torch.Generator().manual_seed(0)
    ).to_json()
    p = q ** np.array([m.shortest_path_length for m in mazes], dtype=float)
    np.testing.assert_allclose(part["per_maze"]["exact_p"], p, rtol=1e-5)
    for k in (1, 2048):  # mean and standard error over all 120 mazes, by hand
        per = 1 - (1 - p) ** k
        assert part[f"exact_pass@{k}"] == pytest.approx(per.mean(), abs=1e-6)
        assert part[f"exact_pass@{k}_se"] == pytest.approx(per.std(ddof=1) / np.sqrt(120), rel=1e-4)
    # the sampled metrics are those of the first 10 mazes alone, same stream, same samples
    assert part["per_maze"]["successes"] == alone["per_maze"]["successes"]
    assert len(part["per_maze"]["successes"]) == 10
    assert part["pass@16"] == alone["pass@16"] and part["coverage"] == alone["coverage"]
    assert part["per_maze"]["mazes_hash"] != alone["per_maze"]["mazes_hash"]


def test_evaluation_sets_are_built_once_per_config(tmp_path):
    from hydra import compose, initialize_config_dir

    from mazerl.apps.schema import register_configs, typed
    from mazerl.core.config import CONF_DIR
    from mazerl.envs.spec import MazeSpec
    from mazerl.eval.evaluate import build_sets
    from mazerl.eval.runner import cached_sets

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = typed(compose(config_name="config", overrides=["experiment=smoke"]))
        other = typed(compose("config", overrides=["experiment=smoke", "eval.seed=7"]))
    spec = MazeSpec.of(cfg.maze)
    first = cached_sets(spec, cfg.eval, tmp_path)
    (stored,) = tmp_path.glob("sets_*.pkl")
    again = cached_sets(spec, cfg.eval, tmp_path)  # read back, not rebuilt
    built = build_sets(spec, cfg.eval)
    for sets in (first, again):
        assert [[m.key for m in s.mazes] for s in sets] == [[m.key for m in s.mazes] for s in built]
    cached_sets(MazeSpec.of(other.maze), other.eval, tmp_path)  # another seed: another file
    assert len(list(tmp_path.glob("sets_*.pkl"))) == 2
    stored.write_bytes(b"half a pickle")  # unreadable: rebuilt and replaced
    assert [m.key for m in cached_sets(spec, cfg.eval, tmp_path)[0].mazes] == [
        m.key for m in built[0].mazes
    ]
    assert stored.stat().st_size > 1000


def test_is_scalar_takes_every_real_number_and_nothing_else():
    from mazerl.eval.evaluate import is_scalar

    metrics = {
        "int": 3,
        "float": 0.75,
        "np_float32": np.float32(0.25),
        "np_int64": np.int64(7),
        "tensor_0d": torch.tensor(0.5),
        "long_tensor_0d": torch.tensor(4),
        "array_0d": np.array(2.5),
        "bool": True,
        "np_bool": np.bool_(False),
        "bool_tensor": torch.tensor(True),
        "tensor_1d": torch.tensor([1.0, 2.0]),
        "text": "0.5",
        "list": [1.0],
        "per_maze": {"successes": [1, 2]},
    }
    assert {k for k, v in metrics.items() if is_scalar(v)} == {
        "int",
        "float",
        "np_float32",
        "np_int64",
        "tensor_0d",
        "long_tensor_0d",
        "array_0d",
    }


def test_a_metric_returned_by_evaluate_set_reaches_tensorboard_metrics_json_and_the_sweep(
    tmp_path, monkeypatch
):
    """A new evaluation metric is one more entry of `evaluate_set`'s result, of any real type:
    it reaches TensorBoard, metrics.json (final and base) and `load_sweep`'s table."""
    import json

    from conftest import scalars as tb_scalars
    from hydra import compose, initialize_config_dir

    from mazerl.analysis.runs import load_sweep
    from mazerl.apps.schema import register_configs, typed, validate
    from mazerl.core.config import CONF_DIR
    from mazerl.eval import evaluate
    from mazerl.train.loop import train

    plain = evaluate.sampled_metrics

    def with_maze_count(correct, n, ks):  # a NumPy int and a NumPy float, added inside
        out = plain(correct, n, ks)  # evaluate_set (as a new metric is)
        return out | {Metric("maze_count"): np.int64(len(correct)), Metric("half"): np.float32(0.5)}

    monkeypatch.setattr(evaluate, "sampled_metrics", with_maze_count)
    register_configs()
    tiny = [
        *TINY_JOB,
        f"base.cache_dir={tmp_path / 'cache'}",
        "eval.sets=[{name: id, num_mazes: 3}, {name: big, size_delta: 1, num_mazes: 5}]",
        "eval.n_during=2",
        "eval.images=0",
        "logger.progress=off",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=tiny)
    validate(cfg)
    run = tmp_path / "run" / "job"
    train(typed(cfg), run)
    (run / ".hydra").mkdir()  # a run folder as Hydra leaves it, for `load_sweep`
    (run / ".hydra" / "overrides.yaml").write_text("[]\n")
    final = json.loads((run / "metrics.json").read_text())
    assert final["final"]["eval/id/maze_count"] == 3.0
    assert final["final"]["eval/big/maze_count"] == 5.0
    assert final["base"]["eval/big/half"] == 0.5
    assert tb_scalars(run)["eval/big/maze_count"][-1] == (1, 5.0)
    table = load_sweep(tmp_path / "run")
    assert table["big/maze_count"].tolist() == [5.0] and table["id/half"].tolist() == [0.5]
