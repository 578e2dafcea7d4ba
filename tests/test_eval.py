"""The evaluator against a policy whose success probability is known exactly."""

import numpy as np
import pytest
import torch

from mazerl.envs.maze import replay
from mazerl.envs.spec import MazeSpec, sample_mazes
from mazerl.eval.evaluate import EvalSet, evaluate_set, route_logprobs
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
    )
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
