"""Sweeps beyond one machine, as docs/guide/cluster.md runs them: a real local Ray cluster
(`ray start --head`, one CPU) joined with `hydra/launcher=ray_cluster`, and submitit's local
executor (`hydra/launcher=submitit_local`), each with a good and a bad job."""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from conftest import FAST, ROOT, run_app

from mazerl.analysis.folders import launched_jobs, unfinished_jobs

pytest.importorskip(
    "ray", reason="the cluster extra is not installed (pip install -e '.[cluster]')"
)
pytest.importorskip("submitit", reason="the cluster extra is not installed")

# two jobs: `bogus` is no registered generator (a user error inside the job), `prim` trains
# (`threads` left at its default: a job runs one thread per CPU its launcher reserves)
SWEEP = [*(o for o in FAST if not o.startswith("threads=")), "train.group_size=4", "focal.gamma=0"]
SWEEP += ["train.iterations=2", "base.steps=40"]
BAD_GOOD = "maze.generator=bogus,prim"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(pgid: int) -> None:
    """End the process group `pgid` (SIGTERM, then SIGKILL to what is left after 5 s)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        end = time.time() + wait
        try:
            os.killpg(pgid, sig)
            while time.time() < end:
                time.sleep(0.5)
                os.killpg(pgid, 0)
        except ProcessLookupError:
            return


@pytest.fixture(scope="module")
def ray_head():
    """A one-CPU Ray cluster started for these tests, in a folder of its own (its workers run
    there, with its environment: this checkout on PYTHONPATH, no MAZERL_CACHE), with token
    authentication, stopped by its process group (`ray start`'s, which its processes keep).
    Yields its address, its folder and its token."""
    port, where = free_port(), Path(tempfile.mkdtemp(prefix="ray_head_"))
    ray = shutil.which("ray", path=str(Path(sys.executable).parent))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    env.pop("MAZERL_CACHE", None)
    # token authentication (Ray 2.60's default wherever a token exists), with a token of its own
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    with (where / "start.log").open("w") as log:  # a pipe would stay open: its processes hold it
        head = subprocess.Popen(
            [ray, "start", "--head", f"--port={port}", "--num-cpus=1", "--disable-usage-stats",
             "--include-dashboard=false", f"--temp-dir={where / 'tmp'}"],
            cwd=where, env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        assert head.wait(timeout=120) == 0, (where / "start.log").read_text()[-2000:]
        yield f"127.0.0.1:{port}", where, env["RAY_AUTH_TOKEN"]
    finally:
        stop_group(head.pid)
        shutil.rmtree(where, ignore_errors=True)


def sweep_twice(tmp_path, base_cache, launcher: list[str], env: dict) -> tuple[Path, list]:
    """Launch the bad-and-good sweep twice into `sweep` (a path relative to the launch
    folder); returns the sweep dir and both runs' CompletedProcess."""
    (tmp_path / "cache").symlink_to(base_cache)  # MAZERL_CACHE=cache, relative
    args = ["-m", *SWEEP, BAD_GOOD, *launcher, "hydra.sweep.dir=sweep"]
    env = {**env, "MAZERL_CACHE": "cache"}
    runs = [
        run_app("mazerl.apps.train", *args, cwd=tmp_path, env=env, timeout=300) for _ in range(2)
    ]
    return tmp_path / "sweep", runs


def check_bad_and_good(sweep: Path, runs: list) -> Path:
    """What both launchers must give: the bad job's line once on the driver and exit 2, the
    good job's results kept, the relaunch skipping it, the summary listing the bad job."""
    lines = set()
    for out in runs:
        assert out.returncode == 2, out.stderr[-3000:]
        errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith("error: maze.generator"), out.stderr
        assert errors[0].endswith("got 'bogus'") and "Traceback" not in out.stderr
        lines.add(errors[0])
    (line,) = lines  # the job's own line, the same at each launch
    good = sweep / "N4_g0_steps40_generatorprim_iterations2"
    metrics = json.loads((good / "metrics.json").read_text())
    assert metrics["iterations"] == 2 and "eval/id/pass@1" in metrics["final"]
    assert "already finished (metrics.json exists); skipping" in (good / "train.log").read_text()
    # the bad job ran once per launch: its log holds its line twice, nothing else trained
    bad = sweep / "N4_g0_steps40_generatorbogus_iterations2"
    assert (bad / "train.log").read_text().count(line) == 2
    assert not (bad / "checkpoints").exists()
    summary = run_app("mazerl.apps.summarize", str(sweep), cwd=sweep.parent)
    assert summary.returncode == 0, summary.stderr[-3000:]
    assert "2 runs, 1 finished" in summary.stdout
    listed = summary.stdout.split("with no finished run (1 of 2; their logs):\n")[1]
    assert listed.startswith(f"- maze.generator=bogus: {bad / 'train.log'}: [")
    assert listed.rstrip().endswith(f"[ERROR] {line}")
    return good


def test_a_sweep_on_a_running_ray_cluster(tmp_path, base_cache, ray_head):
    address, head_dir, token = ray_head
    # the driver's token found, RAY_AUTH_MODE unset: the launcher turns token mode on
    env = {"RAY_ADDRESS": address, "RAY_AUTH_TOKEN": token}
    sweep, runs = sweep_twice(tmp_path, base_cache, ["hydra/launcher=ray_cluster"], env)
    assert sorted(p.name for p in sweep.iterdir() if p.is_dir()) == [
        "N4_g0_steps40_generatorbogus_iterations2",
        "N4_g0_steps40_generatorprim_iterations2",
    ]
    good = check_bad_and_good(sweep, runs)
    assert json.loads((good / "metrics.json").read_text())["threads"] == 1  # num_cpus: 1
    # the workers ran in the head's folder: nothing of the sweep or the cache landed there
    assert sorted(p.name for p in head_dir.iterdir()) == ["start.log", "tmp"]


def test_ray_mistakes_end_in_one_line_within_seconds(tmp_path, ray_head):
    address, _, token = ray_head
    closed = f"127.0.0.1:{free_port()}"
    cases = [  # (environment, overrides, the line's start)
        (
            {"RAY_ADDRESS": address, "RAY_AUTH_TOKEN": "0" * 64},
            [],
            f"error: hydra.launcher.ray.init.address={address} (from RAY_ADDRESS): the cluster "
            "refused the connection: it uses token authentication",
        ),
        (
            {"RAY_ADDRESS": closed},
            [],
            f"error: hydra.launcher.ray.init.address={closed} (from RAY_ADDRESS): nothing "
            "answers there within 10 s",
        ),
        (
            {"RAY_ADDRESS": address, "RAY_AUTH_TOKEN": token},
            ["hydra.launcher.ray.remote.num_cpus=2"],
            "error: hydra.launcher.ray.remote.num_cpus=2: no node of the Ray cluster has that "
            "much CPU (the largest has 1)",
        ),
    ]
    for env, overrides, line in cases:
        start = time.time()
        args = ["-m", *SWEEP, "seed=0,1", "hydra/launcher=ray_cluster", *overrides]
        out = run_app("mazerl.apps.train", *args, "hydra.sweep.dir=s", cwd=tmp_path, env=env)
        assert time.time() - start < 30
        assert out.returncode == 2, out.stderr[-3000:]
        errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith(line), out.stderr[-3000:]
        assert not [p for p in (tmp_path / "s").glob("*") if p.is_dir()]  # no job started


def test_a_sweep_through_submitit(tmp_path, base_cache):
    sweep, runs = sweep_twice(
        tmp_path,
        base_cache,
        ["hydra/launcher=submitit_local", "hydra.launcher.cpus_per_task=2"],
        {},
    )
    good = check_bad_and_good(sweep, runs)
    assert json.loads((good / "metrics.json").read_text())["threads"] == 2  # cpus_per_task
    logs = sorted(p.name for p in (sweep / ".submitit").iterdir())
    assert "%j" not in logs and any(n.endswith("_0_log.err") for n in logs)


def test_unfinished_jobs_names_failed_and_unstarted_jobs(tmp_path):
    # a sweep of 2 x 2 jobs (the preset's seeds, gamma from the command line): one finished,
    # one failed, two never started
    hydra = {
        "sweeper": {"params": {"seed": "0,1"}},
        "overrides": {"task": ["experiment=smoke", "focal.gamma=0,0.5"]},
    }
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump({"hydra": hydra, "seed": 0}))
    for name, overrides, log in [
        ("done", ["seed=0", "experiment=smoke", "focal.gamma=0"], "trained"),
        ("failed", ["seed=1", "experiment=smoke", "focal.gamma=0"], "x\n[ERROR] error: bad\n"),
    ]:
        (tmp_path / name / ".hydra").mkdir(parents=True)
        (tmp_path / name / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
        (tmp_path / name / "train.log").write_text(log)
    (tmp_path / "done" / "metrics.json").write_text("{}")
    assert len(launched_jobs(tmp_path)) == 4
    assert unfinished_jobs(tmp_path) == [
        "- seed=0 focal.gamma=0.5: not started (no folder)",  # Hydra's order: the last key
        f"- seed=1 focal.gamma=0: {tmp_path / 'failed' / 'train.log'}: [ERROR] error: bad",
        "- seed=1 focal.gamma=0.5: not started (no folder)",
    ]


def test_launched_jobs_are_the_jobs_hydras_basic_sweeper_expands(tmp_path):
    # the oracle: the sweeper Hydra itself runs (private; mazerl uses the public parser)
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = {"seed": "0,1,2", "cell": "n32,n8"}
    task = ["experiment=leaderboard", "algo=grpo,maxrl", "seed=range(3,5)", "focal.gamma=0"]
    hydra = {"sweeper": {"params": params}, "overrides": {"task": task}}
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump({"hydra": hydra}, sort_keys=False))
    given = [f"{k}={v}" for k, v in params.items()] + task
    (expected,) = BasicSweeper.split_arguments(
        OverridesParser.create().parse_overrides(given), None
    )
    jobs = launched_jobs(tmp_path)
    assert jobs == expected and len(jobs) == 2 * 2 * 2  # seed given twice: the later, first place
    assert jobs[0] == ["seed=3", "cell=n32", "experiment=leaderboard", "algo=grpo", "focal.gamma=0"]


def test_resources_no_node_has_are_named_before_any_job_waits():
    from mazerl.apps.launchers import check_resources
    from mazerl.core.errors import UserError

    nodes = [{"CPU": 4.0, "memory": 8e9}, {"CPU": 2.0, "GPU": 1.0}]
    check_resources({"num_cpus": 2, "num_gpus": 1}, nodes)  # the second node has both
    check_resources({"max_calls": 1}, nodes)  # a task asks for 1 CPU
    none = "no node of the Ray cluster has that much"
    cases = [  # (what a job asks for, the nodes, the message)
        ({"num_cpus": 8}, nodes, f"num_cpus=8: {none} CPU (the largest has 4)"),
        ({"resources": {"tpu": 1}}, nodes, f"resources.tpu=1: {none} tpu (the largest has 0)"),
        ({"max_calls": 1}, [], f"num_cpus=1: {none} CPU (the largest has 0)"),
        # 4 CPUs on the first node, the GPU on the second: each exists, never together
        (
            {"num_cpus": 4, "num_gpus": 1},
            nodes,
            "hydra.launcher.ray.remote: no node of the Ray cluster has all of "
            "{'num_cpus': 4, 'num_gpus': 1} at once",
        ),
    ]
    for remote, offered, message in cases:
        with pytest.raises(UserError) as e:
            check_resources(remote, offered)
        assert message in str(e.value)
