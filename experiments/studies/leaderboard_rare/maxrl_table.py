"""MaxRL's maze table (arXiv 2602.02710, "Performance comparison across methods in maze": 8x8-cell
Prim mazes as 17x17 grids, a ~3M-parameter transformer, 9K RL steps, up to 128 rollouts per
prompt, 256 held-out mazes, one run per method; percent), the single-run references of the
leaderboard_rare study's claims (experiments/studies/leaderboard_rare/claims.yaml)."""

# method -> (pass@1, pass@128, pass@256), as the table prints them
MAXRL_TABLE = {
    "GRPO": (39.6, 42.4, 43.0),
    "GRPO + entropy bonus": (47.2, 53.4, 54.0),
    "PKPO": (74.5, 77.6, 77.9),
    "SELF": (46.1, 86.3, 87.5),
    "Differential Smoothing": (50.0, 57.8, 58.7),
    "MaxRL": (84.4, 92.0, 94.3),
}
MAXRL_KS = (1, 128, 256)


def maxrl_gain(a: str, b: str, k: int) -> float | None:
    """Method `a` minus method `b` in MaxRL's table at pass@`k` (points, one decimal), or None
    where the table has no such row or column."""
    if a not in MAXRL_TABLE or b not in MAXRL_TABLE or k not in MAXRL_KS:
        return None
    i = MAXRL_KS.index(k)
    return round(MAXRL_TABLE[a][i] - MAXRL_TABLE[b][i], 1)
