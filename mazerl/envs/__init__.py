"""Maze sources (generators, layouts), the Gymnasium env and the batched stepper."""

import gymnasium

ENV_ID = "mazerl/Maze-v0"


def register_envs() -> None:
    """Register `mazerl/Maze-v0` (single and vector entry points); idempotent."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="mazerl.envs.maze_env:MazeEnv",
            vector_entry_point="mazerl.envs.batch:MazeVectorEnv",
        )
