"""Settings are checked before torch loads: each mistake of the common list (issue 53) is one
`error:` line and exit 2 with torch never imported, the list of
`experiments/mistake_latency.py` (which times the same list as whole processes: run it with
`--busy` for the figure with one core busy; timing is not a test). A bad key or value inside
a preset or a config file of your own names the key and the file: `failed_file` reads the
file from Hydra's exception, pinned here to the installed Hydra. A mistake leaves no folder
behind: a single run's is found before Hydra makes one (`CheckSettings.on_run_start`); a
sweep job's folder stays as the record of why it stopped (`check_job`)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, options, run_app

from mazerl.algos.config import ADVANTAGES
from mazerl.envs.layouts import shipped_layouts

SCRIPT = ROOT / "experiments" / "mistake_latency.py"


def expected(tmp: Path) -> dict[str, str]:
    """Each mistake's whole stderr, its options taken from the registries and the YAMLs."""
    algos, policies = options("algo"), options("policy")
    return {
        "unknown_key": "unknown key train.lrr; did you mean train.lr?",
        "wrong_type": "train.group_size must be an integer >= 2, got abc",
        "group_size_0": "train.group_size must be >= 2, got 0",
        "missing_layout": f"{tmp}/missing.txt: no such file, and not a shipped layout "
        f"({', '.join(sorted(shipped_layouts()))})",
        "unknown_algo": f"unknown option algo=nosuch (options: {', '.join(algos)})",
        "unknown_estimator": "algo.advantage must be a registered advantage estimator "
        f"({', '.join(ADVANTAGES.known())}), got 'nosuch'",
        "unknown_policy": f"unknown option policy=nosuch (options: {', '.join(policies)})",
        "preset_typo": f"{tmp}/conf/experiment/typo.yaml: unknown key train.lrr; "
        "did you mean train.lr?",
        "config_file_type": f"{tmp}/conf/mine.yaml: train.group_size must be an integer >= 2, "
        "got x",
        "empty_sweep": f"no runs under {tmp}/empty (looked for folders with a .hydra/ config)",
    }


def test_each_mistake_is_one_line_before_torch_loads(tmp_path):
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--in-process", "--tmp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines()]
    lines = expected(tmp_path)
    assert [r["name"] for r in results] == list(lines)
    for r in results:
        assert (r["name"], r["code"], r["stderr"]) == (r["name"], 2, f"error: {lines[r['name']]}\n")
        assert not r["torch"], f"{r['name']}: torch was imported before the error"


# (file under the config dir, its text, the override that picks it, the line): Hydra stops
# merging the file; the line names the file and the key as written there
FILES = [
    (
        "experiment/sets.yaml",
        "# @package _global_\neval:\n  sets:\n    - {nme: x}\n",
        "experiment=sets",
        "unknown key eval.sets.0.nme; did you mean eval.sets.0.name?",
    ),
    (
        "train/mine.yaml",
        "defaults:\n  - default\nlrr: 0.1\n",
        "train=mine",
        "unknown key train.lrr; did you mean train.lr?",
    ),
    (
        "experiment/top.yaml",
        "# @package _global_\ndevcie: cpu\n",
        "experiment=top",
        "unknown key devcie; did you mean device?",
    ),
    (
        "maze/big.yaml",
        "defaults:\n  - default\nsize: large\n",
        "maze=big",
        "maze.size must be an integer in [2, 64] cells, got large",
    ),
]


@pytest.mark.parametrize(("path", "text", "override", "line"), FILES, ids=[f[0] for f in FILES])
def test_a_bad_key_or_value_in_a_config_file_names_the_file(tmp_path, path, text, override, line):
    conf = tmp_path / "conf"
    (conf / path).parent.mkdir(parents=True)
    (conf / path).write_text(text)
    out = run_app("mazerl.apps.train", "--config-dir", str(conf), override, cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, f"error: {conf / path}: {line}\n")


def test_a_mistake_leaves_no_folder(tmp_path):
    """A single run's mistake stops before Hydra makes the run folder; a sweep's job is checked
    in its folder, which stays with the line in its log (the record `mazerl-summarize` lists):
    the job fails, nothing retries it, and the driver repeats the line and exits 2."""
    out = run_app("mazerl.apps.train", "train.group_size=0", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, "error: train.group_size must be >= 2, got 0\n")
    assert list(tmp_path.iterdir()) == []
    sweep = tmp_path / "sweep"
    args = ("-m", "train.group_size=0", f"hydra.sweep.dir={sweep}", "hydra.sweep.subdir=job")
    out = run_app("mazerl.apps.train", *args, cwd=tmp_path)
    line = "error: train.group_size must be >= 2, got 0"
    # the job's own log line ("[job] error: ...") as it ran, then the driver's one line
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and [s for s in lines if s.startswith("error:")] == [line]
    assert lines[-1] == line
    assert sorted(p.name for p in sweep.iterdir()) == ["job", "multirun.yaml"]
    assert sorted(p.name for p in (sweep / "job").iterdir()) == [".hydra", "train.log"]
    assert line in (sweep / "job" / "train.log").read_text()
