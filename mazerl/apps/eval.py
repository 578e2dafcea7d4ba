"""`mazerl-eval`: evaluate any checkpoint (a training checkpoint or a base model's base.pt).

    mazerl-eval checkpoint=outputs/runs/DATE/TIME/checkpoints/ckpt_0000300.pt
    mazerl-eval checkpoint=PATH eval.n=1024 eval.seed=7          # more samples, other mazes
    mazerl-eval checkpoint=PATH 'eval.sets=[{name: big, size_delta: 4, num_mazes: 256}]'

The maze and policy configs come from the checkpoint (so the `id` set is the training
distribution); the `eval` section comes from this command, so `eval.n`, `eval.sets` and
`eval.seed` can be overridden. Writes `eval.json` and TensorBoard scalars (with deltas against
the run's base model) into this command's Hydra run dir.
"""

from pathlib import Path

from omegaconf import DictConfig

from mazerl.apps.launch import launch
from mazerl.core.cli import hydra_task
from mazerl.eval.metric_names import Metric


@hydra_task
def evaluate_checkpoint(cfg: DictConfig) -> dict:
    """Evaluate `cfg.checkpoint` into this command's run dir (removed again on a user error)."""
    from hydra.core.hydra_config import HydraConfig

    from mazerl.apps.callbacks import check_job

    check_job(cfg, "evaluate")
    return _evaluate(cfg, Path(HydraConfig.get().runtime.output_dir))


def _evaluate(cfg: DictConfig, out: Path) -> dict:
    """The evaluation itself (the evaluation code imported here: `--help` does not load it)."""
    import time

    from omegaconf import OmegaConf
    from torch.utils.tensorboard import SummaryWriter

    from mazerl.apps.schema import Config, typed, validate
    from mazerl.core import checkpoint
    from mazerl.core.device import select_device, setup
    from mazerl.core.errors import CheckpointError, ConfigError
    from mazerl.core.files import write_json_atomic
    from mazerl.envs.spec import MazeTask
    from mazerl.eval.evaluate import build_sets
    from mazerl.eval.runner import BaseEvaluation, evaluate_all, log_eval, saved
    from mazerl.train.sft import load_base

    if not cfg.checkpoint:
        raise ConfigError("checkpoint=PATH is required (a training checkpoint or a base.pt)")
    state = checkpoint.load(cfg.checkpoint)
    if "policy_state" not in state or "config" not in state:
        raise CheckpointError(f"checkpoint {cfg.checkpoint} is not a mazerl checkpoint")
    trained = OmegaConf.create(state["config"])
    ours = {k: cfg[k] for k in ("eval", "seed", "device", "threads")}
    with_run = OmegaConf.merge(
        OmegaConf.structured(Config), {"maze": trained.maze, "policy": trained.policy}, ours
    )
    validate(with_run)  # this command's evaluation sets on the checkpoint's mazes
    run = typed(with_run)
    task = MazeTask.of(run.maze)
    device = select_device(cfg.device)
    setup(cfg.seed, cfg.threads, device)
    policy, _ = load_base(cfg.checkpoint, state["policy_config"], device)
    sets = build_sets(task.spec, run.eval)
    t0 = time.time()
    results = evaluate_all(
        policy, sets, device, cfg.eval.n, 0, images=cfg.eval.images,
        allow_revisits=task.allow_revisits, eval=run.eval,
    )  # fmt: skip
    base = {}
    if (weights := base_weights(state, print)) is not None:
        base_policy, _ = load_base(weights[0], state["policy_config"], device)
        base = BaseEvaluation.load_or_run(
            Path(state["base"]), base_policy, sets, device, print,
            task=task, eval=run.eval, weights=weights[1],
        ).results  # fmt: skip
    writer = SummaryWriter(str(out / "tb"))
    flat = log_eval(writer, results, base, state.get("iteration", 0), cfg.eval.images)
    writer.close()
    write_json_atomic(
        {
            "checkpoint": str(Path(cfg.checkpoint).resolve()),
            "scalars": flat,
            "sets": saved(results),
        },
        out / "eval.json",
    )
    for name in results:
        sampled = Metric("pass", name)  # its sampled pass@k, every k written
        shown = [m for k in flat if (m := Metric.parse(k)) and m == sampled.at(m.k)]
        print(f"{name}: " + "  ".join(f"{m.short} {flat[m.name]:.3f}" for m in shown))
    print(f"evaluated in {time.time() - t0:.0f}s -> {out / 'eval.json'}")
    return flat


def base_weights(state: dict, warn) -> tuple[Path, str] | None:
    """The weights file of a training checkpoint's base model and its sha256: the bank file
    its `base_model` names (by cache key), the `base.path` file it names, else `base.pt` in its
    base folder (trained and cached here; checkpoints from before `base_model`). None, with a
    line to `warn` saying why there is no comparison with the base model, where the file is
    gone or is not the one the run started from (another sha256)."""
    from mazerl.train.bank import bank_file, sha256

    if "base" not in state:  # a base model's own base.pt
        return None
    origin = state.get("base_model") or {}
    if origin.get("source") == "bank":
        if (banked := bank_file(origin["key"], "auto")) is None:
            warn(f"no comparison with the base model: this install's bank has no model with "
                 f"cache key {origin['key']}")  # fmt: skip
            return None
        path = banked[0]
    else:
        path = Path(origin.get("path") or Path(state["base"]) / "base.pt")
    if not path.is_file():
        warn(f"no comparison with the base model: its weights {path} are gone")
        return None
    digest = sha256(path)
    if origin.get("sha256") not in (None, digest):
        warn(f"no comparison with the base model: {path} is not the file the run started from "
             f"(sha256 {digest[:12]}, the run's {origin['sha256'][:12]})")  # fmt: skip
        return None
    return path, digest


def main() -> None:
    launch(evaluate_checkpoint, "evaluate")


if __name__ == "__main__":
    main()
