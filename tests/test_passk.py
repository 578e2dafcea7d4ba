"""pass@k against the direct combinatorial formula, and the exact/sampled agreement."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mazerl.eval.passk import default_ks, exact_pass_at_k, pass_at_k, standard_error


def comb_formula(n, c, k):
    return 1 - math.comb(n - c, k) / math.comb(n, k)


@settings(max_examples=400, deadline=None)
@given(n=st.integers(1, 1024), data=st.data())
def test_matches_math_comb(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    assert pass_at_k(n, c, k) == pytest.approx(comb_formula(n, c, k), abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 7, 256, 1024])
def test_edge_cases(n):
    assert pass_at_k(n, 0, 1) == 0.0 and pass_at_k(n, 0, n) == 0.0
    assert pass_at_k(n, n, 1) == 1.0 and pass_at_k(n, n, n) == 1.0
    assert pass_at_k(n, 1, n) == 1.0  # k = n with one correct: always found
    for c in range(0, n + 1, max(1, n // 7)):
        assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_known_values_and_vectorised():
    # 1 correct of 4 at k = 4 is 1.0 (a bootstrap with replacement would give about 0.684)
    assert pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    n = np.array([10, 10, 1024, 1024, 1024])
    c = np.array([0, 3, 1, 512, 1023])
    out = pass_at_k(n, c, 8)
    assert out.shape == (5,)
    expected = [comb_formula(int(a), int(b), 8) for a, b in zip(n, c, strict=True)]
    assert out.tolist() == pytest.approx(expected, abs=1e-12)


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(4, 1, 5)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(4, 5, 1)


def test_exact_and_standard_error():
    p = np.array([0.0, 1e-9, 0.5, 1.0])
    assert exact_pass_at_k(p, 1).tolist() == pytest.approx([0, 1e-9, 0.5, 1])
    assert exact_pass_at_k(p, 1024)[1] == pytest.approx(1024e-9, rel=1e-6)
    assert exact_pass_at_k(p, 1024)[2] == 1.0
    assert standard_error(np.array([0.0, 1.0])) == pytest.approx(0.5)
    assert default_ks(256) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert default_ks(100) == [1, 2, 4, 8, 16, 32, 64, 100]


def test_sampled_estimate_agrees_with_exact_within_standard_error():
    """A known stochastic 'policy': maze m succeeds with probability p_m. The sampled pass@k
    over mazes agrees with mean(1 - (1 - p)^k) within 3 standard errors."""
    rng = np.random.default_rng(0)
    p = rng.beta(0.3, 1.5, size=400)  # many rare-success mazes
    n = 256
    c = rng.binomial(n, p)
    for k in (1, 8, 64, 256):
        per_maze = pass_at_k(np.full_like(c, n), c, k)
        exact = exact_pass_at_k(p, k).mean()
        assert abs(per_maze.mean() - exact) < 3 * standard_error(per_maze) + 1e-9
