"""mazerl.llm with transformers, TRL and datasets (the extra `mazerl[llm]`), end to end on CPU:
a tiny randomly initialised Qwen2-style model and the maze-vocabulary tokenizer, built locally
(nothing is downloaded)."""

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("datasets")

from mazerl.envs.spec import MazeSpec
from mazerl.eval.evaluate import EvalSet, mazes_hash
from mazerl.eval.metric_names import Metric
from mazerl.llm import exact
from mazerl.llm.export import maze_key, records, write
from mazerl.llm.models import maze_tokenizer, reloads_right, tiny_model
from mazerl.llm.sft import answer_loss, collate, demonstrations, warm_up
from mazerl.llm.text import answer, answer_prefix, continuation, prompt
from mazerl.llm.verifier import judge
from mazerl.policy.tokens import VOCAB
from mazerl.policy.transformer import TransformerConfig

SMALL = TransformerConfig(layers=2, hidden=32, heads=2, kv_heads=1, ffn=64)


def mazes(count: int, size: int = 2, first_seed: int = 0) -> list:
    spec = MazeSpec(size=size, generator="prim", start_goal="random")
    return [spec.sample(np.random.default_rng(first_seed + i)) for i in range(count)]


def warm_model(train_mazes, steps: int = 40, lr: float = 1e-2):
    """The tiny model after a few supervised steps on the reference answers (`sft.warm_up`,
    full batches), so that it solves some mazes sometimes (a random one almost never does)."""
    tok = maze_tokenizer()
    model = tiny_model(SMALL)
    texts = [prompt(m, "maxrl") for m in train_mazes]
    pairs = demonstrations(
        tok, texts, [continuation(answer(m, "maxrl"), "maxrl") for m in train_mazes]
    )
    warm_up(model, tok, pairs, steps=steps, batch_size=len(pairs), lr=lr)
    return model.eval(), tok


@pytest.fixture(scope="module")
def warm():
    torch.manual_seed(0)
    return warm_model(mazes(8, size=3))


def test_tokenizer_has_mazerls_ids():
    tok = maze_tokenizer()
    (maze,) = mazes(1)
    head, tail = exact.canonical_ids(tok, prompt(maze, "maxrl"), answer_prefix(maze, "maxrl"))
    assert head[:2] == [1, 4]  # <bos> GRID_START, as mazerl.policy.tokens
    moves = {0: 13, 1: 14, 2: 15, 3: 16}  # UP DOWN LEFT RIGHT
    assert tail == [moves[m] for m in maze.solution]


def test_one_spelling_per_answer_by_enumerating_every_completion():
    """Every 3-token completion (32^3) of a maze whose only route is RIGHT DOWN, cut at its
    first <eos> and decoded as TRL and verl decode (special tokens skipped), succeeds exactly
    when it starts with the tokens RIGHT DOWN (ids 16, 14): no <pad>, <bos>, <unk>, newline or
    other token slipped between the moves is accepted."""
    from mazerl.envs.layouts import parse

    tok = maze_tokenizer()
    maze = parse("S.\n#G\n")
    assert maze.routes == ((3, 1),)
    grid = np.stack(np.meshgrid(*[np.arange(len(VOCAB))] * 3, indexing="ij"), -1).reshape(-1, 3)
    rows = [exact.until_eos(row, tok.eos_token_id) for row in grid.tolist()]
    texts = tok.batch_decode(rows, skip_special_tokens=True)
    success = np.array([v.reward == 1.0 for v in judge([maze] * len(texts), texts, "maxrl")])
    canonical = (grid[:, 0] == 16) & (grid[:, 1] == 14)
    assert canonical.sum() == 32 and np.array_equal(success, canonical)


def test_a_saved_model_reloads_with_the_auto_classes(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    tiny_model(SMALL).save_pretrained(tmp_path / "run")
    maze_tokenizer().save_pretrained(tmp_path / "run")
    tok = AutoTokenizer.from_pretrained(tmp_path / "run")
    (maze,) = mazes(1)
    text = prompt(maze, "maxrl") + " " + answer(maze, "maxrl")
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert ids == [VOCAB.index(word) for word in text.split()]  # one id per word, mazerl's
    assert tok.decode(ids[-3:]) == " ".join(text.split()[-3:])
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "run").config.vocab_size == 32
    assert reloads_right(str(tmp_path / "run"), maze_tokenizer())
    # beside a qwen2 config, transformers 5 loads its Qwen2Tokenizer instead: detected
    Qwen2ForCausalLM(Qwen2Config(vocab_size=32, hidden_size=8, intermediate_size=8,
                                 num_hidden_layers=1, num_attention_heads=1)).save_pretrained(
        tmp_path / "qwen2"
    )  # fmt: skip
    maze_tokenizer().save_pretrained(tmp_path / "qwen2")
    assert not reloads_right(str(tmp_path / "qwen2"), maze_tokenizer())


def test_answer_loss_is_the_answer_tokens_mean_nll_by_hand():
    tok = maze_tokenizer()
    model = tiny_model(SMALL).eval()
    ms = mazes(2)
    pairs = demonstrations(
        tok,
        [prompt(m, "maxrl") for m in ms],
        [continuation(answer(m, "maxrl"), "maxrl") for m in ms],
    )
    moves = {0: 13, 1: 14, 2: 15, 3: 16}
    for m, (_, tail) in zip(ms, pairs, strict=True):
        assert tail == [moves[a] for a in m.solution] + [7, 2]  # ... DONE <eos>
    with torch.no_grad():
        loss = answer_loss(model, *collate(pairs, pad_id=2)).item()
        nll = []
        for head, tail in pairs:  # one row at a time, no padding
            logits = model(input_ids=torch.tensor([head + tail])).logits[0].double()
            for j, token in enumerate(tail):
                nll.append(-torch.log_softmax(logits[len(head) - 1 + j], -1)[token].item())
    assert loss == pytest.approx(sum(nll) / len(nll), rel=1e-5)


def test_export_jsonl_and_parquet_read_back_with_keys(tmp_path):
    from datasets import load_dataset

    ms = mazes(5)
    rows = records(ms, "plain", "ood", "ood_dfs")
    for name in ("m.jsonl", "m.parquet"):
        write(rows, tmp_path / name)
        kind = "json" if name.endswith("jsonl") else "parquet"
        back = load_dataset(kind, data_files=str(tmp_path / name), split="train")
        assert back["index"] == [0, 1, 2, 3, 4]
        assert back["key"] == [maze_key(m) for m in ms]
        assert set(back["mazes_hash"]) == {mazes_hash(ms)}
        assert back[2]["reward_model"]["ground_truth"] == back[2]["maze"]
        assert back[2]["extra_info"]["split"] == "ood"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl", "m.parquet"]


def test_maxrl_parquet_round_trip_is_scored_by_compute_score(tmp_path):
    from datasets import load_dataset

    from mazerl.llm.verifier import compute_score

    ms = mazes(4, size=3)
    write(records(ms, "maxrl", "test", "prim3"), tmp_path / "test.parquet")
    back = load_dataset("parquet", data_files=str(tmp_path / "test.parquet"), split="train")
    moves = {0: "UP", 1: "DOWN", 2: "LEFT", 3: "RIGHT"}
    for m, row in zip(ms, back, strict=True):
        truth = row["reward_model"]["ground_truth"]
        assert truth.startswith(row["prompt"] + " ") and truth.endswith(" DONE <eos>")
        right = " ".join(moves[a] for a in m.solution) + " DONE"
        wrong = " ".join(moves[a] for a in m.solution[:-1]) + " DONE"
        score = [
            compute_score(row["data_source"], a, truth, row["extra_info"]) for a in (right, wrong)
        ]
        assert [s["score"] for s in score] == [1.0, 0.0]


def test_exact_pass_at_k_agrees_with_sampled_within_standard_error(warm):
    model, tok = warm
    ms = mazes(8, size=3)  # the warm model's own mazes: p well above 0
    n = 48
    torch.manual_seed(1)
    texts = [prompt(m, "maxrl") for m in ms]
    out = exact.evaluate_set(
        model, tok, EvalSet("id", ms), texts, fmt="maxrl", n=n, exact_ks=(1, 4)
    )
    p = np.array(out.per_maze["exact_p"])
    assert 0.05 < p.mean() < 0.95, p  # a meaningful comparison
    # sampled success rate against exact p: binomial standard error of the mean over mazes
    se = np.sqrt((p * (1 - p) / n).sum()) / len(ms)
    value, pass4, exact4 = out.values, Metric("pass", k=4), Metric("exact_pass", k=4)
    assert abs(value[Metric("success_rate")] - p.mean()) < 3 * se
    assert abs(value[pass4] - value[exact4]) < 3 * max(value[pass4.se()], se)
    # the maze tokenizer has one spelling per answer: no success outside the canonical tokens
    assert value[Metric("noncanonical_success_rate")] == 0.0
    assert out.mazes == {"sampled": 8, "exact": 8}
    assert p[0] == pytest.approx(by_hand(model, tok, ms[0], ms[0].solution), rel=1e-4)


def test_the_sampling_bar_advances_per_small_chunk(warm, monkeypatch):
    """At the defaults (n = 16, 512 rollouts per call) the 32 mazes of a set fit one call; the
    bar still advances 8 times, 4 mazes each (it advanced once, at the end, before)."""
    model, tok = warm
    ms = mazes(32, size=2)
    texts = [prompt(m, "maxrl") for m in ms]
    _, canonical = exact.exact_success(model, tok, ms, texts, "maxrl")
    updates, generated = [], []

    class Bar:
        def __init__(self, *args, total=None, disable=False, **kwargs):
            assert total == 32 and not disable

        def update(self, count):
            updates.append(count)

        def close(self):
            pass

    generate = model.generate
    monkeypatch.setattr(exact, "tqdm", Bar)
    monkeypatch.setattr(model, "generate", lambda **k: generated.append(1) or generate(**k))
    torch.manual_seed(0)
    successes, _ = exact.sampled_successes(
        model, tok, ms, texts, "maxrl", 16, canonical, desc="id: sampled (n=16)"
    )
    assert updates == [4] * 8 and len(generated) == 8 and len(successes) == 32
    assert exact.sampling_chunk(3, 16, 512) == 1  # fewer mazes than steps: per maze
    assert exact.sampling_chunk(1000, 16, 512) == 32  # many: as many as one call holds


def by_hand(model, tok, maze, moves) -> float:
    """The product of the softmax probabilities of `moves`' tokens after the maze's prompt,
    one token at a time."""
    ids = {0: 13, 1: 14, 2: 15, 3: 16}  # UP DOWN LEFT RIGHT in the maze vocabulary
    head = tok(prompt(maze, "maxrl"), add_special_tokens=False)["input_ids"]
    tail = [ids[m] for m in moves]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([head + tail])).logits[0]
    out = 1.0
    for j, token in enumerate(tail):
        out *= torch.softmax(logits[len(head) - 1 + j].double(), -1)[token].item()
    return out


def test_exact_success_of_a_two_route_maze_is_the_sum_over_its_routes(warm):
    from mazerl.envs.layouts import parse

    model, tok = warm
    braid = parse("routes: 2\n#####\n#S..#\n#.#.#\n#..G#\n#####\n")
    right_first, down_first = (3, 3, 1, 1), (1, 1, 3, 3)
    assert set(braid.routes) == {right_first, down_first}
    p, canonical = exact.exact_success(model, tok, [braid], [prompt(braid, "maxrl")], "maxrl")
    expected = by_hand(model, tok, braid, right_first) + by_hand(model, tok, braid, down_first)
    assert p[0] == pytest.approx(expected, rel=1e-4) and len(canonical[0]) == 2


def test_trl_grpo_with_the_focal_advantage_trains_and_logs(warm, tmp_path):
    import copy

    from datasets import Dataset
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from trl import GRPOConfig

    from mazerl.llm.trainer import FocalGRPOTrainer
    from mazerl.llm.verifier import maze_reward

    class Recording(FocalGRPOTrainer):
        seen: list = []

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            self.seen.append((self._gathered_rewards.clone(), output["advantages"].clone()))
            return output

    model, tok = copy.deepcopy(warm[0]).train(), warm[1]
    before = [p.detach().clone() for p in model.parameters()]
    # the columns MaxRL's data has (no `maze`, `maze_format`): the reward reads `reward_model`
    keep = ("prompt", "data_source", "reward_model", "extra_info")
    maxrl_rows = [{k: r[k] for k in keep} for r in records(mazes(8, size=3), "maxrl", "train", "g")]
    gamma, group = 0.5, 4
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=16,
        num_generations=group,
        max_completion_length=14,
        max_steps=3,
        learning_rate=1e-3,
        report_to=["tensorboard"],
        logging_steps=1,
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
        activation_checkpointing=True,  # not the deprecated gradient_checkpointing
    )
    trainer = Recording(
        model=model,
        processing_class=tok,
        reward_funcs=maze_reward,
        args=args,
        train_dataset=Dataset.from_list(maxrl_rows),
        algo="grpo",
        focal_gamma=gamma,
    )
    trainer.train()
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    # advantages: (r - mean) / (std + 1e-6) * (1 - mu)^gamma per group, computed here in numpy
    mixed = 0
    for rewards, advantages in Recording.seen:
        r = rewards[:, 0].numpy().reshape(-1, group).astype(np.float64)
        mu = r.mean(1, keepdims=True)
        std = r.std(1, ddof=1, keepdims=True)
        same = (r == r[:, :1]).all(1, keepdims=True)
        expected = np.where(same, 0.0, (r - mu) / (std + 1e-6) * (1 - mu) ** gamma)
        np.testing.assert_allclose(advantages.numpy(), expected.reshape(-1), atol=1e-5)
        mixed += int((~same).sum())
    assert mixed > 0  # some groups carried a learning signal
    events = next(tmp_path.rglob("events.out.tfevents.*")).parent
    acc = EventAccumulator(str(events))
    acc.Reload()
    assert {"train/focal_weight_mean", "train/reward"} <= set(acc.Tags()["scalars"])


def test_trl_grpo_with_pkpo_is_mazerls_pkpo(warm, tmp_path):
    """`algo="pkpo"` in TRL: each step's advantages equal mazerl's own PKPO method
    (`conf/algo/pkpo.yaml`, k = 2 here) on the same groups, to 1e-6."""
    import copy

    from datasets import Dataset
    from omegaconf import OmegaConf
    from trl import GRPOConfig

    from mazerl.algos import AlgoConfig, FocalConfig, group_advantages
    from mazerl.core.config import load_option
    from mazerl.llm.trainer import FocalGRPOTrainer
    from mazerl.llm.verifier import maze_reward

    class Recording(FocalGRPOTrainer):
        seen: list = []

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            self.seen.append((self._gathered_rewards.clone(), output["advantages"].clone()))
            return output

    method = OmegaConf.to_container(load_option("algo", "pkpo"))
    method["reward_transform_kwargs"] = {"k": 2}
    group, gamma = 4, 0.5
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=16,
        num_generations=group,
        max_completion_length=14,
        max_steps=2,
        learning_rate=1e-3,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
        activation_checkpointing=True,
    )
    trainer = Recording(
        model=copy.deepcopy(warm[0]).train(),
        processing_class=warm[1],
        reward_funcs=maze_reward,
        args=args,
        train_dataset=Dataset.from_list(records(mazes(8, size=3), "maxrl", "train", "g")),
        algo="pkpo",
        focal_gamma=gamma,
        advantage_kwargs={"k": 2},
    )
    trainer.train()
    mixed = 0
    for rewards, advantages in Recording.seen:
        grouped = rewards[:, 0].reshape(-1, group)
        theirs, _ = group_advantages(grouped, AlgoConfig(**method), FocalConfig(gamma=gamma))
        torch.testing.assert_close(advantages, theirs.reshape(-1), atol=1e-6, rtol=0)
        mixed += int((grouped != grouped[:, :1]).any(1).sum())
    assert mixed > 0  # some groups carried a learning signal


def test_bench_row_times_trl_and_mazerl_on_the_same_steps():
    from mazerl.apps.bench import trl_figure

    row = trl_figure(prompts=2, group=2, steps=1, pairs=1)
    assert row["trl_rollouts_per_s"] > 0 and row["mazerl_rollouts_per_s"] > 0
    assert row["ratio"] == pytest.approx(row["mazerl_rollouts_per_s"] / row["trl_rollouts_per_s"])
    # both produce answers of about a solution's length (TRL capped at the longest + 1)
    assert 1 <= row["trl_tokens_per_rollout"] <= row["mazerl_tokens_per_rollout"] + 1


def test_chat_export_and_its_prompt_through_the_chat_template():
    tok = maze_tokenizer()  # its template renders the conversation's text as it is
    ms = mazes(2)
    rows = records(ms, "maxrl", "train", "s", chat=True)
    assert rows[1]["prompt"] == [{"role": "user", "content": prompt(ms[1], "maxrl")}]
    assert exact.prompt_text(tok, rows[1]["prompt"]) == prompt(ms[1], "maxrl")
    assert exact.prompt_text(tok, "as is") == "as is"
    tok.chat_template = "{{ messages[0]['content'] }}{% if add_generation_prompt %} X{% endif %}"
    assert exact.prompt_text(tok, rows[1]["prompt"]) == prompt(ms[1], "maxrl") + " X"
