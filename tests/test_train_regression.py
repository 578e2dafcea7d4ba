"""The default job's results do not move under a refactoring: a regression pin.

`fixtures/default_job_78fffd6.json` is the `metrics.json` of a three-iteration default job run
by the code at commit 78fffd6 (before the training step was split from the loop), with the
command and machine recorded in its `_recorded` header. The numbers were produced by that
older code, not by the code under test: a change that alters what the default job computes
(sampling streams, advantages, the update, evaluation) fails here, and a deliberate change of
results replaces the fixture (re-run the recorded command and say why in the commit).

Float results depend on the CPU's vector instructions and the torch version, so the pin is
checked where both match the recording; elsewhere the test is skipped, saying why.
"""

import json

import pytest
import torch
from conftest import ROOT, metrics, run_app

from mazerl.core.device import cpu_info

PIN = ROOT / "tests" / "fixtures" / "default_job_78fffd6.json"
CLOCK = ("rollouts_per_s", "tokens_per_s")  # throughputs: not results


def test_default_job_gives_the_metrics_recorded_before_the_refactoring(tmp_path):
    pin = json.loads(PIN.read_text())
    recorded = pin["_recorded"]
    here = {**cpu_info(), "torch": torch.__version__}
    if (here["cpu"], here["cpu_capability"]) != (recorded["cpu"], recorded["cpu_capability"]):
        pytest.skip(f"pinned on {recorded['cpu']} ({recorded['cpu_capability']}), this is {here}")
    if f"torch {torch.__version__}" not in recorded["environment"]:
        pytest.skip(f"pinned under {recorded['environment']}, this is torch {torch.__version__}")
    command = recorded["command"].split()[1:]
    assert command[-2:] == ["hydra.run.dir=RUN", "base.cache_dir=CACHE"], command
    run = tmp_path / "run"
    out = run_app(
        "mazerl.apps.train",
        *command[:-2],
        f"hydra.run.dir={run}",
        f"base.cache_dir={tmp_path / 'cache'}",
        cwd=tmp_path,
        env={"OMP_NUM_THREADS": "1"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    got = metrics(run)
    assert got["iterations"] == pin["iterations"] == 3 and got["base_model"] == pin["base_model"]
    for section in ("train", "base", "final"):
        # every pinned value, unchanged; a metric registered since may add its own keys
        assert set(pin[section]) <= set(got[section]) - set(CLOCK), section
        now = {k: got[section][k] for k in pin[section]}
        assert now == pytest.approx(pin[section], rel=1e-6, abs=1e-6), section
