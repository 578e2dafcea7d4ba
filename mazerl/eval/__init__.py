"""Evaluation: pass@k (sampled and exact), evaluation sets, route masses, logging."""
