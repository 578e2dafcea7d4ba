"""The categorical simulation (F-GRPO section 5.1, after BroRL): a softmax policy over K
answers trained with group-based objectives, many independent replicas at once.

Each step, every replica samples a group of N answers, gets rewards R_c (correct) or R_w,
computes group advantages times the focal weight through the objective registry, and takes
one optimizer step (`OPTIMIZERS`: plain SGD, or Adam without weight decay) on its logits.
The "response" is one token, so the registered policy losses apply unchanged
(`logp [R*N, 1]`): `linear` is the paper's surrogate as written, (1/N) sum_j A_j pi(a_j);
`clip` at ratio 1 is the TRPO-style ratio form, whose gradient on logit i is
(1/N) c_i A_i, c_i the count of answer i in the group (unsampled logits get none).

Tracked per step (means over replicas): total correct mass Q_pos, retained positive mass
M_ret = 1 - sum_correct max(0, pi_0 - pi_t) / sum_correct pi_0 (the paper's Eq. 26), the
correct mass not sampled in the step's group, the rare correct mass, entropy, and the number
of correct answers "forgotten" (mass below `forget_fraction` of their initial mass).
"""

import torch

from mazerl.algos import (
    AlgoConfig,
    FocalConfig,
    estimator_inputs,
    group_advantages,
    policy_loss,
)
from mazerl.categorical.config import OPTIMIZERS, SimConfig


def initial_logits(cfg: SimConfig) -> torch.Tensor:
    """The starting logits of the categorical policy.

    Args:
        cfg: the simulation's settings.

    Returns:
        `[K]` logits of the anchor, common correct, rare correct and incorrect actions.
    """
    z = torch.full((cfg.num_actions,), cfg.incorrect_logit, dtype=torch.float64)
    z[: cfg.num_correct] = cfg.correct_logit
    z[cfg.num_correct - cfg.num_rare : cfg.num_correct] = cfg.rare_logit
    z[0] = cfg.anchor_logit
    return z


def masses(cfg: SimConfig) -> tuple[float, float]:
    """The starting masses.

    Args:
        cfg: the simulation's settings.

    Returns:
        The initial correct mass p and rare mass tau.
    """
    pi = torch.softmax(initial_logits(cfg), -1)
    rare = pi[cfg.num_correct - cfg.num_rare : cfg.num_correct].sum()
    return float(pi[: cfg.num_correct].sum()), float(rare)


def simulate(cfg: SimConfig, algo: AlgoConfig, focal: FocalConfig, log=None) -> dict:
    """Train `cfg.replicas` categorical policies for `cfg.steps` steps.

    Args:
        cfg: the simulation's settings.
        algo: the method.
        focal: the focal weighting.
        log: called as `log(step, scalars)` every `cfg.log_every` steps; None: silent.

    Returns:
        `curves` (per logged step, means over replicas: `step`, `q_pos`, `m_ret`,
        `unsampled_correct_mass`, `rare_mass`, `entropy` in nats, `forgotten`) and `final`
        (the same values per replica at the last step).
    """
    gen = torch.Generator().manual_seed(cfg.seed)
    r, k, n, c = cfg.replicas, cfg.num_actions, cfg.group_size, cfg.num_correct
    z = initial_logits(cfg).repeat(r, 1).requires_grad_()
    pi0 = torch.softmax(z.detach(), -1)
    correct = torch.arange(k) < c
    rare = correct & (torch.arange(k) >= c - cfg.num_rare)
    opt = getattr(torch.optim, OPTIMIZERS[cfg.optimizer])([z], lr=cfg.lr)
    curves: dict[str, list[float]] = {}
    last: dict[str, torch.Tensor] = {}
    for step in range(cfg.steps + 1):
        logp_all = torch.log_softmax(z, -1)
        pi = logp_all.detach().exp()
        sample = torch.multinomial(pi, n, replacement=True, generator=gen)  # [R, N]
        hit = correct[sample]
        rewards = torch.where(hit, cfg.reward_correct, cfg.reward_wrong).double()
        sampled = torch.zeros(r, k, dtype=torch.bool).scatter_(1, sample, True)
        last = {
            "q_pos": pi[:, correct].sum(1),
            "m_ret": 1 - (pi0 - pi).clamp(min=0)[:, correct].sum(1) / pi0[:, correct].sum(1),
            "unsampled_correct_mass": (pi * (correct & ~sampled)).sum(1),
            "rare_mass": pi[:, rare].sum(1),
            "entropy": -(pi * logp_all.detach()).sum(1),
            "forgotten": (pi[:, correct] < cfg.forget_fraction * pi0[:, correct]).sum(1).double(),
        }
        if step % cfg.log_every == 0 or step == cfg.steps:
            means = {name: float(v.mean()) for name, v in last.items()}
            curves.setdefault("step", []).append(step)
            for name, v in means.items():
                curves.setdefault(name, []).append(v)
            if log is not None:
                log(step, means)
        if step == cfg.steps:
            break
        # what an estimator may ask for: answers of one action, the greedy one the argmax
        available = {
            "logp_mean": logp_all.detach().gather(1, sample),
            "greedy_correct": correct[z.detach().argmax(-1)],
        }
        inputs = {k: available[k] for k in estimator_inputs(algo.advantage)}
        advantages, _ = group_advantages(rewards, algo, focal, **inputs)
        logp = logp_all.gather(1, sample).reshape(-1, 1)
        loss, _ = policy_loss(
            algo,
            logp=logp,
            old_logp=logp.detach(),
            advantages=advantages.reshape(-1),
            mask=torch.ones_like(logp),
        )
        opt.zero_grad(set_to_none=True)
        # replicas are independent: an aggregation that averages over rows averages over
        # replicas too, so scale it back to one replica's update
        (loss if algo.loss_agg_mode == "token-sum" else loss * r).backward()
        opt.step()
    return {"curves": curves, "final": {name: v.tolist() for name, v in last.items()}}
