"""Supervised warm-up of a causal LM on solver demonstrations: the step before GRPO.

A randomly initialised model almost never reaches the goal, so every GRPO group has the same
reward, every advantage is 0 and nothing trains; mazerl's own runs start from a supervised base
for that reason (`mazerl.train.sft`). This is that step for a Hugging Face model: the loss is
the cross-entropy of each maze's reference answer (the dataset's `solution` column: the
shortest route, then `<eos>`) after its prompt, on the answer's tokens only, with the paper's
SFT optimiser (AdamW, lr 5e-4, betas (0.9, 0.95), weight decay 0.01, grad-norm clip 1.0).
Batches of `batch_size` rows are drawn without replacement, reshuffled every epoch.
"""

from collections.abc import Callable, Sequence

import torch
from tqdm import tqdm

from mazerl.llm.exact import canonical_ids

# the paper's SFT optimiser but for the learning rate (`lr`): AdamW's betas and weight decay,
# and the gradient-norm clip applied before each step
BETAS, WEIGHT_DECAY, CLIP_NORM = (0.9, 0.95), 0.01, 1.0


def demonstrations(
    tokenizer, prompts: Sequence[str], answers: Sequence[str]
) -> list[tuple[list[int], list[int]]]:
    """`(prompt ids, answer ids + [eos])` per row: the answer (`text.continuation` of the
    `solution` column) tokenized as the continuation of its prompt text, as the exact
    evaluation scores it (`exact.canonical_ids`)."""
    pairs = [canonical_ids(tokenizer, p, a) for p, a in zip(prompts, answers, strict=True)]
    return [(head, [*tail, tokenizer.eos_token_id]) for head, tail in pairs]


def collate(
    pairs: Sequence[tuple[list[int], list[int]]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded `[B, T]` ids and attention mask, and the `[B, T - 1]` bool mask of the
    positions that predict an answer token."""
    width = max(len(h) + len(t) for h, t in pairs)
    ids = torch.full((len(pairs), width), pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    scored = torch.zeros(len(pairs), width - 1, dtype=torch.bool)
    for i, (head, tail) in enumerate(pairs):
        ids[i, : len(head) + len(tail)] = torch.tensor(head + tail)
        attention[i, : len(head) + len(tail)] = 1
        scored[i, len(head) - 1 : len(head) + len(tail) - 1] = True
    return ids, attention, scored


def answer_loss(model, ids: torch.Tensor, attention: torch.Tensor, scored: torch.Tensor):
    """Mean negative log-likelihood (nats) of the scored tokens: a scalar tensor."""
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1].float()
    logp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return -(logp * scored).sum() / scored.sum()


def warm_up(
    model,
    tokenizer,
    pairs: Sequence[tuple[list[int], list[int]]],
    *,
    steps: int,
    batch_size: int = 32,
    lr: float = 5e-4,
    seed: int = 0,
    progress: bool = False,
    log: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train `model` in place for `steps` AdamW steps on `demonstrations` pairs; returns each
    step's loss (`answer_loss`). `log(step, loss)` is called after each step; `progress`
    shows a bar with the loss."""
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=BETAS, weight_decay=WEIGHT_DECAY)
    gen = torch.Generator().manual_seed(seed)
    order: list[int] = []
    losses = []
    model.train()
    bar = tqdm(range(steps), "sft", disable=not progress, unit="step")
    for step in bar:
        while len(order) < batch_size:
            order += torch.randperm(len(pairs), generator=gen).tolist()
        rows, order = order[:batch_size], order[batch_size:]
        batch = collate([pairs[i] for i in rows], pad)
        loss = answer_loss(model, *(t.to(device) for t in batch))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
        opt.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
        if log is not None:
            log(step, losses[-1])
    return losses
