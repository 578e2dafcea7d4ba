"""Nothing lost, nothing silent: exact resume after a kill, determinism, sweep re-launch,
config validation from the command line, numeric guards."""

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import FAST, metrics, options, run_app, scalars
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

import mazerl
from mazerl.algos import ADVANTAGES, POLICY_LOSSES
from mazerl.apps.schema import register_configs, typed
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import UserError
from mazerl.core.files import locked
from mazerl.core.provenance import PACKAGE_DIR, code_identity
from mazerl.envs.generators import GENERATORS
from mazerl.policy import POLICIES
from mazerl.train.loop import TrainingError, train
from mazerl.train.scalar_log import ScalarLog

TIMING = ("tokens_per_s", "rollouts_per_s")


def comparable(run_dir):
    """Every logged scalar except wall-clock timings."""
    return {
        k: v
        for k, v in scalars(run_dir).items()
        if not k.startswith("time/") and not k.endswith(TIMING)
    }


def final_params(run_dir):
    ckpts = sorted((run_dir / "checkpoints").glob("ckpt_*.pt"))
    return torch.load(ckpts[-1], weights_only=False)["policy_state"]


RESUME = [
    "train.iterations=12",
    "train.checkpoint_every=1",
    "train.eval_every=4",
    "train.keep_checkpoints=3",
]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killed_and_resumed_run_equals_uninterrupted_run(train, tmp_path, base_cache, sig):
    _, whole = train(*RESUME, run_dir=tmp_path / "whole")
    cut = tmp_path / "cut"
    cmd = [
        sys.executable,
        "-m",
        "mazerl.apps.train",
        *FAST,
        f"hydra.run.dir={cut}",
        f"base.cache_dir={base_cache}",
        *RESUME,
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 120
    while not (cut / "checkpoints" / "ckpt_0000004.pt").exists():
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {sig.name} after iteration" in err and "run the same command" in err
    assert "Traceback" not in err
    stopped_at = int(err.split("after iteration ")[1].split("/")[0])
    assert 4 <= stopped_at < 12 and not (cut / "metrics.json").exists()
    assert not (cut / ".run.lock").exists()  # released on the way out

    out, _ = train(*RESUME, run_dir=cut)  # the same command again resumes
    assert f"resuming from {cut}/checkpoints/ckpt_{stopped_at:07d}.pt" in out.stdout
    a, b = final_params(whole), final_params(cut)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    sa, sb = comparable(whole), comparable(cut)
    assert sa.keys() == sb.keys()
    for tag in sa:  # identical values, each step logged exactly once
        assert sa[tag] == sb[tag], tag
    assert [s for s, _ in sb["train/reward_mean"]] == list(range(1, 13))
    assert metrics(whole)["final"] == metrics(cut)["final"]
    # train.csv (a row per checkpoint here): the same rows once each, timings aside
    rows_whole, rows_cut = ([untimed(r) for r in train_rows(run)] for run in (whole, cut))
    assert [int(r["step"]) for r in rows_cut] == list(range(1, 13))
    assert rows_cut == rows_whole


def untimed(row: dict) -> dict:
    return {k: v for k, v in row.items() if not k.startswith("time/") and not k.endswith(TIMING)}


def train_rows(run):
    with open(run / "train.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_train_csv_keeps_window_means_and_drops_rows_after_the_checkpoint(tmp_path):
    path = tmp_path / "train.csv"
    log = ScalarLog(path, every=4, start=0, total=10)
    for step in range(1, 7):
        log.add(step, {"train/reward_mean": step / 10, "routes/tail_miss": float(step % 2)})
    log.flush(6)  # a checkpoint at 6
    log.add(7, {"train/reward_mean": 0.7, "routes/tail_miss": 1.0})
    rows = train_rows(tmp_path)
    # steps 1-4: reward (0.1 + 0.2 + 0.3 + 0.4) / 4, tail misses (1 + 0 + 1 + 0) / 4
    assert rows == [
        {"step": "4", "train/reward_mean": "0.25", "routes/tail_miss": "0.5"},
        {"step": "6", "train/reward_mean": "0.55", "routes/tail_miss": "0.5"},
    ]
    with open(path, "a") as f:
        f.write("8,0.8")  # a row cut short by a crash
    ScalarLog(path, every=4, start=4, total=10)  # resumed from the checkpoint at 4
    assert [r["step"] for r in train_rows(tmp_path)] == ["4"]
    ScalarLog(path, every=4, start=0, total=10)  # started over
    assert not path.exists()


def test_same_seed_is_bit_identical_and_seed_matters(train, tmp_path):
    _, a = train("train.iterations=5", run_dir=tmp_path / "a")
    _, b = train("train.iterations=5", run_dir=tmp_path / "b")
    _, c = train("train.iterations=5", "seed=1", run_dir=tmp_path / "c")
    assert comparable(a) == comparable(b)
    assert metrics(a)["final"] == metrics(b)["final"]
    assert comparable(a)["train/reward_mean"] != comparable(c)["train/reward_mean"]


def test_changing_the_eval_size_does_not_change_training(train, tmp_path):
    """Separate streams: training mazes and sampling do not depend on the evaluation sets
    (on 5x5 mazes, where no training maze equals an evaluation maze)."""
    common = [
        "maze.size=5",
        "base.steps=30",
        "base.target_pass1=null",
        "train.iterations=4",
        "train.eval_every=0",
    ]
    _, small = train(*common, "eval.sets.0.num_mazes=4", run_dir=tmp_path / "small")
    _, large = train(*common, "eval.sets.0.num_mazes=12", run_dir=tmp_path / "large")
    train_small = {k: v for k, v in comparable(small).items() if k.startswith("train/")}
    train_large = {k: v for k, v in comparable(large).items() if k.startswith("train/")}
    assert train_small == train_large
    a, b = final_params(small), final_params(large)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_relaunched_sweep_skips_finished_jobs_and_resumes_unfinished(tmp_path, base_cache):
    sweep = tmp_path / "sweep"
    args = [
        "-m",
        *FAST,
        f"hydra.sweep.dir={sweep}",
        f"base.cache_dir={base_cache}",
        "train.iterations=4",
        "train.checkpoint_every=1",
        "train.eval_every=0",
        "train.group_size=8",  # replaces the smoke preset's own N sweep
        "focal.gamma=0,0.5",
    ]
    first = run_app("mazerl.apps.train", *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert [j.name for j in jobs] == [
        "N8_g0.5_checkpoint_every1_eval_every0_iterations4",
        "N8_g0_checkpoint_every1_eval_every0_iterations4",
    ]
    # simulate a crash of the second job after iteration 3
    (jobs[1] / "metrics.json").unlink()
    (jobs[1] / "checkpoints" / "ckpt_0000004.pt").unlink()
    before = (jobs[0] / "metrics.json").stat().st_mtime_ns
    saved = {f.name: f.read_text() for f in (jobs[0] / ".hydra").iterdir()}
    assert "num: 1" in saved["hydra.yaml"]  # gamma 0.5: the first sweep's second job
    # the values in the other order: the finished job is the new sweep's job 0
    again = run_app("mazerl.apps.train", *args[:-1], "focal.gamma=0.5,0", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{jobs[0]}: already finished (metrics.json exists); skipping" in again.stdout
    assert "ckpt_0000003.pt at iteration 3" in again.stdout
    assert (jobs[0] / "metrics.json").stat().st_mtime_ns == before
    # the skipped job's saved config is the first sweep's, the resumed job's the new one's
    assert {f.name: f.read_text() for f in (jobs[0] / ".hydra").iterdir()} == saved
    assert "num: 1" in (jobs[1] / ".hydra" / "hydra.yaml").read_text()
    assert (jobs[1] / "metrics.json").exists()


# the names each message lists, from the registries and the YAML files
GENERATORS_ = ", ".join(GENERATORS.known())
LOSSES = ", ".join(POLICY_LOSSES.known())
ESTS = ", ".join(ADVANTAGES.known())
ALGO_OPTIONS, POLICY_OPTIONS = options("algo"), options("policy")
BAD_CONFIGS = [
    (["train.group_size=1"], "train.group_size must be >= 2"),
    (["focal.gamma=-0.5"], "focal.gamma must be >= 0"),
    (["algo.clip_low=0"], "algo.clip_low must be > 0"),
    (["algo.clip_high=-1"], "algo.clip_high must be > 0"),
    (["eval.ks=[1,64]"], "eval.ks must be in [1, eval.n=32]"),
    (["maze.size=1"], "maze.size must be in [2, 64] cells"),
    (["maze.size=65"], "maze.size must be in [2, 64] cells"),
    (["maze.generator=nope"], f"maze.generator must be a registered generator ({GENERATORS_})"),
    (["algo.loss=nope"], f"algo.loss must be a registered policy loss ({LOSSES})"),
    (["algo.advantage=nope"], f"algo.advantage must be a registered advantage estimator ({ESTS})"),
    (
        ["policy.name=nope"],
        f"policy.name must be a registered policy ({', '.join(POLICIES.known())})",
    ),
    (["algo=nope"], f"unknown option algo=nope (options: {', '.join(ALGO_OPTIONS)})"),
    (["policy=nope"], f"unknown option policy=nope (options: {', '.join(POLICY_OPTIONS)})"),
    (["train.lrr=1"], "unknown key train.lrr; did you mean train.lr?"),
    (["train.iterations=many"], "train.iterations must be an integer >= 1, got many"),
    (["device=cuda"], "device=cuda requested but CUDA is not available here"),
    (["maze.layout=/no/such.txt"], "/no/such.txt: no such file, and not a shipped layout"),
    (["base.path=/no/base.pt"], "base.path must be an existing file, got '/no/base.pt'"),
    (
        ["train.zero_gradient_step=false", "train.skip_zero_advantage=false"],
        "train.zero_gradient_step must be true while train.skip_zero_advantage=false, got False",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), BAD_CONFIGS, ids=lambda x: str(x)[:40])
def test_bad_config_is_one_clear_message_and_nonzero_exit(tmp_path, overrides, message):
    out = run_app(
        "mazerl.apps.train",
        *FAST,
        f"hydra.run.dir={tmp_path}/run",
        *overrides,
        cwd=tmp_path,
        timeout=60,
    )
    assert out.returncode == 2
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "run").exists()  # checked before any work; no run dir left


def test_bad_layout_file_names_file_line_column(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("#####\n#S..#\n#.#?#\n#..G#\n#####\n")
    out = run_app(
        "mazerl.apps.train",
        *FAST,
        f"hydra.run.dir={tmp_path}/run",
        f"maze.layout={bad}",
        cwd=tmp_path,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {bad}:3:4: unknown character '?' (use '#', '.', 'S', 'G')"


def _run_base(run_dir: Path) -> Path:
    """The base model a run started from (recorded in its checkpoints)."""
    ckpt = sorted((run_dir / "checkpoints").glob("*.pt"))[-1]
    return Path(torch.load(ckpt, weights_only=False)["base"]) / "base.pt"


def test_base_checkpoint_of_another_policy_is_rejected(train, tmp_path):
    _, seed_run = train("train.iterations=1", run_dir=tmp_path / "seed")
    base = _run_base(seed_run)
    out, _ = train(f"base.path={base}", "policy.hidden=48", check=False)
    assert out.returncode == 2
    assert "holds a different policy (differs in policy.hidden)" in out.stderr
    out = run_app("mazerl.apps.eval", "checkpoint=/no/ckpt.pt", cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and "checkpoint /no/ckpt.pt does not exist" in out.stderr


def _nan_loss(**kwargs):
    loss, metrics = POLICY_LOSSES.get("clip")(**kwargs)
    return loss * float("nan"), metrics


def _smoke_config(run_dir: Path, base_cache: Path, *overrides: str):
    """The smoke preset's typed config for calling `train` in this process, Hydra's run dir
    set."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=[*FAST, f"base.cache_dir={base_cache}", *overrides],
            return_hydra_config=True,
        )
    with open_dict(cfg):
        cfg.hydra.runtime.output_dir = str(run_dir)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    return typed(cfg)


def test_non_finite_steps_are_skipped_counted_and_stop_the_run(tmp_path, base_cache, monkeypatch):
    # registered for this test only: tests that walk every loss must not meet it
    monkeypatch.setitem(POLICY_LOSSES._entries, "nan_for_test", _nan_loss)
    cfg = _smoke_config(
        tmp_path / "run",
        base_cache,
        "algo.loss=nan_for_test",
        "train.max_bad_steps=3",
        "train.checkpoint_every=1",
        "train.iterations=10",
    )
    with pytest.raises(TrainingError, match="3 iterations in a row had a non-finite loss"):
        train(cfg, tmp_path / "run")
    assert not (tmp_path / "run" / ".run.lock").exists()  # released on an error too
    ckpts = sorted((tmp_path / "run" / "checkpoints").glob("*.pt"))
    assert [p.name for p in ckpts] == ["ckpt_0000001.pt", "ckpt_0000002.pt"]
    skipped = [v for _, v in scalars(tmp_path / "run")["train/skipped_steps"]]
    assert skipped == [1.0, 2.0, 3.0]
    # parameters never changed: the last good checkpoint equals this run's base model
    base = torch.load(_run_base(tmp_path / "run"), weights_only=False)["policy_state"]
    last = torch.load(ckpts[-1], weights_only=False)["policy_state"]
    assert all(torch.equal(base[k], last[k]) for k in base)


def test_a_run_dir_another_job_trains_is_refused_in_one_line_and_left_untouched(
    tmp_path, base_cache
):
    """Two jobs on one run dir (a sweep re-launched while the first one's workers still run)
    would interleave checkpoints, train.csv rows and evaluations: the second one stops."""
    run = tmp_path / "run"
    cfg = _smoke_config(run, base_cache, "train.iterations=2")
    message = (
        f"{run}: another job (pid {os.getpid()} on host {socket.gethostname()}) is training "
        "this run; two jobs would write one folder: stop that job (kill its whole process "
        "group; a joblib sweep's workers outlive their parent) or wait for it"
    )
    with locked(run / ".run.lock"):  # the other job: this process
        with pytest.raises(UserError) as refused:
            train(cfg, run)
        assert str(refused.value) == message
        assert [p.name for p in run.iterdir()] == [".run.lock"]  # nothing read or written
        cli = run_app(
            "mazerl.apps.train", *FAST, f"hydra.run.dir={run}", f"base.cache_dir={base_cache}",
            "train.iterations=2", cwd=tmp_path, timeout=60,
        )  # fmt: skip
        assert cli.returncode == 2 and cli.stderr.strip() == f"error: {message}", cli.stderr
        left = {p.name for p in run.iterdir()} - {".run.lock", ".hydra"}
        assert all(name.endswith(".log") for name in left), left  # only what Hydra wrote
    assert not (run / ".run.lock").exists()
    train(cfg, run)  # the lock released: the run trains
    assert metrics(run)["iterations"] == 2 and (run / "checkpoints" / "ckpt_0000002.pt").exists()
    # the code it ran at: this checkout's HEAD (None where the tests run from no checkout)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PACKAGE_DIR, capture_output=True)
    code = metrics(run)["code"]
    assert code == code_identity() and code["version"] == mazerl.__version__
    assert code["commit"] in (head.stdout.decode().strip(), None)
    assert isinstance(code["dirty"], bool) == (code["commit"] is not None)
    assert not [p.name for p in run.iterdir() if "run.lock" in p.name]  # lock and temporaries


def test_resume_refuses_a_checkpoint_of_another_config(train, tmp_path):
    _, run = train("train.iterations=2", run_dir=tmp_path / "r")
    (run / "metrics.json").unlink()
    out, _ = train("train.iterations=4", "focal.gamma=1.0", run_dir=run, check=False)
    assert out.returncode == 2
    assert "was written by a different config (differs in focal.gamma)" in out.stderr
    first = json.loads((run / "eval" / "step_0000002.json").read_text())["id"]["pass@1"]
    out, _ = train("train.iterations=4", run_dir=run)  # more iterations: resumes
    assert "resuming from" in out.stdout and metrics(run)["iterations"] == 4
    # the progress line shows the last evaluation's pass@1 (step 2's), not the base model's
    base = metrics(run)["base"]["eval/id/pass@1"]
    line = next(x for x in out.stdout.splitlines() if "iteration 4/4" in x)
    assert f"eval pass@1 {first:.3f}" in line and f"{first:.3f}" != f"{base:.3f}"


def test_corrupt_latest_checkpoint_and_metrics_json_are_survived(train, tmp_path):
    """A truncated newest checkpoint: resume falls back to the previous one with one warning
    naming it; an unreadable metrics.json: the re-launch resumes the run instead of skipping."""
    args = ["train.iterations=4", "train.checkpoint_every=1", "train.keep_checkpoints=3"]
    _, run = train(*args, run_dir=tmp_path / "r")
    latest = run / "checkpoints" / "ckpt_0000004.pt"
    latest.write_bytes(latest.read_bytes()[:1000])  # truncated by a full disk, say
    (run / "metrics.json").write_text('{"final": ')  # a half-written file
    out, _ = train(*args, run_dir=run)
    # warnings go to stderr
    assert "metrics.json (JSONDecodeError" in out.stderr
    assert "treating the run as unfinished and resuming it" in out.stderr
    assert f"warning: skipping {latest}: checkpoint {latest} cannot be read" in out.stderr
    assert f"resuming from {run}/checkpoints/ckpt_0000003.pt at iteration 3" in out.stdout
    assert metrics(run)["iterations"] == 4 and "Traceback" not in out.stderr


def test_non_finite_parameters_are_never_checkpointed_nor_resumed(tmp_path):
    from mazerl.core.errors import CheckpointError
    from mazerl.train.run_state import RunState

    net = torch.nn.Linear(2, 2)
    config = {"policy": {"name": "x"}}
    state = RunState(tmp_path, 3, config, tmp_path, {}, policy_state=net)
    state.iteration = 1
    good = state.save()
    with torch.no_grad():
        net.weight[0, 0] = float("inf")
    state.iteration = 2
    with pytest.raises(CheckpointError, match="not saving iteration 2: the parameters are not"):
        state.save()
    assert not (tmp_path / "ckpt_0000002.pt").exists()
    # a non-finite checkpoint written by an older version is skipped on resume
    bad = torch.load(good, weights_only=False)
    bad["policy_state"]["bias"][:] = float("nan")
    bad["iteration"] = 2
    torch.save(bad, tmp_path / "ckpt_0000002.pt")
    logged = []
    fresh = RunState(tmp_path, 3, config, tmp_path, {}, policy_state=torch.nn.Linear(2, 2))
    assert fresh.resume("cpu", logged.append) == good and fresh.iteration == 1
    assert logged == [
        f"warning: skipping {tmp_path}/ckpt_0000002.pt: its parameters are not finite"
    ]


def test_summarizer_lists_unreadable_metrics_by_name_and_summarizes_the_rest(tmp_path):
    from mazerl.analysis.runs import find_runs
    from mazerl.analysis.tables import aggregate, markdown

    contents = {
        "a": '{"final": {"eval/id/pass@1": 0.5}}',
        "b": "{}",
        "c": '"a string"',
        "d": '{"final": {"eval/id/pass@1": "high"}}',
        "e": "{not json",
    }
    for name, text in contents.items():
        (tmp_path / name / ".hydra").mkdir(parents=True)
        (tmp_path / name / ".hydra" / "overrides.yaml").write_text(f"- seed={ord(name)}\n")
        (tmp_path / name / "metrics.json").write_text(text)
    runs = {r.path.name: r for r in find_runs(tmp_path)}
    assert runs["a"].metrics["final"] == {"eval/id/pass@1": 0.5} and runs["a"].problem == ""
    for name in "bcd":
        assert runs[name].metrics is None
        assert runs[name].problem == "unreadable metrics.json (no numeric 'final' metrics)"
    assert runs["e"].problem.startswith("unreadable metrics.json (JSONDecodeError: ")
    cols, rows = aggregate(list(runs.values()))
    table = markdown(cols, rows, list(runs.values()))
    assert "5 runs, 1 finished" in table and "0.5" in table
    assert "- b: unreadable metrics.json (no numeric 'final' metrics)" in table


def test_a_job_waiting_for_the_base_evaluation_says_so_once_with_the_lock_path(tmp_path):
    import threading

    from mazerl.core.config import to_container
    from mazerl.core.files import config_hash, locked
    from mazerl.envs.spec import MazeSpec, MazeTask
    from mazerl.eval.config import EvalConfig
    from mazerl.eval.evaluate import SetResult
    from mazerl.eval.metric_names import Metric
    from mazerl.eval.runner import BaseEvaluation

    task, eval = MazeTask(MazeSpec(size=3)), EvalConfig(n=4)
    e = {k: v for k, v in to_container(eval).items() if k not in ("images", "images_every")}
    key = config_hash(e, task.episodes(), "sha")
    (tmp_path / f"eval_{key}.json").write_text('{"id": {"pass@1": 0.25}}')
    lock = tmp_path / f".eval_{key}.lock"
    logged, done = [], []
    with locked(lock):  # another job holds the lock
        waiter = threading.Thread(
            target=lambda: done.append(
                BaseEvaluation.load_or_run(
                    tmp_path,
                    None,
                    [],
                    "cpu",
                    logged.append,
                    task=task,
                    eval=eval,
                    weights="sha",
                )
            )
        )
        waiter.start()
        deadline = time.time() + 10
        while not logged and time.time() < deadline:
            time.sleep(0.01)
        assert logged == [f"waiting for another job holding the lock {lock}"] and not done
    waiter.join(10)
    assert done[0].results == {"id": SetResult({Metric("pass", k=1): 0.25})}
    assert len(logged) == 1


def test_checkpoints_written_before_the_new_settings_still_resume(tmp_path):
    """A study's checkpoint from before `train.stop_on_zero_advantage` and
    `train.zero_gradient_step` existed and while `checkpoint` was a training key resumes under
    today's config (a re-launch finds it); a new setting only at its old behaviour."""
    from hydra import compose, initialize_config_dir

    from mazerl.core.config import to_container
    from mazerl.core.errors import CheckpointError
    from mazerl.train.run_state import check_same_run

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        now = to_container(typed(compose("config", overrides=["experiment=maze_group_sweep"])))
    saved = {**now, "checkpoint": None, "train": dict(now["train"]), "algo": dict(now["algo"])}
    del saved["train"]["stop_on_zero_advantage"]
    del saved["train"]["zero_gradient_step"]  # the decisive study's checkpoints (05a85bb)
    for key in ("advantage_kwargs", "reward_transform", "reward_transform_kwargs", "entropy_coef"):
        del saved["algo"][key]  # the objective's parts came later (issue 28)
    check_same_run(saved, now, tmp_path / "ckpt.pt")
    entropy = {**now, "algo": {**now["algo"], "entropy_coef": 0.01}}
    with pytest.raises(CheckpointError, match=r"differs in algo\.entropy_coef"):
        check_same_run(saved, entropy, tmp_path / "ckpt.pt")  # only at the old behaviour
    skipping = {**now, "train": {**now["train"], "zero_gradient_step": False}}
    with pytest.raises(CheckpointError, match=r"differs in train\.zero_gradient_step"):
        check_same_run(saved, skipping, tmp_path / "ckpt.pt")
    saved["train"]["group_size"] = 16  # a real difference is still refused
    with pytest.raises(CheckpointError, match=r"differs in train\.group_size"):
        check_same_run(saved, now, tmp_path / "ckpt.pt")


def test_a_fork_continues_another_runs_state_under_changed_settings(train, tmp_path):
    """`train.fork`: a fork with the same settings ends bit-identical to the run it forks
    (weights, optimizer moments, schedule, random state all carried); one with a setting
    changed trains differently from the fork on, keeps the evaluations before it and records
    the setting; a checkpoint at the run's end and a run dir with checkpoints of its own are
    refused in one line."""
    args = ["train.iterations=8", "train.checkpoint_every=4", "train.eval_every=2"]
    _, whole = train(*args, "train.keep_checkpoints=3", run_dir=tmp_path / "whole")
    ckpt = whole / "checkpoints" / "ckpt_0000004.pt"

    out, same = train(*args, f"train.fork={ckpt}", run_dir=tmp_path / "same")
    assert (
        f"forking from {ckpt} at iteration 4 (its evaluations copied); settings that differ: none"
        in out.stdout
    )
    assert metrics(same)["final"] == metrics(whole)["final"]
    a, b = final_params(whole), final_params(same)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert metrics(same)["forked"] == {"checkpoint": str(ckpt), "iteration": 4, "differs": []}
    assert metrics(whole)["forked"] is None
    after = [untimed(r) for r in train_rows(whole) if int(r["step"]) > 4]
    assert [untimed(r) for r in train_rows(same)] == after  # train.csv starts at the fork
    assert sorted(p.name for p in (same / "eval").glob("step_*.json")) == [
        f"step_{s:07d}.json" for s in (2, 4, 6, 8)
    ]

    out, changed = train(*args, f"train.fork={ckpt}", "train.lr=0.003", run_dir=tmp_path / "lr")
    assert "settings that differ: train.lr" in out.stdout
    assert metrics(changed)["forked"]["differs"] == ["train.lr"]
    early, late = (
        json.loads((run / "eval" / "step_0000004.json").read_text()) for run in (whole, changed)
    )
    assert early == late  # the evaluations up to the fork are the forked run's
    assert float(train_rows(changed)[-1]["train/lr"]) == pytest.approx(3e-3)  # this run's lr
    c = final_params(changed)
    assert not all(torch.equal(a[k], c[k]) for k in a)  # from the fork on, trained otherwise

    (changed / "metrics.json").unlink()  # its own checkpoints: another fork is refused
    later = whole / "checkpoints" / "ckpt_0000008.pt"
    out, _ = train(*args, f"train.fork={later}", "train.lr=0.003", run_dir=changed, check=False)
    assert out.returncode == 2 and "has checkpoints of its own" in out.stderr
    out, _ = train("train.iterations=4", f"train.fork={ckpt}", run_dir=tmp_path / "e", check=False)
    assert out.returncode == 2 and "is at iteration 4, not before the run's end (4)" in out.stderr
    assert "Traceback" not in out.stderr


def _tiny_run(folder: Path, lr: float, betas, weight_decay: float, sha256: str = "a" * 64):
    """A RunState over a 3 -> 2 linear layer with AdamW and a warm-up + cosine schedule of 10
    iterations, as the training loop builds them."""
    from mazerl.train.run_state import RunState
    from mazerl.train.schedule import lr_factor

    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda it: lr_factor(it, 10, 2, "cosine"))
    config = {"policy": {}, "train": {"lr": lr, "betas": list(betas), "wd": weight_decay}}
    state = RunState(
        folder, 2, config, folder, {"sha256": sha256},
        policy_state=model, optimizer=opt, scheduler=sched,
    )  # fmt: skip
    return state, model, opt, sched


def test_a_fork_takes_the_checkpoints_moments_and_this_runs_lr_betas_and_decay(tmp_path):
    """The moments, step counts and weights are the checkpoint's; lr (at the checkpoint's
    place in this run's schedule), betas and weight decay this run's; a missing file, one that
    is not a training checkpoint and one that started from another base model are refused."""
    from mazerl.core.errors import CheckpointError
    from mazerl.train.schedule import lr_factor

    torch.manual_seed(0)
    source, model, opt, sched = _tiny_run(tmp_path / "a", 1e-3, (0.9, 0.999), 0.0)
    for _ in range(4):
        opt.zero_grad()
        model(torch.randn(5, 3)).square().sum().backward()
        opt.step()
        sched.step()
    source.iteration = 4
    ckpt = source.save()

    fork, model2, opt2, sched2 = _tiny_run(tmp_path / "b", 5e-3, (0.5, 0.9), 0.1)
    forked = fork.fork(ckpt, torch.device("cpu"))
    assert forked == {"checkpoint": str(ckpt), "iteration": 4, "differs": [
        "train.betas", "train.lr", "train.wd"]}  # fmt: skip
    group = opt2.param_groups[0]
    assert group["lr"] == pytest.approx(5e-3 * lr_factor(4, 10, 2, "cosine"))
    assert group["lr"] != pytest.approx(5e-3 * lr_factor(0, 10, 2, "cosine"))
    assert group["betas"] == (0.5, 0.9) and group["weight_decay"] == 0.1
    for p, q in zip(model.parameters(), model2.parameters(), strict=True):
        assert torch.equal(p, q)
        mine, theirs = opt2.state[q], opt.state[p]
        assert torch.equal(mine["exp_avg"], theirs["exp_avg"]) and float(mine["step"]) == 4
        assert torch.equal(mine["exp_avg_sq"], theirs["exp_avg_sq"])
    sched2.step()
    assert sched2.get_last_lr()[0] == pytest.approx(5e-3 * lr_factor(5, 10, 2, "cosine"))

    other, *_ = _tiny_run(tmp_path / "c", 1e-3, (0.9, 0.999), 0.0, sha256="0" * 64)
    with pytest.raises(CheckpointError, match=r"started from another base model \(sha256 "):
        other.fork(ckpt, torch.device("cpu"))
    with pytest.raises(CheckpointError, match=r"train\.fork: no checkpoint file at"):
        other.fork(tmp_path / "none.pt", torch.device("cpu"))
    broken = torch.load(ckpt, weights_only=False)
    broken["policy_state"]["weight"][0, 0] = float("nan")
    torch.save(broken, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match="its parameters are not finite"):
        fork.fork(tmp_path / "nan.pt", torch.device("cpu"))
    from mazerl.core.errors import UserError
    from mazerl.train.run_state import start_fork

    own = tmp_path / "run" / "checkpoints" / "ckpt_0000004.pt"
    with pytest.raises(UserError, match="is this run dir's own; fork into another"):
        start_fork(fork, own, tmp_path / "run", 10, torch.device("cpu"))
    base_like = tmp_path / "base.pt"
    torch.save({"policy_state": model.state_dict(), "config": {}}, base_like)
    with pytest.raises(CheckpointError, match="is not a mazerl-train checkpoint"):
        other.fork(base_like, torch.device("cpu"))
