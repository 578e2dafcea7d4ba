"""`mazerl-llm`: export, train and evaluate from the command line; bad input is one error line
and exit code 2, with nothing written."""

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("datasets")

from mazerl.analysis import summarize
from mazerl.apps.llm import main
from mazerl.core.provenance import code_identity


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
    assert "unknown advantage estimator 'ppo'; known: drgrpo, grpo, maxrl," in unknown
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    taken = fails(
        capsys, "eval", "--model", "m", "--data", str(data), "--out", str(tmp_path / "full")
    )
    assert "already exists and is not empty" in taken
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "full"]


def test_export_train_evaluate_and_summarize(tmp_path, capsys):
    train, sets = tmp_path / "train.jsonl", tmp_path / "eval.parquet"
    main(["export", str(train), "--generator", "prim", "--size", "2", "--start-goal", "random",
          "--count", "8"])  # fmt: skip
    two = "eval.sets=[{name: id, num_mazes: 5}, {name: ood_dfs, generator: dfs, num_mazes: 3}]"
    main(["export", str(sets), "--eval-sets", "maze.size=2", two])
    run = tmp_path / "run"
    main(["train", "--data", str(train), "--out", str(run), "--steps", "2", "--group", "4",
          "--prompts", "2", "--max-completion-length", "6", "--lr", "1e-2"])  # fmt: skip
    assert (run / "model" / "model.safetensors").is_file() and (run / "base").is_dir()
    assert list(run.rglob("events.out.tfevents.*"))
    for folder, name in (("base", "base"), ("model", "trained")):
        main(["eval", "--model", str(run / folder), "--data", str(sets),
              "--out", str(tmp_path / "cmp" / name), "--n", "4"])  # fmt: skip
    metrics = json.loads((tmp_path / "cmp" / "trained" / "metrics.json").read_text())
    assert {"eval/id/exact_pass@1", "eval/ood_dfs/pass@4"} <= set(metrics["final"])
    assert metrics["code"] == code_identity()
    per = json.loads((tmp_path / "cmp" / "trained" / "eval" / "step_0000000.json").read_text())
    assert len(per["id"]["per_maze"]["exact_p"]) == 5 and per["ood_dfs"]["per_maze"]["n"] == 4
    text = summarize(tmp_path / "cmp")
    assert "### model, id" in text and "| model=trained | model=base | 1 | 5 |" in text
