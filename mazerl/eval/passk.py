"""pass@k: the unbiased estimator of Chen et al. 2021 (arXiv 2107.03374), its standard error
across prompts, and the exact value from a known success probability."""

import numpy as np


def pass_at_k(n, c, k: int) -> np.ndarray | float:
    """Unbiased pass@k = 1 - C(n - c, k) / C(n, k) for n samples of which c are correct.

    Computed as 1 - exp(sum_{i = n-c+1}^{n} log(1 - k / i)), a stable product for any n
    (tested against `math.comb` up to n = 1024). `n`, `c` are ints or arrays (vectorised over
    prompts); requires 1 <= k <= n. Returns 0 when c = 0 and 1 when n - c < k.
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
    """Standard error of the mean across prompts (0 for fewer than two)."""
    values = np.asarray(values, dtype=np.float64)
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def exact_pass_at_k(p, k: int) -> np.ndarray:
    """1 - (1 - p)^k for a per-prompt success probability p, computed stably."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return -np.expm1(k * np.log1p(-p))


def default_ks(n: int) -> list[int]:
    """1, 2, 4, ... up to n (n itself included)."""
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return ks if ks[-1] == n else [*ks, n]
