#!/usr/bin/env bash
# The CUDA path run once on one GPU (issue 21): one JSON line per figure on stdout, command
# logs under $GPU_CHECK_DIR, exit status non-zero on any failure. Bounded by design to under
# 8 minutes on one H200-class GPU (every step has its own time limit):
#
#   1. gpu          the device, torch and CUDA versions
#   2. cuda_tests   tests/test_cuda.py (generate, score, update, a 2-iteration train on CUDA)
#   3. main_job     the default `mazerl-train device=cuda`: wall time, final metrics
#   4. determinism  the same short run twice on CUDA: identical metrics, or the largest difference
#   5. paper_maze   `experiment=paper_maze` for $ITERS iterations at each batch size in $BATCHES
#                   (train.num_prompts), evaluation reduced: iterations/s, rollout tokens/s,
#                   peak GPU memory (torch.cuda.max_memory_allocated)
#   6. projection   wall time of the full 20,000-iteration paper_maze run and of the 18-run
#                   Table 4 sweep, from the iteration times measured in 5
#   7. bank         every bank model's exact ID pass@1 (1,024 mazes) on the device against the
#                   value mazerl/bank/index.json recorded on a CPU: the largest relative difference
#
# Usage:   bash experiments/gpu_check.sh            (from any directory; uses .venv/bin)
# Knobs (environment): GPU_CHECK_DIR (work folder, default a new temp dir), GPU_CHECK_ITERS
# (100), GPU_CHECK_BATCHES ("64 256"), GPU_CHECK_EVAL_MAZES / GPU_CHECK_EVAL_N (64 / 64: the
# reduced paper_maze evaluation), GPU_CHECK_OVERRIDES (appended to every mazerl-train command),
# GPU_CHECK_DEVICE (cuda; `cpu` rehearses the script without a GPU, peak memory then null),
# GPU_CHECK_STEPS (the steps to run, default "gpu cuda_tests main_job determinism paper_maze
# projection bank"; projection needs paper_maze).
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${MAZERL_BIN:-$ROOT/.venv/bin}
PY=$BIN/python
DEVICE=${GPU_CHECK_DEVICE:-cuda}
WORK=${GPU_CHECK_DIR:-$(mktemp -d -t mazerl-gpu-check.XXXXXX)}
ITERS=${GPU_CHECK_ITERS:-100}
read -r -a BATCHES <<<"${GPU_CHECK_BATCHES:-64 256}"
EVAL_MAZES=${GPU_CHECK_EVAL_MAZES:-64}
EVAL_N=${GPU_CHECK_EVAL_N:-64}
read -r -a EXTRA <<<"${GPU_CHECK_OVERRIDES:-}"
CACHE=$WORK/base_models  # one base-model cache for every run of the check
STEP=setup

# On any failure: one JSON line naming the step and its log, then exit 1.
fail() {
  printf '{"figure": "%s", "ok": false, "log": "%s"}\n' "$STEP" "$WORK/$STEP.log"
  exit 1
}
trap fail ERR

# Refuse, with one line on stderr and exit 2, where there is no CUDA device to check.
require_cuda() {
  if [[ ! -x $BIN/mazerl-train ]]; then
    echo "error: $BIN/mazerl-train not found: install the project first (make demo, or set MAZERL_BIN)" >&2
    exit 2
  fi
  [[ $DEVICE == cpu ]] && return 0
  local why
  why=$("$PY" - <<'EOF'
import torch

if not torch.cuda.is_available():
    build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
    print(f"torch {torch.__version__} ({build}) sees no CUDA device")
EOF
  )
  if [[ -n $why ]]; then
    echo "error: experiments/gpu_check.sh needs a CUDA GPU, and $why; nothing was run" >&2
    exit 2
  fi
}

# mazerl-train with the check's device, cache and run folder: train RUN_NAME LIMIT_S overrides...
train() {
  local run=$1 limit=$2
  shift 2
  timeout "$limit" "$BIN/mazerl-train" "device=$DEVICE" "base.cache_dir=$CACHE" \
    "hydra.run.dir=$WORK/$run" logger.progress=lines "$@" "${EXTRA[@]}" >>"$WORK/$STEP.log" 2>&1
}

# The same, in one Python process that then writes its peak GPU memory to RUN/peak_gpu.json.
train_peak() {
  local run=$1 limit=$2
  shift 2
  timeout "$limit" "$PY" - "device=$DEVICE" "base.cache_dir=$CACHE" "hydra.run.dir=$WORK/$run" \
    logger.progress=lines "$@" "${EXTRA[@]}" >>"$WORK/$STEP.log" 2>&1 <<'EOF'
import json, runpy, sys
from pathlib import Path

import torch

runpy.run_module("mazerl.apps.train", run_name="__main__")  # = mazerl-train sys.argv[1:]
out = Path(next(a for a in sys.argv if a.startswith("hydra.run.dir=")).split("=", 1)[1])
peak = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
(out / "peak_gpu.json").write_text(json.dumps({"max_memory_allocated": peak}))
EOF
}

# Run a Python snippet (stdin) with the check's settings in its environment; it prints figures.
figure() {
  WORK=$WORK ITERS=$ITERS "$PY" - "$@" 2>>"$WORK/$STEP.log"
}

step_gpu() {
  STEP=gpu
  figure <<'EOF'
import json

import torch

cuda = torch.cuda.is_available()
props = torch.cuda.get_device_properties(0) if cuda else None
print(json.dumps({
    "figure": "gpu",
    "device": props.name if cuda else "cpu (rehearsal)",
    "memory_gib": round(props.total_memory / 2**30, 1) if cuda else None,
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
}))
EOF
}

step_cuda_tests() {
  STEP=cuda_tests
  local t0=$SECONDS
  (cd "$ROOT" && timeout 120 "$PY" -m pytest -n 0 -q -p no:cacheprovider tests/test_cuda.py) \
    >"$WORK/$STEP.log" 2>&1
  local summary
  summary=$(tail -n 1 "$WORK/$STEP.log")
  printf '{"figure": "cuda_tests", "summary": "%s", "wall_s": %d}\n' "$summary" $((SECONDS - t0))
}

step_main_job() {
  STEP=main_job
  local t0=$SECONDS
  train main 180
  figure main $((SECONDS - t0)) <<'EOF'
import json, os, sys
from pathlib import Path

run, wall = Path(os.environ["WORK"]) / sys.argv[1], int(sys.argv[2])
m = json.loads((run / "metrics.json").read_text())
f, b = m["final"], m["base"]
print(json.dumps({
    "figure": "main_job",
    "device": m["device"],
    "wall_s": wall,  # base model (SFT) + its evaluation + RL + final evaluation
    "rl_s": round(m["wall_time_s"], 1),
    **{k.removeprefix("eval/"): round(f[k], 4) for k in
       ("eval/id/pass@1", "eval/id/pass@8", "eval/id/pass@256", "eval/ood_dfs/pass@256")},
    "base_id/pass@1": round(b["eval/id/pass@1"], 4),
}))
EOF
}

step_determinism() {
  STEP=determinism
  train det_a 90 train.iterations=30
  train det_b 90 train.iterations=30
  figure det_a det_b <<'EOF'
import json, math, os, sys
from pathlib import Path

a, b = (json.loads((Path(os.environ["WORK"]) / r / "metrics.json").read_text()) for r in sys.argv[1:])
diffs = {
    f"{part}/{k}": abs(a[part][k] - b[part][k])
    for part in ("final", "train")
    for k in a[part]
    if isinstance(a[part][k], float) and not math.isnan(a[part][k]) and "_per_s" not in k
}  # every metric but the speeds
worst = max(diffs, key=diffs.get)
print(json.dumps({
    "figure": "determinism",
    "identical": all(d == 0 for d in diffs.values()),
    "metrics_compared": len(diffs),
    "metrics_differing": sum(d != 0 for d in diffs.values()),
    "max_abs_diff": diffs[worst],
    "max_abs_diff_metric": worst,
}))
EOF
}

step_paper_maze() {
  STEP=paper_maze
  local b t0
  for b in "${BATCHES[@]}"; do
    t0=$SECONDS
    # the preset, bounded: $ITERS iterations, no intermediate evaluation or checkpoint, and
    # one evaluation set of $EVAL_MAZES mazes at $EVAL_N samples (also for the base model)
    train_peak "paper_$b" 180 experiment=paper_maze "train.num_prompts=$b" \
      "train.iterations=$ITERS" train.eval_every=0 "train.checkpoint_every=$ITERS" \
      "eval.sets=[{name:id,num_mazes:$EVAL_MAZES}]" "eval.n=$EVAL_N" "eval.n_during=$EVAL_N" \
      "eval.ks=[1,$EVAL_N]" "eval.exact_ks=[1,$EVAL_N,2048]" eval.images=0
    figure "paper_$b" $((SECONDS - t0)) <<'EOF'
import json, os, statistics, sys
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

run, wall = Path(os.environ["WORK"]) / sys.argv[1], int(sys.argv[2])
m = json.loads((run / "metrics.json").read_text())
acc = EventAccumulator(str(run / "tb"), size_guidance={"scalars": 0})
acc.Reload()
warm = max(1, int(os.environ["ITERS"]) // 10)  # the first iterations include CUDA warm-up


def median(tag):
    return statistics.median(e.value for e in acc.Scalars(tag)[warm:] or acc.Scalars(tag))


iteration_s = median("time/iteration_s")
peak = json.loads((run / "peak_gpu.json").read_text())["max_memory_allocated"]
h = m["hparams"]
fig = {
    "figure": "paper_maze",
    "num_prompts": h["num_prompts"],
    "group_size": h["group_size"],
    "rollouts_per_iteration": h["num_prompts"] * h["group_size"],
    "iterations": m["iterations"],
    "iterations_per_s": round(1 / iteration_s, 3),
    "iteration_s": round(iteration_s, 4),
    "rollout_share": round(median("time/rollout_s") / iteration_s, 3),
    "rollout_tokens_per_s": round(median("train/tokens_per_s")),
    "rollouts_per_s": round(median("train/rollouts_per_s")),
    "response_length": round(median("train/response_length"), 1),
    "peak_gpu_mem_gib": None if peak is None else round(peak / 2**30, 2),
    "wall_s": wall,
    "id/pass@1": round(m["final"]["eval/id/pass@1"], 4),
}
(run / "figure.json").write_text(json.dumps(fig))
print(json.dumps(fig))
EOF
  done
}

# Projected wall times. The iteration time is modelled as t(R) = a + b R in the rollouts per
# iteration R, fitted through the two largest measured batch sizes (with one batch size:
# b = t / R); evaluation costs its rollouts at the measured generation rate (an upper
# bound: evaluation batches are larger and have no update); the base model's SFT time is
# the measured one, scaled to the preset's steps; everything at the base model's response
# lengths. The preset's own values (iterations, evaluation sizes, the sweep grid) are read
# from conf/experiment/paper_maze.yaml.
step_projection() {
  STEP=projection
  figure "${BATCHES[@]/#/paper_}" <<'EOF'
import json, math, os, sys
from pathlib import Path

from omegaconf import OmegaConf

from mazerl.core import checkpoint
from mazerl.core.config import CONF_DIR

work = Path(os.environ["WORK"])
figs = sorted(
    (json.loads((work / r / "figure.json").read_text()) for r in sys.argv[1:]),
    key=lambda f: f["rollouts_per_iteration"],
)[-2:]
(r1, t1), (r2, t2) = ((f["rollouts_per_iteration"], f["iteration_s"]) for f in (figs[0], figs[-1]))
b = max(0.0, (t2 - t1) / (r2 - r1)) if r2 > r1 else t2 / r2
a = max(0.0, t2 - b * r2)
gen_rate = figs[-1]["rollouts_per_s"]

p = OmegaConf.load(CONF_DIR / "experiment" / "paper_maze.yaml")
iters, prompts = p.train.iterations, p.train.num_prompts
mazes = sum(s.num_mazes for s in p.eval.sets)
evals_during = (iters - 1) // p.train.eval_every
eval_rollouts = mazes * (evals_during * p.eval.n_during + p.eval.n)  # one run
base_eval_rollouts = mazes * p.eval.n  # once per base model

policy = OmegaConf.to_container(OmegaConf.load(work / sys.argv[1] / ".hydra/config.yaml").policy)
ckpt = next(  # the paper runs' base model
    c for c in (checkpoint.load(f) for f in (work / "base_models").glob("*/base.pt"))
    if c["policy_config"] == policy
)
sft_s = ckpt["sft"]["seconds"] * p.base.steps / ckpt["sft"]["steps"]
shared_s = sft_s + base_eval_rollouts / gen_rate


def run_s(group_size):
    return iters * (a + b * prompts * group_size) + eval_rollouts / gen_rate


grid = p.hydra.sweeper.params
sizes = [int(n) for n in str(grid["train.group_size"]).split(",")]
gammas = str(grid["focal.gamma"]).split(",")
sweep_s = shared_s + len(gammas) * sum(run_s(n) for n in sizes)
print(json.dumps({
    "figure": "projection",
    "full_run_h": round((shared_s + run_s(p.train.group_size)) / 3600, 2),
    "table4_sweep_h": round(sweep_s / 3600, 1),
    "table4_sweep_runs": len(sizes) * len(gammas),
    "iteration_s_model": {"a_s": round(a, 4), "b_s_per_rollout": float(f"{b:.3g}")},
    "fitted_on_rollouts_per_iteration": [r1, r2],
    "eval_rollouts_per_run": eval_rollouts,
    "sft_s": round(sft_s, 1),
    "sequential": True,  # one run after another on this one GPU
}))
EOF
}

step_bank() {
  STEP=bank
  DEVICE=$DEVICE figure <<'EOF'
import json, os

import torch
from hydra import compose, initialize_config_dir

from mazerl.apps.schema import register_configs
from mazerl.core.config import CONF_DIR
from mazerl.eval.evaluate import build_sets, exact_route_masses
from mazerl.train.bank import BANK_DIR, bank_index
from mazerl.train.sft import load_base

device = torch.device(os.environ["DEVICE"])
register_configs()
with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
    cfg = compose(config_name="config", overrides=["experiment=maze_long"])
(ids,) = [s for s in build_sets(cfg.maze, cfg.eval, lambda _: None) if s.name == "id"]
policy_cfg = json.loads(json.dumps(dict(cfg.policy)))
rel = {}
for e in bank_index().values():
    policy, _ = load_base(BANK_DIR / e["file"], policy_cfg, device)
    p1 = float(exact_route_masses(policy, ids.mazes, 1.0, device)[0][:, 0].mean())
    rel[e["name"]] = abs(p1 - e["exact"]["id"]["exact_pass@1"]) / e["exact"]["id"]["exact_pass@1"]
worst = max(rel, key=rel.get)
print(json.dumps({
    "figure": "bank",
    "device": str(device),
    "models": len(rel),
    "max_rel_diff_exact_pass@1": float(f"{rel[worst]:.3g}"),
    "worst_model": worst,
}))
EOF
}

main() {
  require_cuda
  mkdir -p "$WORK"
  echo "gpu_check: logs and runs in $WORK" >&2
  local step
  for step in ${GPU_CHECK_STEPS:-gpu cuda_tests main_job determinism paper_maze projection bank}; do
    "step_$step"
  done
}

main "$@"
