"""The policy update: `ppo_epochs` passes of `minibatches` optimizer steps over one batch."""

import torch

from mazerl.algos import policy_loss, reads_every_row
from mazerl.core.phases import phase
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


def live_prompts(advantages: torch.Tensor, idx: list, group_size: int) -> list:
    """The prompts of `idx` with a non-zero advantage in some row (`advantages [P * G]` or
    `[P * G, T]`): only their rows can move the loss when no term needs every row."""
    adv = advantages.reshape(-1, group_size, *advantages.shape[1:])[idx]
    return [p for p, keep in zip(idx, adv.flatten(1).ne(0).any(1).tolist(), strict=True) if keep]


def zero_step(policy, optimizer) -> None:
    """The optimizer step of a minibatch with no live row: every gradient is exactly zero (as
    the full computation's), and the step still runs, as in TRL and verl: AdamW's moments keep
    moving the weights along the last gradients, with lr * m / sqrt(v) where v has decayed
    over the steps without gradient (`train.zero_gradient_step=false` skips the call)."""
    optimizer.zero_grad(set_to_none=True)
    for p in policy.parameters():
        if p.requires_grad:
            p.grad = torch.zeros_like(p)
    optimizer.step()


def update(
    policy, ref_policy, optimizer, rollouts: Rollouts, advantages, algo, train_cfg, *, seed, it
):
    """Clipped updates of `policy` against the sampling-time log-probs.

    advantages `[P * G]` (row p * G + i: sample i of maze p). With
    `train_cfg.skip_zero_advantage`, unless the objective reads every row (`reads_every_row`:
    a KL or entropy term, a batch statistic), the groups whose advantages are all zero skip
    the forward and backward pass: they add exactly zero to the loss and its gradient, and
    the loss keeps the whole minibatch's normaliser (`norm_mask`),
    so the gradient is the full computation's up to float rounding. Returns the metrics
    averaged over optimizer steps (`loss`, `grad_norm`: the whole minibatch; the policy
    metrics: the rows computed, `update_rows_frac` of them) and the number of steps skipped
    for a non-finite loss or gradient."""
    g = rollouts.group_size
    skip = train_cfg.skip_zero_advantage and not reads_every_row(algo)
    ref_logp = None
    if algo.kl_beta > 0:
        with torch.no_grad():
            ref_logp, _ = score(ref_policy, rollouts, train_cfg.temperature)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    skipped = 0
    masks = rollouts.mask.reshape(-1, g, rollouts.mask.shape[1])  # [P, G, T]
    policy.train()
    for epoch in range(train_cfg.ppo_epochs):
        p = len(rollouts.mazes)
        for idx in minibatch_order(p, train_cfg.minibatches, seed, it, epoch):
            live = live_prompts(advantages, idx, g) if skip else idx
            metrics = {"update_rows_frac": torch.tensor(len(live) / len(idx))}
            if not live:
                if train_cfg.zero_gradient_step:
                    with phase("optimizer"):
                        zero_step(policy, optimizer)
                metrics |= {"loss": torch.zeros(()), "grad_norm": torch.zeros(())}
            else:
                mb = rollouts.select(live)
                # [mb P] prompt ids -> [mb P * G] row ids, sample i of prompt p at p * G + i
                rows = (torch.as_tensor(live)[:, None] * g + torch.arange(g)).flatten()
                rows = rows.to(advantages.device)
                with phase("forward"):
                    logp, entropy = score(policy, mb, train_cfg.temperature)
                    loss, loss_metrics = policy_loss(
                        algo,
                        logp=logp,
                        old_logp=mb.logp,
                        advantages=advantages[rows],
                        mask=mb.mask,
                        ref_logp=None if ref_logp is None else ref_logp[rows],
                        entropy=entropy,
                        norm_mask=masks[idx].flatten(0, 1),  # the whole minibatch's
                    )
                with phase("backward"):
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                with phase("optimizer"):
                    grad_norm = torch.nn.utils.clip_grad_norm_(
                        policy.parameters(), train_cfg.grad_clip
                    )
                    finite = bool(torch.isfinite(loss) and torch.isfinite(grad_norm))
                    if finite:
                        optimizer.step()
                if not finite:
                    optimizer.zero_grad(set_to_none=True)
                    skipped += 1
                    continue
                metrics |= {"loss": loss, "grad_norm": grad_norm, **loss_metrics}
            for k, v in metrics.items():
                sums[k] = sums.get(k, 0.0) + v.item()
                counts[k] = counts.get(k, 0) + 1
    return {k: v / counts[k] for k, v in sums.items()}, skipped
