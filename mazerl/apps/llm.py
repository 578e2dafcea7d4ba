"""`mazerl-llm`: mazes, verifier and objectives for language models (the extra `mazerl[llm]`).

    mazerl-llm export train.jsonl --generator prim --size 3 --seed 0 --count 2000
    mazerl-llm export eval.parquet --eval-sets maze.size=3
    mazerl-llm sft --data train.jsonl --model tiny --out outputs/llm/sft --steps 300
    mazerl-llm train --data train.jsonl --model outputs/llm/sft/model --out outputs/llm/grpo
    mazerl-llm eval --model outputs/llm/grpo/model --data eval.parquet --out outputs/llm/cmp/grpo
    mazerl-llm verl-args --algo grpo --gamma 0.5

`export` writes a dataset of prompts and reference answers (`mazerl.llm.export`, laid out as
MaxRL's maze data) from generated mazes (maze i from seed + i, as `mazerl-maze`), a layout
collection, or the evaluation sets of a mazerl config (Hydra overrides; set `id` -> split `id`,
every other set -> `ood`). `sft` trains a causal LM on the reference answers
(`mazerl.llm.sft`): a random model never reaches the goal, so GRPO needs that warm-up first.
`train` runs TRL's GRPO with mazerl's advantage and focal weight (`FocalGRPOTrainer`). Both log
to TensorBoard in `--out` and save the model to `--out/model`; `--model tiny` starts from a
randomly initialised causal LM of mazerl's transformer shape with the maze-vocabulary tokenizer
(`maxrl` data only), saved to `--out/base` first. `eval` writes exact and sampled pass@k of a
causal LM on every set of a dataset as a mazerl run folder (`metrics.json`,
`eval/step_0000000.json`): `mazerl-summarize` over the folder of several such runs tabulates
them and pairs them maze by maze (`model=NAME`, reference `base`). `verl-args` prints the
Hydra overrides that run mazerl's estimator and reward in `python -m verl.trainer.main_ppo`;
verl reads `export --chat` Parquet. `--algo NAME` takes its hyperparameters from the method
file `conf/algo/NAME.yaml`, as `mazerl-train algo=NAME` does, each `--algo-arg` replacing
one; `export --rule maxrl` marks the rows for MaxRL's `judge_maze` rule. `sft`, `train` and
`eval` run torch on `--threads` threads (default 1) and write every setting they ran with,
the threads and the CPU kind to `--out/metrics.json`: their figures repeat on the same CPU
kind and threads.
"""

import argparse
import functools
import importlib.util
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from mazerl.core.cli import ArgumentParser, exit_on_user_error
from mazerl.core.errors import UserError
from mazerl.core.plugins import load_plugins

EXTRA = ("transformers", "trl", "datasets")
ALGO_ARG = (
    "a hyperparameter of the estimator over its method file conf/algo/NAME.yaml (passk, pkpo: "
    "k=4), e.g. k=8 (repeatable)"
)
ALGO_HELP = "a registered mazerl advantage estimator or reward transform (pkpo)"
THREADS = "torch threads (recorded; figures repeat on the same CPU kind and threads)"
# TRL's sampling settings of a training run (GRPOConfig's names), recorded in its metrics.json
SAMPLING = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "num_generations",
            "max_completion_length")  # fmt: skip
HUB_TIMEOUT = 10  # seconds: the one request that checks a --model Hub id


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
    export.add_argument(
        "--chat",
        action="store_true",
        help="prompts as chat conversations (verl's RLHFDataset needs them)",
    )
    export.add_argument(
        "--rule",
        default="mazerl",
        help="the verifier's rule for the rows: mazerl's, or maxrl (MaxRL's judge_maze)",
    )
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

    sft = sub.add_parser("sft", help="supervised warm-up on the reference answers")
    sft.add_argument("--data", type=Path, required=True, help="an exported dataset")
    sft.add_argument("--out", type=Path, required=True, help="a new folder")
    sft.add_argument("--model", default="tiny", help="a causal LM (folder or hub id) or tiny")
    sft.add_argument("--steps", type=int, default=300)
    sft.add_argument("--batch", type=int, default=32, help="answers per step")
    sft.add_argument("--lr", type=float, default=5e-4)
    sft.add_argument("--seed", type=int, default=0)
    sft.add_argument("--threads", type=int, default=1, help=THREADS)

    train = sub.add_parser("train", help="TRL GRPO with mazerl's focal advantage")
    train.add_argument("--data", type=Path, required=True, help="an exported dataset")
    train.add_argument("--out", type=Path, required=True, help="a new folder")
    train.add_argument("--model", default="tiny", help="a causal LM (folder or hub id) or tiny")
    train.add_argument("--algo", default="grpo", help=ALGO_HELP)
    train.add_argument("--gamma", type=float, default=0.5, help="focal gamma (0: off)")
    train.add_argument("--algo-arg", action="append", metavar="KEY=VALUE", help=ALGO_ARG)
    train.add_argument("--group", type=int, default=8, help="completions per prompt (N)")
    train.add_argument("--prompts", type=int, default=4, help="prompts per step")
    train.add_argument("--steps", type=int, default=100)
    train.add_argument("--lr", type=float, default=1e-5)
    train.add_argument("--max-completion-length", type=int, default=64)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--threads", type=int, default=1, help=THREADS)

    ev = sub.add_parser("eval", help="exact and sampled pass@k of a causal LM")
    ev.add_argument("--model", required=True, help="a causal LM: folder or hub id")
    ev.add_argument("--data", type=Path, required=True, help="an exported dataset (its sets)")
    ev.add_argument("--out", type=Path, required=True, help="a new run folder")
    ev.add_argument("--name", help="the run's model=NAME in summaries (default: folder name)")
    ev.add_argument("--n", type=int, default=16, help="samples per maze")
    ev.add_argument(
        "--sampled-mazes",
        type=int,
        default=32,
        help="sample the first N mazes of each set (0: all); exact values cover every maze",
    )
    ev.add_argument("--temperature", type=float, default=1.0)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--threads", type=int, default=1, help=THREADS)

    verl = sub.add_parser("verl-args", help="Hydra overrides for verl.trainer.main_ppo")
    verl.add_argument("--algo", default="grpo", help=ALGO_HELP)
    verl.add_argument("--gamma", type=float, default=0.5, help="focal gamma (0: off)")
    verl.add_argument("--algo-arg", action="append", metavar="KEY=VALUE", help=ALGO_ARG)
    return parser


def algo_args(items: list[str] | None) -> dict:
    """`--algo-arg KEY=VALUE` items -> the estimator's hyperparameters (each value read as
    JSON, so numbers and true/false are typed; else kept as text)."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not (sep and key):
            raise UserError(f"--algo-arg {item}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


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
        rows += records(mazes, args.format, split, name, args.allow_revisits, args.chat, args.rule)
    write(rows, args.out)
    print(
        f"wrote {args.out}: {len(rows)} mazes ({', '.join(sets)}), format {args.format}, "
        f"{args.rule}'s rule" + (", chat prompts" if args.chat else "")
    )


def config_sets(overrides: list[str]):
    """The evaluation sets of mazerl's training config composed with `overrides`."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from mazerl.apps.schema import register_configs, typed, validate
    from mazerl.core.config import CONF_DIR, register_resolvers
    from mazerl.envs.spec import MazeSpec
    from mazerl.eval.evaluate import build_sets

    register_configs()
    register_resolvers()
    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as e:
        raise UserError(f"--eval-sets {' '.join(overrides)}: {str(e).splitlines()[0]}") from None
    validate(cfg)
    run = typed(cfg)
    return build_sets(MazeSpec.of(run.maze), run.eval)


def new_folder(path: Path, flag: str) -> None:
    if path.exists() and any(path.iterdir()):
        raise UserError(f"{flag} {path} already exists and is not empty; choose a new folder")


def looks_like_path(name: str) -> bool:
    """Whether a `--model` value that names no existing folder is a mistyped path rather than
    a Hugging Face Hub id (`name` or `org/name`): it starts with `.`, `/` or `~`, has a
    backslash or more than one `/`, or its first part is a folder here."""
    parts = name.split("/")
    return (
        name.startswith((".", "/", "~"))
        or "\\" in name
        or len(parts) > 2
        or (len(parts) == 2 and Path(parts[0]).is_dir())
    )


def model_source(name: str) -> tuple[str, bool]:
    """Where `--model` loads from, found before transformers' loaders start.

    Args:
        name: a `--model` value other than `tiny`.

    Returns:
        `(source, local_only)`: a local model folder (read without the Hub), a Hub id in the
        Hugging Face cache with the Hub offline or unreachable (read from the cache), or a Hub
        id the Hub knows (loaded as transformers does).

    Raises:
        UserError: at once (no Hub retries), naming a missing or non-model folder, an id
            the Hub does not know, or an id that is not cached while the Hub is offline
            (`HF_HUB_OFFLINE`) or unreachable.
    """
    folder = Path(name).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise UserError(f"--model {name}: not a model folder (no config.json in it)")
        return str(folder), True
    if folder.exists() or looks_like_path(name):
        raise UserError(f"--model {name}: no such model folder")
    return hub_source(name)


@functools.cache
def hub_source(name: str) -> tuple[str, bool]:
    """`model_source` of a Hub id: one request to the Hub (`model_info`, no retries, at most
    `HUB_TIMEOUT` seconds), none when it is offline; read once per process."""
    from huggingface_hub import HfApi, constants, try_to_load_from_cache
    from huggingface_hub.errors import GatedRepoError, HFValidationError, RepositoryNotFoundError

    try:
        cached = isinstance(try_to_load_from_cache(name, "config.json"), str)
    except HFValidationError as e:
        raise UserError(f"--model {name}: no such model folder, nor a Hub id ({e})") from None
    if constants.is_offline_mode():
        if cached:
            return name, True
        raise UserError(
            f"--model {name}: no such model folder, nor in the Hugging Face cache "
            "(HF_HUB_OFFLINE is set)"
        )
    try:
        HfApi(endpoint=constants.ENDPOINT).model_info(name, timeout=HUB_TIMEOUT)
    except GatedRepoError:
        return name, False  # transformers names the access it needs
    except RepositoryNotFoundError:
        if cached:
            return name, True
        raise UserError(
            f"--model {name}: no such model folder, nor a model on the Hugging Face Hub "
            f"({constants.ENDPOINT})"
        ) from None
    except Exception as e:  # the request failed: httpx's and OSError's many kinds
        if cached:
            return name, True
        raise UserError(
            f"--model {name}: no such model folder, and the Hugging Face Hub "
            f"({constants.ENDPOINT}) cannot be reached ({e.__class__.__name__}); a cached "
            "model loads without it"
        ) from None
    return name, False


def from_pretrained(cls, name: str):
    """`cls.from_pretrained` of `--model name`.

    Args:
        cls: a transformers class with `from_pretrained` (a tokenizer or model class).
        name: the `--model` value (not `tiny`).

    Returns:
        What `cls.from_pretrained` returns.

    Raises:
        UserError: the model cannot be found (`model_source`) or loaded.
    """
    source, local = model_source(name)
    try:
        return cls.from_pretrained(source, local_files_only=local)
    except (OSError, ValueError) as e:
        raise UserError(f"--model {name}: cannot load it ({str(e).splitlines()[0]})") from None


def load_tokenizer(name: str, fmt: str):
    """The tokenizer of `--model`: the maze tokenizer for `tiny` (maxrl data only)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    from mazerl.llm.models import maze_tokenizer

    if name == "tiny":
        if fmt != "maxrl":
            raise UserError("--model tiny reads the maxrl format only (its vocabulary is mazerl's)")
        return maze_tokenizer()
    # transformers 5's AutoTokenizer loads a qwen2 folder (MaxRL's checkpoint) with
    # Qwen2Tokenizer, which reads a saved word-level tokenizer wrong: load that one as saved
    saved = Path(name).expanduser() / "tokenizer_config.json"
    generic = saved.is_file() and json.loads(saved.read_text()).get("tokenizer_class") in (
        "TokenizersBackend",
        "PreTrainedTokenizerFast",
    )
    return from_pretrained(PreTrainedTokenizerFast if generic else AutoTokenizer, name)


def load_model(name: str, seed: int = 0):
    """The causal LM of `--model`: a new seeded one of mazerl's transformer shape for `tiny`."""
    from transformers import AutoModelForCausalLM

    from mazerl.llm.models import tiny_model

    return tiny_model(seed=seed) if name == "tiny" else from_pretrained(AutoModelForCausalLM, name)


def check_chat(rows: list[dict], tokenizer, args) -> None:
    """A `UserError` when the dataset's prompts are conversations and the tokenizer has no chat
    template to render them."""
    if tokenizer.chat_template is None and any(not isinstance(r["prompt"], str) for r in rows):
        raise UserError(
            f"--data {args.data} holds chat prompts (export --chat) but --model {args.model} "
            "has no chat template; export without --chat"
        )


def save_tokenizer(tokenizer, folder: Path) -> None:
    """Save `tokenizer` beside a saved model; a warning line on stderr when
    `AutoTokenizer.from_pretrained(folder)` would encode differently (a word-level tokenizer
    beside a qwen2 config, see `mazerl.llm.models`)."""
    from mazerl.llm.models import reloads_right

    tokenizer.save_pretrained(str(folder))
    if not reloads_right(str(folder), tokenizer):
        print(
            f"warning: AutoTokenizer.from_pretrained('{folder}') loads a tokenizer that encodes "
            "maze text differently; load it with PreTrainedTokenizerFast.from_pretrained",
            file=sys.stderr,
        )


def one_format(rows: list[dict], path: Path) -> str:
    formats = {r["maze_format"] for r in rows}
    if len(formats) != 1:
        raise UserError(f"--data {path}: mixes formats {sorted(formats)}; export one per file")
    return formats.pop()


def check_positive(**values) -> None:
    """A `UserError` naming the first flag (`--name` from its keyword) whose value is not > 0."""
    for key, value in values.items():
        if not value > 0:
            raise UserError(f"--{key.replace('_', '-')} must be > 0, got {value}")


def machine(threads: int) -> dict:
    """Set torch's threads for this command and say where it runs.

    Args:
        threads: torch threads (`--threads`, >= 1).

    Returns:
        `{threads, device, cpu, cpu_capability}`: the settings a figure repeats under (the
        same CPU kind and threads give the same numbers; `mazerl.core.device.cpu_info`).
    """
    import torch

    from mazerl.core.device import cpu_info

    check_positive(threads=threads)
    torch.set_num_threads(threads)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return {"threads": threads, "device": device, **cpu_info()}


def model_settings(model) -> dict:
    """A causal LM's settings as a run records them: its class, parameter count and whole
    transformers config (`config.to_dict`, JSON types)."""
    config = json.loads(model.config.to_json_string(use_diff=False))
    count = sum(p.numel() for p in model.parameters())
    return {"class": type(model).__name__, "parameters": count, "config": config}


def where_line(where: dict, out: Path) -> str:
    """The line that says where a run's figures came from: device, threads, CPU kind."""
    threads = f"{where['threads']} thread" + ("s" if where["threads"] > 1 else "")
    return (
        f"on {where['device']} with {threads} ({where['cpu']}, {where['cpu_capability']}); "
        f"every setting in {out / 'metrics.json'}"
    )


def write_metrics(out: Path, about: dict, final: dict) -> None:
    """`out/metrics.json` of an `sft` or `train` run: `about` (every setting of the run: data,
    model, sampling, optimiser, threads, CPU), `final` (its last figures) and `code`
    (`code_identity`), as `eval` writes its own (`mazerl.llm.exact.write_run`)."""
    from mazerl.core.files import write_json_atomic
    from mazerl.core.provenance import code_identity

    write_json_atomic({"final": final, "about": about, "code": dict(code_identity())},
                      out / "metrics.json")  # fmt: skip


def sft(args) -> None:
    from torch.utils.tensorboard import SummaryWriter

    from mazerl.llm import sft as warm
    from mazerl.llm.exact import prompt_text
    from mazerl.llm.text import continuation

    check_positive(steps=args.steps, batch=args.batch, lr=args.lr)
    where = machine(args.threads)
    new_folder(args.out, "--out")
    rows = load_rows(args.data, ("prompt", "solution", "maze_format"))
    fmt = one_format(rows, args.data)
    tokenizer = load_tokenizer(args.model, fmt)
    check_chat(rows, tokenizer, args)
    model = load_model(args.model, args.seed)
    prompts = [prompt_text(tokenizer, r["prompt"]) for r in rows]
    pairs = warm.demonstrations(
        tokenizer, prompts, [continuation(r["solution"], fmt) for r in rows]
    )
    if args.model == "tiny":
        model.save_pretrained(str(args.out / "base"))
        save_tokenizer(tokenizer, args.out / "base")
    about = {
        "command": "sft",
        "data": str(args.data),
        "format": fmt,
        "mazes": len(rows),
        "model": args.model,
        "model_settings": model_settings(model),
        "steps": args.steps,
        "batch": args.batch,
        "optimiser": "AdamW",
        "lr": args.lr,
        "betas": list(warm.BETAS),
        "weight_decay": warm.WEIGHT_DECAY,
        "clip_norm": warm.CLIP_NORM,
        "seed": args.seed,
        **where,
    }
    model.to(where["device"])
    writer = SummaryWriter(str(args.out))
    start = time.perf_counter()
    losses = warm.warm_up(
        model,
        tokenizer,
        pairs,
        steps=args.steps,
        batch_size=args.batch,
        lr=args.lr,
        seed=args.seed,
        progress=True,
        log=lambda step, loss: writer.add_scalar("sft/answer_loss", loss, step),
    )
    seconds = time.perf_counter() - start
    writer.close()
    model.save_pretrained(str(args.out / "model"))
    save_tokenizer(tokenizer, args.out / "model")
    last = sum(losses[-10:]) / len(losses[-10:])
    final = {"sft/answer_loss_first": losses[0], "sft/answer_loss_last10": last}
    write_metrics(args.out, about, {**final, "seconds": seconds})
    print(
        f"sft {args.steps} steps in {seconds:.0f} s ({seconds / args.steps:.2f} s/step): answer "
        f"loss {losses[0]:.3f} -> {last:.3f} nats/token -> {args.out / 'model'}"
    )
    print(where_line(where, args.out))


def train(args) -> None:
    from datasets import Dataset
    from trl import GRPOConfig

    from mazerl.llm.objective import check_objective
    from mazerl.llm.trainer import FocalGRPOTrainer
    from mazerl.llm.verifier import maze_reward

    if args.group < 2:
        raise UserError(f"--group must be >= 2, got {args.group}")
    check_positive(prompts=args.prompts, steps=args.steps, lr=args.lr)
    # the method file's hyperparameters under --algo-arg; a ConfigError names a bad key
    advantage_kwargs = check_objective(args.algo, args.gamma, algo_args(args.algo_arg))
    where = machine(args.threads)
    new_folder(args.out, "--out")
    rows = load_rows(args.data, ("prompt", "maze", "maze_format"))
    fmt = one_format(rows, args.data)
    tokenizer = load_tokenizer(args.model, fmt)
    check_chat(rows, tokenizer, args)
    model = load_model(args.model, args.seed)
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
        use_cpu=where["device"] == "cpu",
        activation_checkpointing=True,  # GRPOConfig's default, by its non-deprecated name
    )
    about = {
        "command": "train",
        "data": str(args.data),
        "format": fmt,
        "mazes": len(rows),
        "model": args.model,
        "model_settings": model_settings(model),
        "algo": args.algo,
        "gamma": args.gamma,
        "advantage_kwargs": advantage_kwargs,
        "group": args.group,
        "prompts": args.prompts,
        "steps": args.steps,
        "lr": args.lr,
        "seed": args.seed,
        "sampling": {k: getattr(config, k) for k in SAMPLING},
        "grpo_config": json.loads(json.dumps(config.to_dict(), default=str)),
        **where,
    }
    trainer = FocalGRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=maze_reward,
        args=config,
        train_dataset=Dataset.from_list(rows),
        algo=args.algo,
        focal_gamma=args.gamma,
        advantage_kwargs=advantage_kwargs,
    )
    if args.model == "tiny":  # the starting point exists nowhere else: keep it for comparison
        model.save_pretrained(str(args.out / "base"))
        save_tokenizer(tokenizer, args.out / "base")
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    trainer.save_model(str(args.out / "model"))
    save_tokenizer(tokenizer, args.out / "model")
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    write_metrics(args.out, about, {"train/reward": rewards, "seconds": seconds})
    print("reward " + ", ".join(f"{r:.4g}" for r in rewards))
    print(
        f"trained {args.steps} steps in {seconds:.0f} s ({seconds / args.steps:.2f} s/step) -> "
        f"{args.out / 'model'} (TensorBoard: {args.out})"
    )
    print(where_line(where, args.out))


def evaluate(args) -> None:
    import torch

    from mazerl.eval.evaluate import EvalSet
    from mazerl.llm.exact import evaluate_set, prompt_text, write_run
    from mazerl.llm.verifier import maze_of

    check_positive(n=args.n, temperature=args.temperature)
    if args.sampled_mazes < 0:
        raise UserError(f"--sampled-mazes must be >= 0, got {args.sampled_mazes}")
    where = machine(args.threads)
    new_folder(args.out, "--out")
    rows = load_rows(args.data, ("prompt", "maze", "maze_format", "set", "index"))
    fmt = one_format(rows, args.data)
    allow = {bool((r.get("extra_info") or {}).get("allow_revisits", False)) for r in rows}
    tokenizer = load_tokenizer(args.model, fmt)
    check_chat(rows, tokenizer, args)
    model = load_model(args.model, args.seed)
    by_set, prompts = defaultdict(list), defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["set"], r["index"])):
        by_set[r["set"]].append(maze_of(r["maze"]))
        prompts[r["set"]].append(prompt_text(tokenizer, r["prompt"]))
    model.to(where["device"]).eval()
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
            sampled_mazes=args.sampled_mazes or None,
            progress=True,
        )
        for name, mazes in by_set.items()
    }
    name = args.name or args.out.name
    about = {
        "command": "eval",
        "name": name,
        "data": str(args.data),
        "format": fmt,
        "allow_revisits": True in allow,
        "model": args.model,
        "model_settings": model_settings(model),
        # sampling: full softmax at the temperature (no top-k, no top-p), the exact values
        # at the same temperature; n samples of each of the first sampled_mazes mazes
        "temperature": args.temperature,
        "top_k": None,
        "top_p": None,
        "n": args.n,
        "sampled_mazes": args.sampled_mazes or None,
        "max_new_tokens": {s: r.max_new_tokens for s, r in results.items()},
        "mazes": {s: r.mazes for s, r in results.items()},
        "seed": args.seed,
        **where,
    }
    overrides = [f"model={name}", f"temperature={args.temperature}", f"seed={args.seed}"]
    write_run(args.out, results, about, overrides)
    for set_name, r in results.items():
        print(f"{set_name}: {figures(r, args.n)}")
    print(where_line(where, args.out))


def figures(result, n: int) -> str:
    """One set's pass@k figures (its `LmSetResult`: the values of the `pass` and `exact_pass`
    families, under their `Metric.key`), each kind labelled with the mazes it covers:
    `sampled (4 mazes, n 16): pass@1 0.781 ...; exact (64 mazes): exact_pass@1 0.594 ...`."""
    parts = []
    for kind, family, label in (
        ("sampled", "pass", f"{result.mazes['sampled']} mazes, n {n}"),
        ("exact", "exact_pass", f"{result.mazes['exact']} mazes"),
    ):
        values = "  ".join(
            f"{m.key} {v:.3f}"
            for m, v in result.values.items()
            if (m.family, m.stat) == (family, "")
        )
        if values:
            parts.append(f"{kind} ({label}): {values}")
    return "; ".join(parts)


def verl_args(args) -> None:
    from mazerl.llm.verl_config import overrides

    # a ConfigError names an unknown --algo, a missing or unknown --algo-arg, a bad --gamma
    print("\n".join(overrides(args.algo, args.gamma, algo_args(args.algo_arg))))


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    load_plugins()  # a plug-in's estimator is one more --algo
    if args.command == "verl-args":  # prints text: needs neither the extra nor verl
        verl_args(args)
        return
    require_extra()
    commands = {"export": export, "sft": sft, "train": train, "eval": evaluate}
    commands[args.command](args)


if __name__ == "__main__":
    main()
