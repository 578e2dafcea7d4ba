"""Exact and sampled pass@k of a Hugging Face causal LM on maze sets, written as mazerl writes
its own evaluations.

Exact: in a maze with R known routes (one in a perfect maze) and no revisits, a completion
succeeds iff it starts with one route's moves, whatever follows (the episode ends at the goal).
The model's probability of route r's canonical completion prefix (`text.answer_prefix`,
tokenized as the continuation of the prompt: `ids(prompt + prefix)` minus `ids(prompt)`) is
one teacher-forced pass; p = sum_r of them, and pass@k = 1 - (1 - p)^k exactly.

Tokenization ambiguity: p counts the canonical token sequences only, so p <= the true success
probability p*. The gap delta = p* - p is the mass of successful completions that are spelled
otherwise (other token splits of the same words, other case or whitespace, text before a
`plain` answer tag, tokens that decoding drops). It is 0 for `maxrl` with the maze tokenizer
(`models.maze_tokenizer`: every token but `<eos>` decodes to a visible word, joined with single
spaces, and any word that is not a move ends the answer, so a successful completion starts with
a route's move tokens). Otherwise the sampled evaluation estimates it:
`noncanonical_success_rate` (with its standard error) is the share of samples that succeed
without starting with a canonical prefix, an unbiased estimate of delta, and the exact pass@k is
low by at most 1 - (1 - delta)^k <= k delta.

Sampled: n completions per maze (`generate`, full softmax at `temperature`: no top-k or top-p),
cut at the first EOS, decoded without special tokens (as TRL does), scored by the verifier;
unbiased pass@k with its standard error.

Prompts are given as text, as the dataset holds them (`prompt_text` renders a conversational
prompt with the tokenizer's chat template); prompts and completions are tokenized without added
special tokens (the `maxrl` prompt carries its own `<bos>`, a chat template its own).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from mazerl.core.errors import UserError
from mazerl.core.files import write_json_atomic
from mazerl.core.provenance import code_identity
from mazerl.envs.maze import Maze
from mazerl.eval.evaluate import EvalSet, SetResult, mazes_hash, sampled_metrics
from mazerl.eval.metric_names import Metric
from mazerl.eval.passk import exact_pass_at_k, standard_error
from mazerl.llm.text import answer_prefix
from mazerl.llm.verifier import judge

EXACT_KS = (1, 8, 64, 128, 256, 1024, 2048)
BAR_STEPS = 8  # the sampling bar advances at least this often (per maze for fewer mazes)


def prompt_text(tokenizer, prompt: str | list[dict]) -> str:
    """A dataset's prompt as the model reads it: text as is, a conversation (TRL's
    conversational format) through the tokenizer's chat template with the generation prompt."""
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)


def canonical_ids(tokenizer, prompt_text: str, completion: str) -> tuple[list[int], list[int]]:
    """The prompt's token ids and the completion's canonical ids as its continuation; a
    `UserError` when the tokenizer merges tokens across the boundary."""
    head = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    full = tokenizer(prompt_text + completion, add_special_tokens=False)["input_ids"]
    if full[: len(head)] != head or len(full) == len(head):
        raise UserError(
            f"the tokenizer splits the prompt differently once the answer follows it "
            f"({completion[:30]!r}); exact pass@k needs the prompt's tokens to stay a prefix"
        )
    return head, full[len(head) :]


@torch.no_grad()
def sequence_logprobs(
    model,
    heads: Sequence[list[int]],
    tails: Sequence[list[int]],
    temperature: float = 1.0,
    batch_size: int = 64,
    pad_id: int = 0,
    desc: str | None = None,
) -> np.ndarray:
    """`[B]` float64 log-probability of each `tail` after its `head` under the model's
    sampling distribution at `temperature` (teacher forcing, right-padded batches); a progress
    bar labelled `desc` when given."""
    device = next(model.parameters()).device
    out = []
    for lo in tqdm(range(0, len(heads), batch_size), desc, disable=desc is None, unit="batch"):
        part = range(lo, min(lo + batch_size, len(heads)))
        rows = [heads[i] + tails[i] for i in part]
        length = max(map(len, rows))
        ids = torch.full((len(rows), length), pad_id, dtype=torch.long)
        attention = torch.zeros_like(ids)
        scored = torch.zeros(len(rows), length - 1, dtype=torch.bool)  # predicts a tail token
        for i, (row, j) in enumerate(zip(rows, part, strict=True)):
            ids[i, : len(row)] = torch.tensor(row)
            attention[i, : len(row)] = 1
            scored[i, len(heads[j]) - 1 : len(row) - 1] = True
        logits = model(input_ids=ids.to(device), attention_mask=attention.to(device)).logits
        logp = torch.log_softmax(logits[:, :-1].float() / temperature, dim=-1)
        token = logp.gather(-1, ids[:, 1:, None].to(device)).squeeze(-1).cpu()
        out.append((token.double() * scored).sum(-1))
    return torch.cat(out).numpy()


def exact_success(
    model,
    tokenizer,
    mazes: Sequence[Maze],
    prompts: Sequence[str],
    fmt: str,
    temperature: float = 1.0,
    batch_size: int = 64,
    desc: str | None = None,
) -> tuple[np.ndarray, list[list[list[int]]]]:
    """`[M]` exact success probability (sum over each maze's routes of its canonical
    completion's probability after the maze's prompt text) and the canonical completion ids
    `[maze][route]`. A `UserError`
    when a canonical completion, decoded, does not pass the verifier (a tokenizer that cannot
    spell the answer)."""
    heads, tails, owner = [], [], []
    for i, maze in enumerate(mazes):
        for r in range(len(maze.routes)):
            head, tail = canonical_ids(tokenizer, prompts[i], answer_prefix(maze, fmt, r))
            heads.append(head)
            tails.append(tail)
            owner.append(i)
    decoded = tokenizer.batch_decode(tails, skip_special_tokens=True)
    verdicts = judge([mazes[i] for i in owner], decoded, fmt)
    bad = next((j for j, v in enumerate(verdicts) if v.reward != 1.0), None)
    if bad is not None:
        raise UserError(
            f"the tokenizer cannot spell maze answers: the canonical completion decodes to "
            f"{decoded[bad][:40]!r} ({verdicts[bad].reason})"
        )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    logp = sequence_logprobs(model, heads, tails, temperature, batch_size, pad, desc)
    p = np.zeros(len(mazes))
    np.add.at(p, owner, np.exp(logp))
    canonical: list[list[list[int]]] = [[] for _ in mazes]
    for i, tail in zip(owner, tails, strict=True):
        canonical[i].append(tail)
    return p.clip(max=1.0), canonical


@torch.no_grad()
def sampled_successes(
    model,
    tokenizer,
    mazes: Sequence[Maze],
    prompts: Sequence[str],
    fmt: str,
    n: int,
    canonical: list[list[list[int]]],
    temperature: float = 1.0,
    allow_revisits: bool = False,
    batch_rollouts: int = 512,
    max_new_tokens: int | None = None,
    desc: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample n completions per maze: `[M]` success counts and `[M]` counts of successes that
    do not start with a canonical completion (`canonical[maze]`: its routes' ids). The caller
    seeds torch. `max_new_tokens` default: `answer_limit(canonical)`. A progress bar (mazes
    done) labelled `desc` when given."""
    device = next(model.parameters()).device
    eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    limit = max_new_tokens or answer_limit(canonical)
    successes = np.zeros(len(mazes), dtype=np.int64)
    noncanonical = np.zeros(len(mazes), dtype=np.int64)
    chunk = sampling_chunk(len(mazes), n, batch_rollouts)
    bar = tqdm(total=len(mazes), desc=desc, disable=desc is None, unit="maze")
    for lo in range(0, len(mazes), chunk):
        part = list(mazes[lo : lo + chunk])
        heads = [
            tokenizer(t, add_special_tokens=False)["input_ids"] for t in prompts[lo : lo + chunk]
        ]
        width = max(map(len, heads))
        ids = torch.full((len(part), width), pad, dtype=torch.long)
        attention = torch.zeros_like(ids)
        for i, head in enumerate(heads):  # left padding: every prompt ends where generation starts
            ids[i, width - len(head) :] = torch.tensor(head)
            attention[i, width - len(head) :] = 1
        out = model.generate(
            input_ids=ids.repeat_interleave(n, 0).to(device),
            attention_mask=attention.repeat_interleave(n, 0).to(device),
            do_sample=True,
            temperature=temperature,
            top_k=0,
            top_p=1.0,
            max_new_tokens=limit,
            pad_token_id=pad,
            eos_token_id=eos,
        )
        completions = [until_eos(row, eos) for row in out[:, width:].tolist()]
        texts = tokenizer.batch_decode(completions, skip_special_tokens=True)
        rows = [m for m in part for _ in range(n)]
        verdicts = judge(rows, texts, fmt, allow_revisits)
        for j, (verdict, completion) in enumerate(zip(verdicts, completions, strict=True)):
            i = lo + j // n
            if verdict.reward == 1.0:
                successes[i] += 1
                starts = any(completion[: len(t)] == t for t in canonical[i])
                noncanonical[i] += not starts
        bar.update(len(part))
    bar.close()
    return successes, noncanonical


def answer_limit(canonical: list[list[list[int]]]) -> int:
    """The most tokens a sampled answer may have: twice the longest canonical completion
    (`canonical[maze][route]`: token ids) plus 8."""
    return 2 * max(len(t) for c in canonical for t in c) + 8


def sampling_chunk(mazes: int, n: int, batch_rollouts: int) -> int:
    """Mazes per `generate` call of `sampled_successes`.

    Args:
        mazes: the number of mazes sampled.
        n: samples per maze.
        batch_rollouts: the most rows per call.

    Returns:
        At most `batch_rollouts // n` mazes (at least 1) and at most `mazes / BAR_STEPS`
        (rounded up), so that the progress bar advances at least `BAR_STEPS` times (per maze
        for fewer mazes) rather than once for a set that fits one call.
    """
    return max(1, min(batch_rollouts // n, -(-mazes // BAR_STEPS)))


def until_eos(ids: list[int], eos: int | None) -> list[int]:
    """A generated row up to (without) its first EOS."""
    return ids[: ids.index(eos)] if eos is not None and eos in ids else ids


@dataclass
class LmSetResult(SetResult):
    """One set's result of a causal LM's evaluation: a `SetResult` (values keyed by `Metric`,
    named within the set; `per_maze`) and what its figures cover.

    Attributes:
        mazes: `{"sampled": M_s, "exact": M_e}`, the number of mazes each kind of figure
            covers (`exact` 0 where revisits are allowed).
        max_new_tokens: the sampled answers' length limit, in tokens (`answer_limit`).
    """

    mazes: dict[str, int] = field(default_factory=dict)
    max_new_tokens: int = 0

    def to_json(self) -> dict:
        """The result as `eval/step_0000000.json` holds it.

        Returns:
            Each value under its `Metric.key` (`pass@1`, `exact_pass@1_se`), then `mazes`,
            `max_new_tokens` and `per_maze`.
        """
        values = {m.key: v for m, v in self.values.items()}
        covered = {"mazes": self.mazes, "max_new_tokens": self.max_new_tokens}
        return values | covered | {"per_maze": self.per_maze}


def evaluate_set(
    model,
    tokenizer,
    eval_set: EvalSet,
    prompts: Sequence[str],
    *,
    fmt: str,
    n: int,
    ks: Sequence[int] = (),
    exact_ks: Sequence[int] = EXACT_KS,
    temperature: float = 1.0,
    allow_revisits: bool = False,
    sampled_mazes: int | None = None,
    batch_size: int = 64,
    batch_rollouts: int = 512,
    progress: bool = False,
) -> "LmSetResult":
    """Metrics of one set, keyed by `Metric` as `mazerl.eval.evaluate.evaluate_set` keys its
    own (`Metric("pass", k=k)`, `Metric("exact_pass", k=k)` and their `se()`,
    `success_rate`, `coverage`), plus `noncanonical_success_rate` (and its `se()`): the
    estimate of the exact values' tokenization gap. `prompts`: each maze's prompt text. Exact
    values cover every maze (none with `allow_revisits`: many sequences succeed); sampled ones
    the first `sampled_mazes` (None: all). `progress`: a progress bar per pass, labelled with
    the set's name.

    Returns:
        The set's `LmSetResult`: the values, `per_maze` (`successes`, `n`, `exact_p`,
        `mazes_hash`), the mazes each kind of figure covers and the sampled answers' length
        limit.
    """
    mazes = eval_set.mazes
    sampled = mazes[: sampled_mazes or len(mazes)]

    def label(what: str) -> str | None:
        return f"{eval_set.name}: {what}" if progress else None

    p, canonical = exact_success(
        model, tokenizer, mazes, prompts, fmt, temperature, batch_size, label("exact")
    )
    limit = answer_limit(canonical[: len(sampled)])
    correct, noncanonical = sampled_successes(
        model,
        tokenizer,
        sampled,
        prompts[: len(sampled)],
        fmt,
        n,
        canonical[: len(sampled)],
        temperature,
        allow_revisits,
        batch_rollouts,
        limit,
        desc=label(f"sampled (n={n})"),
    )
    values = sampled_metrics(correct, n, ks)
    gap = Metric("noncanonical_success_rate")
    values[gap] = float((noncanonical / n).mean())
    values[gap.se()] = standard_error(noncanonical / n)
    per: dict = {"successes": correct.tolist(), "n": n, "exact_p": None}
    per["mazes_hash"] = mazes_hash(mazes)
    if not allow_revisits:
        for k in exact_ks:
            per_maze = exact_pass_at_k(p, k)
            metric = Metric("exact_pass", k=k)
            values[metric] = float(per_maze.mean())
            values[metric.se()] = standard_error(per_maze)
        per["exact_p"] = p.tolist()
    covered = {"sampled": len(sampled), "exact": 0 if allow_revisits else len(mazes)}
    return LmSetResult(values, per, mazes=covered, max_new_tokens=limit)


def write_run(
    out: Path, results: dict[str, LmSetResult], about: dict, overrides: list[str]
) -> None:
    """Write an evaluation as a mazerl run folder that `mazerl-summarize` reads: `metrics.json`
    (`final`: every set's values under their `Metric.name`, `eval/<set>/<metric>`; `about`:
    the model, format, settings; `code`: this code's version and commit, `code_identity`),
    `eval/step_0000000.json` (each set's `LmSetResult.to_json`) and `.hydra/overrides.yaml`
    (the `key=value` items that name this run in a summary's groups, e.g. `model=base`)."""
    final = {m.name: v for name, r in results.items() for m, v in r.on_set(name).items()}
    saved = {name: r.to_json() for name, r in results.items()}
    write_json_atomic(saved, out / "eval" / "step_0000000.json")
    (out / ".hydra").mkdir(parents=True, exist_ok=True)
    (out / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    metrics = {"final": final, "about": about, "code": dict(code_identity())}
    write_json_atomic(metrics, out / "metrics.json")
