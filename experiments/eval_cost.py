"""What an evaluation costs: exact pass@k on 1,024 mazes per set against sampled pass@k on 64.

Times, in one process with one torch thread, on the default config's base model (trained
and cached on first use, about a minute): building the study presets' evaluation sets (1,024
ID mazes, 512 per OOD set); sampling n = 256 (final evaluation) and n = 32 (intermediate)
responses on the first 64 mazes of each set; the exact (teacher-forced) success probability
of every maze of the 1,024 / 512 / 512 sets, and the base model's exact pass@k with its
standard error over those mazes. Prints one JSON line per figure, then the ratios.

    python experiments/eval_cost.py                 # about 2 minutes with a cached base model
"""

import argparse
import json
import statistics
import time

import torch
from hydra import compose, initialize_config_dir

from mazerl.apps.schema import register_configs, typed
from mazerl.core.cache import cache_root
from mazerl.core.config import CONF_DIR
from mazerl.core.device import setup
from mazerl.core.streams import STREAM_EVAL_SAMPLING, torch_generator
from mazerl.envs.spec import MazeSpec, MazeTask
from mazerl.eval.evaluate import build_sets, exact_route_masses, sampled_counts
from mazerl.eval.passk import exact_pass_at_k, standard_error
from mazerl.eval.runner import held_out_keys
from mazerl.train.sft import obtain_base


def timed(fn, repeats: int) -> float:
    """Median wall time of `repeats` calls, in seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sampled", type=int, default=64, help="mazes per set that are sampled")
    args = ap.parse_args()
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = typed(compose(config_name="config", overrides=["threads=1"]))
        big = typed(compose(config_name="config", overrides=["experiment=maze_group_sweep"]))
    device = torch.device("cpu")
    setup(0, 1, device)
    task = MazeTask.of(cfg.maze)
    held_out = held_out_keys(task.spec, cfg.eval, cfg.base.held_out, cache_root(None) / "eval_sets")
    policy, _, _ = obtain_base(task, held_out, device, print, policy=cfg.policy, base=cfg.base)
    policy.eval()
    t0 = time.perf_counter()
    big_sets = build_sets(MazeSpec.of(big.maze), big.eval)
    build_s = time.perf_counter() - t0
    sizes = {s.name: len(s.mazes) for s in big_sets}
    print(json.dumps({"figure": "build_sets", "mazes": sizes, "seconds": round(build_s, 3)}))
    e = cfg.eval
    out = {}
    for n in (cfg.eval.n, cfg.eval.n_during):

        def sample(n=n):
            for i, s in enumerate(big_sets):
                sampled_counts(
                    policy,
                    s.mazes[: args.sampled],
                    n=n,
                    temperature=e.temperature,
                    allow_revisits=False,
                    generator=torch_generator(device, e.seed, STREAM_EVAL_SAMPLING, 0, i),
                    batch_rollouts=e.batch_rollouts,
                    device=device,
                )

        out[f"sampled_n{n}"] = timed(sample, args.repeats)
        print(json.dumps({"figure": f"sampled pass@k, {args.sampled} mazes/set, n={n}",
                          "seconds": round(out[f"sampled_n{n}"], 3)}))  # fmt: skip

    def exact():
        for s in big_sets:
            exact_route_masses(policy, s.mazes, e.temperature, device)

    out["exact"] = timed(exact, args.repeats)
    for s in big_sets:  # what that buys: the standard error over mazes
        p = exact_route_masses(policy, s.mazes, e.temperature, device)[0].sum(1)
        per = {k: exact_pass_at_k(p, k) for k in (1, 256, 2048)}
        stats = {f"exact_pass@{k}": [round(v.mean(), 3), round(standard_error(v), 4)]
                 for k, v in per.items()}  # fmt: skip
        print(json.dumps({"figure": f"base model on {s.name} (mean, se)", **stats}))
    print(json.dumps({"figure": f"exact pass@k, {sizes} mazes", "seconds": round(out["exact"], 3)}))
    for n in (cfg.eval.n, cfg.eval.n_during):
        ratio = out["exact"] / out[f"sampled_n{n}"]
        print(f"exact on {sum(sizes.values())} mazes / sampled on {args.sampled} x 3 at n={n}: "
              f"{ratio:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
