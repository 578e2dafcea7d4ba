"""`mazerl-llm`: export, train and evaluate from the command line; bad input is one error line
and exit code 2, with nothing written."""

import http.server
import json
import threading
import time
import warnings

import pytest

pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("datasets")

from huggingface_hub import constants

from mazerl.analysis import summarize
from mazerl.apps import llm
from mazerl.apps.llm import looks_like_path, main
from mazerl.core.provenance import code_identity
from mazerl.llm.objective import estimator_names


def fails(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ")
    return err


def test_bad_input_is_one_line_and_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "x.csv"
    assert "unknown output format '.csv'" in fails(capsys, "export", str(out), "--layout", "tiny")
    missing = tmp_path / "nowhere" / "x.jsonl"
    assert "does not exist" in fails(capsys, "export", str(missing), "--layout", "tiny")
    bad = fails(capsys, "export", str(tmp_path / "x.jsonl"), "--eval-sets", "maze.size=banana")
    assert "--eval-sets maze.size=banana" in bad
    assert "unknown generator 'zig'" in fails(
        capsys, "export", str(tmp_path / "x.jsonl"), "--generator", "zig"
    )
    data = tmp_path / "d.jsonl"
    main(["export", str(data), "--layout", "prim5-20", "--format", "plain"])
    assert "no such file" in fails(
        capsys, "eval", "--model", "m", "--data", "z.jsonl", "--out", "o"
    )
    tiny_plain = fails(capsys, "train", "--data", str(data), "--out", str(tmp_path / "r"))
    assert "--model tiny reads the maxrl format only" in tiny_plain
    assert "--group must be >= 2" in fails(
        capsys, "train", "--data", str(data), "--out", str(tmp_path / "r"), "--group", "1"
    )
    unknown = fails(capsys, "train", "--data", str(data), "--out", "r", "--algo", "ppo")
    assert f"unknown advantage estimator 'ppo'; known: {', '.join(estimator_names())}" in unknown
    bad_arg = fails(capsys, "train", "--data", str(data), "--out", "r", "--algo", "pkpo",
                    "--algo-arg", "x=1")  # fmt: skip
    assert bad_arg == "error: reward transform 'pkpo' takes no argument 'x'; its arguments: k"
    assert "--threads must be > 0, got 0" in fails(
        capsys, "sft", "--data", str(data), "--out", "o", "--threads", "0"
    )
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    taken = fails(
        capsys, "eval", "--model", "m", "--data", str(data), "--out", str(tmp_path / "full")
    )
    assert "already exists and is not empty" in taken
    no_steps = fails(capsys, "sft", "--data", str(data), "--out", "o", "--steps", "0")
    assert no_steps == "error: --steps must be > 0, got 0"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "full"]


def test_a_mistyped_model_is_named_at_once_without_the_hub(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    main(["export", str(data), "--layout", "prim5-20"])
    out = str(tmp_path / "out")
    for model, message in (
        (str(tmp_path / "runs" / "modle"), "no such model folder"),  # a path: no Hub lookup
        ("./modle", "no such model folder"),
        (str(data), "no such model folder"),  # a file
        (str(tmp_path), "not a model folder (no config.json in it)"),
    ):
        err = fails(capsys, "eval", "--model", model, "--data", str(data), "--out", out)
        assert err == f"error: --model {model}: {message}"
    assert looks_like_path(f"{tmp_path.name}/model") is False  # org/name: a Hub id
    assert looks_like_path("Qwen/Qwen2.5-0.5B") is False and looks_like_path("gpt2") is False
    assert looks_like_path("a/b/c") and looks_like_path("~/m") and looks_like_path("/m")


class NotOnTheHub(http.server.BaseHTTPRequestHandler):
    """Answers every request as the Hub answers for a repository that does not exist."""

    def do_GET(self):
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


def test_a_hub_id_that_cannot_load_fails_at_once_in_one_line(tmp_path, capsys, monkeypatch):
    """No Hub retries (53 s before): an unreachable Hub, an offline one and an id the Hub
    does not know are each one line within seconds; the Hub here is a local address."""
    data = tmp_path / "d.jsonl"
    main(["export", str(data), "--layout", "prim5-20"])
    name = "no-such-org/no-such-model-xyz"
    argv = ("eval", "--model", name, "--data", str(data), "--out", str(tmp_path / "o"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotOnTheHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hub = f"http://127.0.0.1:{server.server_address[1]}"
    cache = tmp_path / "hf-cache"  # empty: the id is in no cache
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    closed = "http://127.0.0.1:9"  # nothing listens there: the Hub cannot be reached
    for endpoint, offline, message in (
        (closed, False, f"and the Hugging Face Hub ({closed}) cannot be reached (ConnectError)"),
        (closed, True, "nor in the Hugging Face cache (HF_HUB_OFFLINE is set)"),
        (hub, False, f"nor a model on the Hugging Face Hub ({hub})"),
    ):
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
        start = time.perf_counter()
        with pytest.raises(llm.UserError) as e:
            llm.model_source(name)
        assert time.perf_counter() - start < 3
        assert str(e.value).startswith(f"--model {name}: no such model folder, {message}")
        assert fails(capsys, *argv) == f"error: {e.value}"
    server.shutdown()


def test_chat_prompts_need_a_chat_template(tmp_path, capsys):
    from mazerl.llm.models import maze_tokenizer, tiny_model

    data = tmp_path / "chat.jsonl"
    main(["export", str(data), "--generator", "prim", "--size", "2", "--count", "4", "--chat"])
    bare = tmp_path / "bare"  # a maze model saved without a chat template
    tiny_model().save_pretrained(bare)
    tok = maze_tokenizer()
    tok.chat_template = None
    tok.save_pretrained(bare)
    capsys.readouterr()  # transformers' progress bars
    err = fails(capsys, "eval", "--model", str(bare), "--data", str(data), "--out", "o")
    assert err == (
        f"error: --data {data} holds chat prompts (export --chat) but --model {bare} has no "
        "chat template; export without --chat"
    )
    # the maze tokenizer's own template renders them: a chat export trains
    main(
        ["sft", "--data", str(data), "--out", str(tmp_path / "sft"), "--steps", "1", "--batch", "2"]
    )
    assert (tmp_path / "sft" / "model" / "tokenizer.json").is_file()


def test_export_train_evaluate_and_summarize(tmp_path, capsys):
    train, sets = tmp_path / "train.jsonl", tmp_path / "eval.parquet"
    main(["export", str(train), "--generator", "prim", "--size", "2", "--start-goal", "random",
          "--count", "8"])  # fmt: skip
    two = "eval.sets=[{name: id, num_mazes: 5}, {name: ood_dfs, generator: dfs, num_mazes: 3}]"
    main(["export", str(sets), "--eval-sets", "maze.size=2", two])
    warm, run = tmp_path / "sft", tmp_path / "run"
    main(["sft", "--data", str(train), "--out", str(warm), "--steps", "3", "--batch", "4",
          "--threads", "2"])  # fmt: skip
    assert list(warm.rglob("events.out.tfevents.*")) and (warm / "base").is_dir()
    about = json.loads((warm / "metrics.json").read_text())["about"]
    assert (about["threads"], about["steps"], about["batch"], about["mazes"]) == (2, 3, 4, 8)
    assert about["model_settings"]["config"]["num_hidden_layers"] == 2  # the tiny model's
    assert about["cpu"] and about["cpu_capability"]
    assert f"on cpu with 2 threads ({about['cpu']}" in capsys.readouterr().out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main(["train", "--data", str(train), "--out", str(run), "--model", str(warm / "model"),
              "--steps", "2", "--group", "4", "--prompts", "2", "--max-completion-length", "6",
              "--lr", "1e-2"])  # fmt: skip
    assert [str(w.message) for w in caught if "checkpointing" in str(w.message)] == []
    # the mean reward of each step as the tutorial shows it: 2 groups of 4, so k/8
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("reward "))
    rewards = [float(v) for v in line.removeprefix("reward ").split(", ")]
    assert len(rewards) == 2 and all(float(r * 8).is_integer() for r in rewards), line
    assert (run / "model" / "model.safetensors").is_file() and not (run / "base").exists()
    assert list(run.rglob("events.out.tfevents.*"))
    about = json.loads((run / "metrics.json").read_text())["about"]
    assert (about["algo"], about["gamma"], about["group"], about["threads"]) == ("grpo", 0.5, 4, 1)
    assert about["sampling"]["temperature"] == 1.0  # TRL's default, as GRPOConfig holds it
    assert about["sampling"]["max_completion_length"] == 6
    assert about["grpo_config"]["learning_rate"] == 1e-2
    for folder, name in ((warm / "model", "base"), (run / "model", "trained")):
        main(["eval", "--model", str(folder), "--data", str(sets),
              "--out", str(tmp_path / "cmp" / name), "--n", "4", "--sampled-mazes", "2",
              "--temperature", "0.5"])  # fmt: skip
    printed = capsys.readouterr().out
    assert "id: sampled (2 mazes, n 4): pass@1 " in printed
    assert "; exact (5 mazes): exact_pass@1 " in printed  # every maze of the set of 5
    assert "ood_dfs: sampled (2 mazes, n 4)" in printed and "exact (3 mazes)" in printed
    metrics = json.loads((tmp_path / "cmp" / "trained" / "metrics.json").read_text())
    assert {"eval/id/exact_pass@1", "eval/ood_dfs/pass@4"} <= set(metrics["final"])
    assert metrics["code"] == code_identity()
    about = metrics["about"]
    assert (about["temperature"], about["top_k"], about["top_p"], about["n"]) == (
        0.5,
        None,
        None,
        4,
    )
    assert about["mazes"] == {
        "id": {"sampled": 2, "exact": 5},
        "ood_dfs": {"sampled": 2, "exact": 3},
    }
    assert about["threads"] == 1 and about["model_settings"]["class"] == "LlamaForCausalLM"
    overrides = (tmp_path / "cmp" / "trained" / ".hydra" / "overrides.yaml").read_text()
    assert overrides == "- model=trained\n- temperature=0.5\n- seed=0\n"
    per = json.loads((tmp_path / "cmp" / "trained" / "eval" / "step_0000000.json").read_text())
    assert len(per["id"]["per_maze"]["exact_p"]) == 5 and per["ood_dfs"]["per_maze"]["n"] == 4
    assert len(per["id"]["per_maze"]["successes"]) == per["id"]["mazes"]["sampled"] == 2
    text = summarize(tmp_path / "cmp")
    assert "### model, id" in text and "| model=trained | model=base | 1 | 5 |" in text
    assert "nan" not in text  # no Δ-vs-base columns: an evaluated model has no recorded base
    # an evaluation-only sweep says so, and nothing of training
    assert text.startswith("An evaluation-only sweep: each run evaluated a model as it is")
    assert "reference: model=base)" in text
    body = text.split("\n\n", 1)[1].replace("model=trained", "")  # after that paragraph
    for training in ("train", "GRPO", "gamma", "still moving", "intervals in this table"):
        assert training not in body, training
