"""`mazerl-llm`: mazes, verifier and objectives for language models (the extra `mazerl[llm]`).

    mazerl-llm export train.jsonl --generator prim --size 5 --seed 0 --count 1000
    mazerl-llm export eval.parquet --eval-sets experiment=maze_group_sweep
    mazerl-llm train --data train.jsonl --model tiny --out outputs/llm/run --gamma 0.5
    mazerl-llm eval --model outputs/llm/run/model --data eval.parquet --out outputs/llm/cmp/trained

`export` writes a dataset of prompts and reference answers (`mazerl.llm.export`) from generated
mazes (maze i from seed + i, as `mazerl-maze`), a layout collection, or the evaluation sets of
a mazerl config (Hydra overrides; set `id` -> split `id`, every other set -> `ood`). `train`
runs TRL's GRPO with mazerl's advantage and focal weight (`FocalGRPOTrainer`), logging to
TensorBoard in `--out` and saving the model to `--out/model`; `--model tiny` starts from a
randomly initialised Qwen2 of mazerl's transformer shape with the maze-vocabulary tokenizer
(`maxrl` data only), saved to `--out/base` before training. `eval` writes exact and sampled
pass@k of a causal LM on every set of a dataset as a mazerl run folder (`metrics.json`,
`eval/step_0000000.json`): `mazerl-summarize` over the folder of several such runs tabulates
them and pairs them maze by maze (`model=NAME`, reference `base`).
"""

import argparse
import importlib.util
import json
from collections import defaultdict
from pathlib import Path

from mazerl.core.cli import ArgumentParser, exit_on_user_error
from mazerl.core.errors import UserError

EXTRA = ("transformers", "trl", "datasets")


def require_extra() -> None:
    missing = [m for m in EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(
            f"mazerl-llm needs the extra: pip install 'mazerl[llm]' (missing {', '.join(missing)})"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="mazerl-llm", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    export = sub.add_parser("export", help="mazes -> a JSONL or Parquet dataset")
    export.add_argument("out", type=Path, help="output file: .jsonl, .json or .parquet")
    export.add_argument("--format", default="maxrl", choices=("maxrl", "plain"))
    export.add_argument("--split", default="train", help="split of generated or layout mazes")
    export.add_argument("--allow-revisits", action="store_true")
    export.add_argument("--chat", action="store_true", help="prompts as chat conversations")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--generator", help="generated mazes (with --size, --seed, --count)")
    source.add_argument("--layout", help="a layout collection: shipped name, file, dir or glob")
    source.add_argument(
        "--eval-sets",
        nargs="*",
        metavar="OVERRIDE",
        help="the evaluation sets of mazerl's config with these Hydra overrides",
    )
    export.add_argument("--size", type=int, default=5)
    export.add_argument("--start-goal", default="corners")
    export.add_argument("--seed", type=int, default=0, help="maze i uses seed + i")
    export.add_argument("--count", type=int, default=1000)

    train = sub.add_parser("train", help="TRL GRPO with mazerl's focal advantage")
    train.add_argument("--data", type=Path, required=True, help="an exported dataset")
    train.add_argument("--out", type=Path, required=True, help="a new folder")
    train.add_argument("--model", default="tiny", help="a causal LM (path or hub id) or tiny")
    train.add_argument("--algo", default="grpo", help="a registered mazerl advantage estimator")
    train.add_argument("--gamma", type=float, default=0.5, help="focal gamma (0: off)")
    train.add_argument("--group", type=int, default=8, help="completions per prompt (N)")
    train.add_argument("--prompts", type=int, default=4, help="prompts per step")
    train.add_argument("--steps", type=int, default=100)
    train.add_argument("--lr", type=float, default=1e-5)
    train.add_argument("--max-completion-length", type=int, default=64)
    train.add_argument("--seed", type=int, default=0)

    ev = sub.add_parser("eval", help="exact and sampled pass@k of a causal LM")
    ev.add_argument("--model", required=True, help="a causal LM: path or hub id")
    ev.add_argument("--data", type=Path, required=True, help="an exported dataset (its sets)")
    ev.add_argument("--out", type=Path, required=True, help="a new run folder")
    ev.add_argument("--name", help="the run's model=NAME in summaries (default: folder name)")
    ev.add_argument("--n", type=int, default=64, help="samples per maze")
    ev.add_argument("--sampled-mazes", type=int, help="sample the first N mazes of each set")
    ev.add_argument("--temperature", type=float, default=1.0)
    ev.add_argument("--seed", type=int, default=0)
    return parser


def load_rows(path: Path, columns: tuple[str, ...]) -> list[dict]:
    """The rows of an exported dataset; a `UserError` naming the file for a missing file, an
    unknown suffix or a missing column."""
    from datasets import load_dataset

    from mazerl.llm.export import SUFFIXES

    if not path.is_file():
        raise UserError(f"--data {path}: no such file")
    if path.suffix not in SUFFIXES:
        raise UserError(f"--data {path}: unknown format {path.suffix!r}; use {', '.join(SUFFIXES)}")
    kind = "parquet" if path.suffix == ".parquet" else "json"
    try:
        dataset = load_dataset(kind, data_files=str(path), split="train")
    except Exception as e:  # datasets raises many kinds on a damaged file
        raise UserError(f"--data {path}: cannot read it ({e.__class__.__name__})") from None
    missing = [c for c in columns if c not in dataset.column_names]
    if missing:
        raise UserError(f"--data {path}: no column {', '.join(missing)}; use mazerl-llm export")
    return dataset.to_list()


def export(args) -> None:
    from mazerl.envs.spec import MazeSpec
    from mazerl.llm.export import check_output, records, write

    check_output(args.out)
    if args.generator:
        if args.count < 1:
            raise UserError(f"--count must be >= 1, got {args.count}")
        import numpy as np

        spec = MazeSpec(size=args.size, generator=args.generator, start_goal=args.start_goal)
        mazes = [spec.sample(np.random.default_rng(args.seed + i)) for i in range(args.count)]
        sets = {f"{args.generator}{args.size}": mazes}
    elif args.layout:
        sets = {Path(args.layout).stem: list(MazeSpec(layout=args.layout).collection)}
    else:
        sets = {s.name: s.mazes for s in config_sets(args.eval_sets)}
    rows = []
    for name, mazes in sets.items():
        split = args.split if args.eval_sets is None else ("id" if name == "id" else "ood")
        rows += records(mazes, args.format, split, name, args.allow_revisits, args.chat)
    write(rows, args.out)
    print(f"wrote {args.out}: {len(rows)} mazes ({', '.join(sets)}), format {args.format}")


def config_sets(overrides: list[str]):
    """The evaluation sets of mazerl's training config composed with `overrides`."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from mazerl.apps.schema import register_configs, validate
    from mazerl.core.config import CONF_DIR, register_resolvers
    from mazerl.eval.evaluate import build_sets

    register_configs()
    register_resolvers()
    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as e:
        raise UserError(f"--eval-sets {' '.join(overrides)}: {str(e).splitlines()[0]}") from None
    validate(cfg)
    return build_sets(cfg.maze, cfg.eval)


def new_folder(path: Path, flag: str) -> None:
    if path.exists() and any(path.iterdir()):
        raise UserError(f"{flag} {path} already exists and is not empty; choose a new folder")


def load_model(name: str, fmt: str | None = None):
    """`(model, tokenizer)`: `tiny` (maxrl data only) or a pretrained causal LM."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast

    from mazerl.llm.models import maze_tokenizer, tiny_model

    if name == "tiny":
        if fmt != "maxrl":
            raise UserError("--model tiny reads the maxrl format only (its vocabulary is mazerl's)")
        return tiny_model(), maze_tokenizer()
    # transformers 5's AutoTokenizer takes the model type's class (Qwen2Tokenizer) over a saved
    # generic one, which loses the maze tokenizer's WordLevel model: load that one as saved
    saved = Path(name) / "tokenizer_config.json"
    generic = saved.is_file() and json.loads(saved.read_text()).get("tokenizer_class") in (
        "TokenizersBackend",
        "PreTrainedTokenizerFast",
    )
    tokenizer_class = PreTrainedTokenizerFast if generic else AutoTokenizer
    try:
        return AutoModelForCausalLM.from_pretrained(name), tokenizer_class.from_pretrained(name)
    except (OSError, ValueError) as e:
        raise UserError(f"--model {name}: cannot load it ({str(e).splitlines()[0]})") from None


def one_format(rows: list[dict], path: Path) -> str:
    formats = {r["maze_format"] for r in rows}
    if len(formats) != 1:
        raise UserError(f"--data {path}: mixes formats {sorted(formats)}; export one per file")
    return formats.pop()


def train(args) -> None:
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from mazerl.llm.objective import focal_advantages
    from mazerl.llm.trainer import FocalGRPOTrainer
    from mazerl.llm.verifier import maze_reward

    for flag, value in (
        ("--group", args.group),
        ("--prompts", args.prompts),
        ("--steps", args.steps),
    ):
        if value < 1 or (flag == "--group" and value < 2):
            raise UserError(f"{flag} must be >= {2 if flag == '--group' else 1}, got {value}")
    if not (args.gamma >= 0 and args.lr > 0):
        raise UserError(f"--gamma must be >= 0 and --lr > 0, got {args.gamma}, {args.lr}")
    focal_advantages(torch.zeros(1, 2), args.algo, args.gamma)  # an unknown --algo: its names
    new_folder(args.out, "--out")
    rows = load_rows(args.data, ("prompt", "maze", "maze_format"))
    model, tokenizer = load_model(args.model, one_format(rows, args.data))
    config = GRPOConfig(
        output_dir=str(args.out),
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=args.max_completion_length,
        max_steps=args.steps,
        learning_rate=args.lr,
        report_to=["tensorboard"],
        logging_steps=1,
        save_strategy="no",
        seed=args.seed,
        use_cpu=not torch.cuda.is_available(),
    )
    trainer = FocalGRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=maze_reward,
        args=config,
        train_dataset=Dataset.from_list(rows),
        algo=args.algo,
        focal_gamma=args.gamma,
    )
    if args.model == "tiny":  # the starting point exists nowhere else: keep it for comparison
        model.save_pretrained(str(args.out / "base"))
        tokenizer.save_pretrained(str(args.out / "base"))
    trainer.train()
    trainer.save_model(str(args.out / "model"))
    tokenizer.save_pretrained(str(args.out / "model"))
    print(f"trained {args.steps} steps -> {args.out / 'model'} (TensorBoard: {args.out})")


def evaluate(args) -> None:
    import torch

    from mazerl.eval.evaluate import EvalSet
    from mazerl.llm.exact import evaluate_set, prompt_text, write_run
    from mazerl.llm.verifier import maze_of

    if args.n < 1 or not args.temperature > 0:
        raise UserError(f"--n must be >= 1 and --temperature > 0, got {args.n}, {args.temperature}")
    new_folder(args.out, "--out")
    rows = load_rows(args.data, ("prompt", "maze", "maze_format", "set", "index"))
    fmt = one_format(rows, args.data)
    allow = {bool((r.get("extra_info") or {}).get("allow_revisits", False)) for r in rows}
    model, tokenizer = load_model(args.model)
    by_set, prompts = defaultdict(list), defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["set"], r["index"])):
        by_set[r["set"]].append(maze_of(r["maze"]))
        prompts[r["set"]].append(prompt_text(tokenizer, r["prompt"]))
    model.eval()
    torch.manual_seed(args.seed)
    results = {
        name: evaluate_set(
            model,
            tokenizer,
            EvalSet(name, mazes),
            prompts[name],
            fmt=fmt,
            n=args.n,
            temperature=args.temperature,
            allow_revisits=True in allow,
            sampled_mazes=args.sampled_mazes,
        )
        for name, mazes in by_set.items()
    }
    name = args.name or args.out.name
    about = {"model": args.model, "data": str(args.data), "format": fmt, "n": args.n}
    write_run(args.out, results, about, [f"model={name}", f"seed={args.seed}"])
    for set_name, m in results.items():
        keys = [k for k in m if "pass@" in k and not k.endswith("_se")]
        print(f"{set_name}: " + "  ".join(f"{k} {m[k]:.3f}" for k in keys))
    print(f"-> {args.out / 'metrics.json'}")


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    require_extra()
    {"export": export, "train": train, "eval": evaluate}[args.command](args)


if __name__ == "__main__":
    main()
