"""pass@k: the unbiased estimator of Chen et al. 2021 (arXiv 2107.03374), its standard error
across prompts, and the exact value from a known success probability."""

import numpy as np


def pass_at_k(n, c, k: int) -> np.ndarray | float:
    """Unbiased pass@k = 1 - C(n - c, k) / C(n, k) for n samples of which c are correct.

    Computed as 1 - exp(sum_{i = n-c+1}^{n} log(1 - k / i)), a stable product for any n
    (tested against `math.comb` up to n = 1024).

    Args:
        n: samples per prompt, an int or an array (vectorised over prompts, broadcast with c).
        c: correct samples per prompt, 0 <= c <= n.
        k: the k of pass@k, 1 <= k <= n.

    Returns:
        pass@k per prompt in [0, 1] (a float for scalar n and c): 0 when c = 0, 1 when
        n - c < k.

    Raises:
        ValueError: c outside [0, n] or k outside [1, n].
    """
    n_arr, c_arr = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(c, np.int64))
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ValueError("need 0 <= c <= n")
    if k < 1 or np.any(k > n_arr):
        raise ValueError(f"need 1 <= k <= n, got k={k}")
    top = int(n_arr.max())
    # cum[i] = sum_{j=k+1}^{i} log(1 - k/j) for i >= k, used only where n - c >= k
    j = np.arange(k + 1, top + 1, dtype=np.float64)
    cum = np.concatenate([np.zeros(k + 1), np.cumsum(np.log1p(-k / j))])
    lower = np.maximum(n_arr - c_arr, k)
    out = np.where(n_arr - c_arr < k, 1.0, -np.expm1(cum[n_arr] - cum[lower]))
    out = np.where(c_arr == 0, 0.0, out)
    return float(out) if out.ndim == 0 else out


def standard_error(values: np.ndarray) -> float:
    """Standard error of the mean across prompts.

    Args:
        values: `[M]` one value per prompt (maze).

    Returns:
        std(values, ddof=1) / sqrt(M); 0 for fewer than two values.
    """
    values = np.asarray(values, dtype=np.float64)
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def exact_pass_at_k(p, k: int) -> np.ndarray:
    """Exact pass@k = 1 - (1 - p)^k of a policy that solves a prompt with probability p.

    Computed stably as -expm1(k log1p(-p)).

    Args:
        p: `[M]` per-prompt success probability (clipped to [0, 1]).
        k: the number of independent samples.

    Returns:
        `[M]` float64 pass@k.
    """
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return -np.expm1(k * np.log1p(-p))


def default_ks(n: int) -> list[int]:
    """The ks reported for n samples.

    Args:
        n: samples per prompt, >= 1.

    Returns:
        1, 2, 4, ... up to n, with n itself included.
    """
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return ks if ks[-1] == n else [*ks, n]


def sampled_ks(ks, n: int) -> list[int]:
    """The k of the sampled pass@k an evaluation writes.

    Args:
        ks: the configured k (`eval.ks`); empty or None: `default_ks(n)`.
        n: samples per prompt, >= 1.

    Returns:
        Those of them up to n, in order.
    """
    return [k for k in (ks or default_ks(n)) if k <= n]
