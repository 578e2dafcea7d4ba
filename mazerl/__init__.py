"""mazerl: a Gymnasium maze benchmark for group-based RLVR optimizers and F-GRPO.

Importing the package registers the `mazerl/Maze-v0` Gymnasium environment.
"""

from mazerl.envs import ENV_ID, register_envs

__version__ = "0.1.0"
__all__ = ["ENV_ID", "__version__"]

register_envs()
