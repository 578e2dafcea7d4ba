"""Closed forms of the paper's categorical abstraction (F-GRPO section 3.1, Lemma 3.1), and
their Monte Carlo estimates.

A prompt's answers split into three regions: a rare correct region E (mass tau), the other
correct answers (mass p - tau) and the incorrect ones (mass 1 - p). For a group of N
independent samples:

    Pr(active)    = 1 - p^N - (1 - p)^N                      (mixed rewards: a non-zero update)
    Pr(all equal) = p^N + (1 - p)^N                          (no learning signal)
    Pr(B_tau)     = (1 - tau)^N - (1 - p)^N - (p - tau)^N    (active, yet no sample in E)

Pr(B_tau) is 0 at N = 1, rises, then falls: non-monotonic in N. All functions broadcast over
numpy arrays of N, p and tau.
"""

import numpy as np


def tail_miss(n, p, tau):
    """Pr(B_tau) = (1 - tau)^N - (1 - p)^N - (p - tau)^N (Lemma 3.1).

    Args:
        n: the group size N.
        p: the success probability p, in [0, 1].
        tau: the rare correct region's mass, 0 <= tau <= p.

    Returns:
        The probability that a group is active yet samples nothing in E (broadcast).
    """
    n, p, tau = np.asarray(n, float), np.asarray(p, float), np.asarray(tau, float)
    return (1 - tau) ** n - (1 - p) ** n - (p - tau) ** n


def active(n, p):
    """Pr(0 < X < N): the group has mixed rewards, so its update is non-zero (Eq. 7).

    Args:
        n: the group size N.
        p: the success probability p, in [0, 1].

    Returns:
        The probability (broadcast).
    """
    n, p = np.asarray(n, float), np.asarray(p, float)
    return 1 - p**n - (1 - p) ** n


def all_equal(n, p):
    """Pr(X in {0, N}): every reward in the group is the same, so the advantage is 0.

    Args:
        n: the group size N.
        p: the success probability p, in [0, 1].

    Returns:
        The probability (broadcast).
    """
    return 1 - active(n, p)


def peak_group_size(p, tau, n_max: int = 1 << 20) -> tuple[int, float]:
    """The group size that maximises Pr(B_tau), found numerically: the function is unimodal
    in N, so a doubling search then a scan suffices.

    Args:
        p: the success probability, in [0, 1].
        tau: the rare correct region's mass, 0 <= tau <= p.
        n_max: the largest N searched.

    Returns:
        The integer N in [1, n_max] and Pr(B_tau) there.
    """
    hi = 1
    while hi < n_max and tail_miss(2 * hi, p, tau) >= tail_miss(hi, p, tau):
        hi *= 2
    n = np.arange(max(1, hi // 2), min(n_max, 2 * hi) + 1)
    values = tail_miss(n, p, tau)
    i = int(np.argmax(values))
    return int(n[i]), float(values[i])


def peak_group_size_approx(p, tau):
    """Closed-form approximation of the continuous maximiser of Pr(B_tau).

    With a = 1 - tau, b = 1 - p, c = p - tau (so a = b + c) and m = max(b, c), setting the
    derivative to zero while dropping the smaller of b^N, c^N gives

        a^N ln(1/a) = m^N ln(1/m)   =>   N* = ln(ln(1/m) / ln(1/a)) / ln(a / m).

    Accurate when b and c differ (tested within 2% for max(b, c) >= 1.5 min(b, c)); near
    p = 1/2 + tau/2 the dropped term matters and it underestimates N*.

    Args:
        p: the success probability, in (0, 1).
        tau: the rare correct region's mass, 0 < tau < p.

    Returns:
        N*, a real number (broadcast over p and tau).
    """
    p, tau = np.asarray(p, float), np.asarray(tau, float)
    a, m = 1 - tau, np.maximum(1 - p, p - tau)
    return np.log(np.log(1 / m) / np.log(1 / a)) / np.log(a / m)


def monte_carlo(n: int, p: float, tau: float, trials: int, rng: np.random.Generator) -> dict:
    """Estimate the three probabilities by sampling groups of answers from the three regions
    (rare correct, common correct, incorrect).

    Args:
        n: the group size N.
        p: the success probability, in [0, 1].
        tau: the rare correct region's mass, 0 <= tau <= p.
        trials: the number of groups sampled.
        rng: the samples' randomness.

    Returns:
        `tail_miss`, `active` and `all_equal`, each with its standard error (`<name>_se`).
    """
    counts = rng.multinomial(n, [tau, p - tau, 1 - p], size=trials)  # [trials, 3]
    rare, common, wrong = counts.T
    correct = rare + common
    events = {
        "tail_miss": (rare == 0) & (common > 0) & (wrong > 0),
        "active": (correct > 0) & (wrong > 0),
        "all_equal": (correct == 0) | (wrong == 0),
    }
    out = {}
    for name, hit in events.items():
        mean = hit.mean()
        out[name] = float(mean)
        out[f"{name}_se"] = float(np.sqrt(max(mean * (1 - mean), 1e-12) / trials))
    return out
