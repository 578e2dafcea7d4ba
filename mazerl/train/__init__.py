"""RL training: the base model (SFT), the rollout collection, the update and the loop."""
