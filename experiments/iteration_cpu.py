"""CPU milliseconds per training iteration of a leaderboard cell, one thread: the trainer's own
`TrainStep.collect` and `TrainStep.learn` from bank model 0 (`experiment=leaderboard
cell=<cell> seed=0`), iterations 10 ... 10 + ITERS - 1 after 10 warm-up iterations, training
mazes read from the cache as in a run. Process CPU time, not wall time: on a shared machine
another process's load moves it far less, so two checkouts compare by running this script from
each, alternately (issue 59's A/B against 171bbd3, docs/guide/speed.md):

    cd CHECKOUT && OMP_NUM_THREADS=1 PYTHONPATH=$PWD python experiments/iteration_cpu.py n32 30

Prints one line: the cell, collect / learn / total ms per iteration, and iteration 2's summed
sampling log-probs and loss (equal across checkouts up to float rounding).
"""

import sys
import tempfile
import time
from pathlib import Path

import torch

from mazerl.apps.bench import composed
from mazerl.envs.spec import MazeTask
from mazerl.eval.evaluate import excluded_keys
from mazerl.eval.runner import cached_sets, held_out_keys
from mazerl.train.collect import TrainingMazes
from mazerl.train.sft import obtain_base
from mazerl.train.step import Learner, TrainStep

WARMUP = 10


def main(cell: str, iterations: int) -> None:
    torch.set_num_threads(1)
    cfg = composed("experiment=leaderboard", f"cell={cell}", "seed=0")
    task, cpu, quiet = MazeTask.of(cfg.maze), torch.device("cpu"), lambda line: None
    spec = task.spec
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        sets = cached_sets(spec, cfg.eval, cache / "eval_sets", quiet)
        held = held_out_keys(spec, cfg.eval, cfg.base.held_out, cache / "eval_sets", quiet)
        base, _, _ = obtain_base(task, held, cpu, quiet, policy=cfg.policy, base=cfg.base)
        mazes = TrainingMazes(
            task, excluded_keys(sets), cfg.seed, quiet, cache_dir=cache / "train_mazes"
        )
        learner = Learner.start(cfg.train, base, cfg.train.iterations)
        step = TrainStep.of(cfg, task, cpu)
        collect_s = learn_s = 0.0
        for it in range(WARMUP + iterations):
            mazes.prepare(cfg.train.num_prompts, it)
            t0 = time.process_time()
            batch = step.collect(learner, mazes, it)
            t1 = time.process_time()
            stats = step.learn(learner, batch, it)
            t2 = time.process_time()
            if it == 2:
                logp, loss = float(batch.rollouts.logp.sum()), stats.loss_metrics["loss"]
            if it >= WARMUP:
                collect_s, learn_s = collect_s + t1 - t0, learn_s + t2 - t1
    per = 1e3 / iterations
    print(
        f"{cell} collect {collect_s * per:.1f} ms learn {learn_s * per:.1f} ms total "
        f"{(collect_s + learn_s) * per:.1f} ms | iteration 2: logp {logp:.6f} loss {loss:.8f}"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
