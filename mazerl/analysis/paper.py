"""The F-GRPO paper's Maze results (arXiv 2602.06717, Table 4: 17x17-grid mazes, a 3M-parameter
transformer, 256 mazes per step, 20,000 RL steps, one run per cell; percent on 256 held-out
mazes), for reference lines and side-by-side tables."""

PAPER_STEPS = 20_000
# N -> {gamma: (pass@1, pass@128, pass@256)}; gamma 0 is GRPO
TABLE4 = {
    4: {0.0: (65.6, 67.1, 67.3), 0.5: (74.4, 75.8, 75.9), 1.0: (79.7, 81.4, 81.5)},
    8: {0.0: (72.2, 73.3, 73.4), 0.5: (83.4, 84.0, 84.0), 1.0: (76.3, 76.6, 76.6)},
    16: {0.0: (73.9, 74.2, 74.2), 0.5: (83.7, 84.3, 84.3), 1.0: (84.4, 86.4, 86.5)},
    32: {0.0: (74.5, 74.9, 75.1), 0.5: (85.1, 85.8, 85.8), 1.0: (84.9, 85.8, 85.8)},
    64: {0.0: (73.4, 74.4, 74.7), 0.5: (85.4, 86.5, 86.5), 1.0: (84.8, 85.8, 85.8)},
    128: {0.0: (75.8, 76.7, 76.9), 0.5: (93.6, 96.4, 96.5), 1.0: (91.2, 95.7, 95.7)},
}
TABLE4_KS = (1, 128, 256)


def table4_gain(n: int, gamma: float, k: int) -> float | None:
    """The paper's F-GRPO gamma minus GRPO at group size `n` in pass@k (points), or None
    where the paper has no such cell."""
    cells = TABLE4.get(n, {})
    if k not in TABLE4_KS or gamma not in cells or gamma == 0:
        return None
    i = TABLE4_KS.index(k)
    return round(cells[gamma][i] - cells[0.0][i], 1)


def reading(lo: float, hi: float, paper: float | None, digits: int = 1) -> str:
    """What a 95% interval of a gain (points) says, against the paper's gain `paper`: a gain
    or a loss where it excludes zero, else the bound it sets ("< +X"); then whether it
    excludes the paper's value. The bounds are written with `digits` decimals."""
    if lo > 0:
        text = f"gain {lo:+.{digits}f} to {hi:+.{digits}f}"
    elif hi < 0:
        text = f"loss {lo:+.{digits}f} to {hi:+.{digits}f}"
    else:
        text = f"no gain shown: < {hi:+.{digits}f}"
    if paper is None:
        return text
    if hi < paper:
        return f"{text}; below the paper's {paper:+.1f}"
    if lo > paper:
        return f"{text}; above the paper's {paper:+.1f}"
    return f"{text}; the paper's {paper:+.1f} inside"
