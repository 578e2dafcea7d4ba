"""The policy update: `ppo_epochs` passes of `minibatches` optimizer steps over one batch."""

import torch

from mazerl.algos import policy_loss
from mazerl.core.streams import STREAM_MINIBATCH, rng
from mazerl.rollout import Rollouts, score


def minibatch_order(prompts: int, minibatches: int, seed: int, it: int, epoch: int) -> list:
    """Prompt indices of each minibatch: in order for one minibatch (its sum does not depend on
    the order), else a permutation drawn per epoch from the run's minibatch stream."""
    order = list(range(prompts))
    if minibatches > 1:
        order = rng(seed, STREAM_MINIBATCH, it, epoch).permutation(prompts).tolist()
    per_mb = max(1, prompts // minibatches)
    return [order[lo : lo + per_mb] for lo in range(0, prompts, per_mb)]


def update(
    policy, ref_policy, optimizer, rollouts: Rollouts, advantages, algo, train_cfg, *, seed, it
):
    """Clipped updates of `policy` against the sampling-time log-probs.

    advantages `[P * G]` (row p * G + i: sample i of maze p). Returns the loss metrics averaged
    over optimizer steps and the number of steps skipped for a non-finite loss or gradient."""
    g = rollouts.group_size
    ref_logp = None
    if algo.kl_beta > 0:
        with torch.no_grad():
            ref_logp, _ = score(ref_policy, rollouts, train_cfg.temperature)
    sums: dict[str, float] = {}
    steps = skipped = 0
    policy.train()
    for epoch in range(train_cfg.ppo_epochs):
        p = len(rollouts.mazes)
        for idx in minibatch_order(p, train_cfg.minibatches, seed, it, epoch):
            mb = rollouts.select(idx)
            # [mb P] prompt ids -> [mb P * G] row ids, sample i of prompt p at p * G + i
            rows = (torch.as_tensor(idx)[:, None] * g + torch.arange(g)).flatten()
            rows = rows.to(advantages.device)
            logp, entropy = score(policy, mb, train_cfg.temperature)
            loss, metrics = policy_loss(
                algo,
                logp=logp,
                old_logp=mb.logp,
                advantages=advantages[rows],
                mask=mb.mask,
                ref_logp=None if ref_logp is None else ref_logp[rows],
                entropy=entropy,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), train_cfg.grad_clip)
            if not (torch.isfinite(loss) and torch.isfinite(grad_norm)):
                optimizer.zero_grad(set_to_none=True)
                skipped += 1
                continue
            optimizer.step()
            steps += 1
            for k, v in {"loss": loss, "grad_norm": grad_norm, **metrics}.items():
                sums[k] = sums.get(k, 0.0) + v.item()
    return {k: v / max(steps, 1) for k, v in sums.items()}, skipped
