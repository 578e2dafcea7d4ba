"""How long a user waits for the one `error:` line of each common mistake (issue 53's list: an
unknown key, a wrong type, a missing layout file, a group size of 0, an empty sweep folder, an
unknown method, estimator or policy, a typo in a preset or in a config file of your own).

    python experiments/mistake_latency.py                 # 5 runs of each, median and max
    python experiments/mistake_latency.py --busy          # with `yes > /dev/null` on one core

Each mistake runs as a whole process (`python -m mazerl.apps.APP ...`, the interpreter's start
included; `-m` puts the working folder first on the path, so the code timed is the checkout the
command runs in: to time another commit, run this file by its path from that checkout), timed
with `time.perf_counter` around `subprocess.run` (wall) and by its CPU time (user + system,
`getrusage`: what the wall time is on a free core); one JSON line per mistake,
then a table. Exit code 1 if any median is 1.5 s or more (the target: the settings are checked
before torch loads). `tests/test_settings_first.py` runs the same list in one process
(`in_process`) and checks each line and that torch was never imported.
"""

import argparse
import contextlib
import io
import json
import os
import resource
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TARGET_S = 1.5
TRAIN, SUMMARIZE = "mazerl.apps.train", "mazerl.apps.summarize"


@dataclass(frozen=True)
class Mistake:
    name: str
    app: str  # the module run as `python -m`
    args: tuple[str, ...]


def mistakes(tmp: Path) -> list[Mistake]:
    """The list, with the files some of them need written under `tmp`: a preset with a typo
    (`conf/experiment/typo.yaml`), a config file of your own with a wrong type
    (`conf/mine.yaml`) and an empty sweep folder (`empty/`)."""
    conf = tmp / "conf"
    (conf / "experiment").mkdir(parents=True, exist_ok=True)
    (conf / "experiment" / "typo.yaml").write_text("# @package _global_\ntrain: {lrr: 0.1}\n")
    (conf / "mine.yaml").write_text("defaults:\n  - config\n  - _self_\ntrain: {group_size: x}\n")
    (tmp / "empty").mkdir(exist_ok=True)
    return [
        Mistake("unknown_key", TRAIN, ("train.lrr=0.1",)),
        Mistake("wrong_type", TRAIN, ("train.group_size=abc",)),
        Mistake("group_size_0", TRAIN, ("train.group_size=0",)),
        Mistake("missing_layout", TRAIN, (f"maze.layout={tmp}/missing.txt",)),
        Mistake("unknown_algo", TRAIN, ("algo=nosuch",)),
        Mistake("unknown_estimator", TRAIN, ("algo.advantage=nosuch",)),
        Mistake("unknown_policy", TRAIN, ("policy=nosuch",)),
        Mistake("preset_typo", TRAIN, ("--config-dir", str(conf), "experiment=typo")),
        Mistake("config_file_type", TRAIN, ("--config-dir", str(conf), "--config-name", "mine")),
        Mistake("empty_sweep", SUMMARIZE, (str(tmp / "empty"),)),
    ]


def in_process(m: Mistake) -> dict:
    """Run the mistake's app in this process (as `python -m` would): its exit code, its stderr
    and whether torch is loaded afterwards."""
    argv, err = sys.argv, io.StringIO()
    sys.argv = [m.app, *m.args]
    code = 0
    try:
        with contextlib.redirect_stderr(err):
            runpy.run_module(m.app, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code
    finally:
        sys.argv = argv
    return {"name": m.name, "code": code, "stderr": err.getvalue(), "torch": "torch" in sys.modules}


def whole_process(m: Mistake, repeats: int) -> dict:
    """Seconds of `repeats` whole-process runs of the mistake (wall: median, max; CPU time of
    the process, user + system: median) and its stderr."""
    times, cpu, out = [], [], None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", m.app, *m.args], capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {
        "name": m.name,
        "median_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3),
        "cpu_s": round(statistics.median(cpu), 3),
        "code": out.returncode,
        "stderr": out.stderr.strip(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--busy", action="store_true", help="keep one core busy (`yes > /dev/null`)")
    ap.add_argument(
        "--in-process", action="store_true", help="run each once in this process (JSON lines)"
    )
    ap.add_argument("--tmp", type=Path, help="where to write the files the mistakes need")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = mistakes(args.tmp or Path(tmp))
        if args.in_process:
            for m in found:
                print(json.dumps(in_process(m)), flush=True)
            return
        busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy else None
        try:
            results = []
            for m in found:
                results.append(whole_process(m, args.repeats))
                print(json.dumps(results[-1]), flush=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    load = os.getloadavg()[0]
    print(f"\n{'mistake':20s} median    max    CPU  (load {load:.1f}, busy core: {args.busy})")
    for r in results:
        times = f"{r['median_s']:.2f} s {r['max_s']:.2f} s {r['cpu_s']:.2f} s"
        print(f"{r['name']:20s} {times}  {r['stderr'][:60]}")
    sys.exit(int(any(r["median_s"] >= TARGET_S or r["code"] != 2 for r in results)))


if __name__ == "__main__":
    main()
