"""Structured config schemas (registered in Hydra's ConfigStore) and their validation.

The YAML files under `conf/` hold values; these dataclasses hold the schema, so a misspelt
key or a wrong type fails at start-up naming the key. `validate` checks ranges and names
before any work starts and raises `ConfigError` naming the key.
"""

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from mazerl.algos import ADVANTAGES, AGGREGATIONS, POLICY_LOSSES
from mazerl.algos.objective import AlgoConfig, FocalConfig
from mazerl.core.errors import ConfigError
from mazerl.envs.generators import GENERATORS, MAX_CELLS, MIN_CELLS, PLACEMENTS
from mazerl.policy import POLICIES
from mazerl.policy.gru import GruConfig
from mazerl.policy.transformer import TransformerConfig


@dataclass
class MazeConfig:
    """Training mazes (and the `id` evaluation set): see `mazerl.envs.spec.MazeSpec`."""

    size: int = 5
    height: int | None = None
    width: int | None = None
    generator: str = "prim"
    start_goal: str = "corners"
    layout: str | None = None
    allow_revisits: bool = False  # true: the released MaxRL reward (detours allowed)
    routes: int = 1  # exactly this many simple start-goal routes (> 1: braid mazes)
    route_lengths: str = "equal"  # braid: "equal" or "short_common" route lengths
    pool_size: int = 0  # 0: fresh mazes every iteration; N: a fixed pool of N training mazes


@dataclass
class TrainConfig:
    iterations: int = 150
    num_prompts: int = 32  # mazes per iteration (the paper: 256)
    group_size: int = 8  # rollouts per maze, N (the paper: 4 ... 128)
    lr: float = 1e-4
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    warmup: int = 0  # iterations of linear learning-rate warm-up
    schedule: str = "constant"  # constant | cosine
    ppo_epochs: int = 1  # passes over each batch (1 + 1 minibatch: fully on-policy)
    minibatches: int = 1  # optimizer steps per pass, split by prompt
    grad_clip: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    budget: str = "steps"  # steps: fixed iterations | rollouts: iterations * N constant
    budget_reference_group_size: int = 8  # with budget=rollouts: N at which iterations apply
    eval_every: int = 50  # 0: only at the end
    checkpoint_every: int = 50
    keep_checkpoints: int = 2
    resume: bool = True  # continue from the run dir's last checkpoint if there is one
    max_bad_steps: int = 5  # stop after this many non-finite steps in a row
    log_every: int = 10  # plain log lines when not on a terminal


@dataclass
class BaseConfig:
    """The base policy: supervised training on solver demonstrations (SFT), cached."""

    path: str | None = None  # use this base checkpoint instead of training one
    steps: int = 1500  # the paper: 1,500 steps, batch 32, AdamW lr 5e-4
    batch_size: int = 32
    lr: float = 5e-4
    noise: float = 0.0  # per-step mistake rate of the demonstrating solver
    target_pass1: float | None = None  # stop once the probe pass@1 reaches this
    probe_every: int = 50
    probe_mazes: int = 64
    probe_samples: int = 8
    seed: int = 0  # the base model does not depend on the run seed
    cache_dir: str | None = None  # null: $MAZERL_CACHE, else ./outputs/base_models


@dataclass
class EvalSetConfig:
    name: str = MISSING
    size_delta: int = 0  # cells added to the training maze size (OOD: larger mazes)
    generator: str | None = None  # null: the training generator
    start_goal: str | None = None
    num_mazes: int = 64


@dataclass
class EvalConfig:
    sets: list[EvalSetConfig] = field(default_factory=list)
    n: int = 256  # samples per maze at the final evaluation
    n_during: int = 32  # samples per maze at intermediate evaluations (exact metrics always)
    ks: list[int] = field(default_factory=list)  # empty: 1, 2, 4, ..., n
    exact_ks: list[int] = field(default_factory=lambda: [1, 8, 64, 256, 1024])
    temperature: float = 1.0
    seed: int = 1234  # evaluation mazes are fixed by this seed, the same for every run
    batch_rollouts: int = 16384  # rollouts generated at once
    images: int = 4  # evaluation mazes drawn with sampled paths into TensorBoard


@dataclass
class LoggerConfig:
    tensorboard: bool = True
    flush_secs: int = 30
    progress: str = "auto"  # auto (tqdm on a terminal, log lines otherwise) | bar | lines | off


@dataclass
class Config:
    maze: MazeConfig = field(default_factory=MazeConfig)
    policy: Any = MISSING
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    focal: FocalConfig = field(default_factory=FocalConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    base: BaseConfig = field(default_factory=BaseConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    threads: int = 0  # torch threads; 0: from the launcher (see runtime.job_threads)
    checkpoint: str | None = None  # mazerl-eval: the checkpoint to evaluate


def dirname(overrides: str) -> str:
    """A job folder name from `hydra.job.override_dirname` (path separators replaced)."""
    return overrides.replace("/", "_").replace("\\", "_")[:200] or "default"


def register_configs() -> None:
    if not OmegaConf.has_resolver("mazerl_dirname"):
        OmegaConf.register_new_resolver("mazerl_dirname", dirname)
    cs = ConfigStore.instance()
    cs.store(name="schema", node=Config)
    cs.store(group="policy", name="schema_gru", node=GruConfig)
    cs.store(group="policy", name="schema_transformer", node=TransformerConfig)
    cs.store(group="algo", name="schema", node=AlgoConfig)
    cs.store(group="focal", name="schema", node=FocalConfig)
    cs.store(group="train", name="schema", node=TrainConfig)
    cs.store(group="eval", name="schema", node=EvalConfig)
    cs.store(group="logger", name="schema", node=LoggerConfig)
    cs.store(group="maze", name="schema", node=MazeConfig)


def _need(ok: bool, key: str, rule: str, value: Any) -> None:
    if not ok:
        raise ConfigError(f"{key} must be {rule}, got {value!r}")


def validate(cfg: DictConfig) -> None:
    """Check every value a user can get wrong, before any work starts."""
    m, t, b, e, a = cfg.maze, cfg.train, cfg.base, cfg.eval, cfg.algo
    if m.layout is None:
        for key in ("size", "height", "width"):
            v = m[key]
            _need(
                v is None or MIN_CELLS <= v <= MAX_CELLS,
                f"maze.{key}",
                f"in [{MIN_CELLS}, {MAX_CELLS}] cells",
                v,
            )
        GENERATORS.get(m.generator)
        PLACEMENTS.get(m.start_goal)
    _need(1 <= m.routes <= 8, "maze.routes", "in [1, 8]", m.routes)
    _need(
        m.route_lengths in ("equal", "short_common"),
        "maze.route_lengths",
        "'equal' or 'short_common'",
        m.route_lengths,
    )
    _need(m.pool_size >= 0, "maze.pool_size", ">= 0", m.pool_size)
    POLICIES.get(cfg.policy.name)
    ADVANTAGES.get(a.advantage)
    POLICY_LOSSES.get(a.loss)
    AGGREGATIONS.get(a.loss_agg_mode)
    for key in ("clip_low", "clip_high"):
        _need(a[key] > 0, f"algo.{key}", "> 0", a[key])
    _need(a.kl_beta >= 0, "algo.kl_beta", ">= 0", a.kl_beta)
    _need(cfg.focal.gamma >= 0, "focal.gamma", ">= 0", cfg.focal.gamma)
    _need(t.group_size >= 2, "train.group_size", ">= 2", t.group_size)
    for key in ("iterations", "num_prompts", "ppo_epochs", "minibatches"):
        _need(t[key] >= 1, f"train.{key}", ">= 1", t[key])
    _need(
        t.num_prompts % t.minibatches == 0,
        "train.minibatches",
        "a divisor of num_prompts",
        t.minibatches,
    )
    _need(t.lr > 0, "train.lr", "> 0", t.lr)
    _need(t.temperature > 0, "train.temperature", "> 0", t.temperature)
    _need(0 < t.top_p <= 1, "train.top_p", "in (0, 1]", t.top_p)
    _need(t.schedule in ("constant", "cosine"), "train.schedule", "constant or cosine", t.schedule)
    _need(t.budget in ("steps", "rollouts"), "train.budget", "steps or rollouts", t.budget)
    _need(t.grad_clip > 0, "train.grad_clip", "> 0", t.grad_clip)
    _need(t.keep_checkpoints >= 1, "train.keep_checkpoints", ">= 1", t.keep_checkpoints)
    _need(t.max_bad_steps >= 1, "train.max_bad_steps", ">= 1", t.max_bad_steps)
    _need(
        b.steps >= 0 and b.batch_size >= 1,
        "base.steps/base.batch_size",
        ">= 0 / >= 1",
        (b.steps, b.batch_size),
    )
    _need(0 <= b.noise < 1, "base.noise", "in [0, 1)", b.noise)
    _need(
        b.target_pass1 is None or 0 < b.target_pass1 <= 1,
        "base.target_pass1",
        "in (0, 1] or null",
        b.target_pass1,
    )
    _need(e.n >= 1 and e.n_during >= 1, "eval.n/eval.n_during", ">= 1", (e.n, e.n_during))
    _need(
        all(k >= 1 for k in e.ks) and max(e.ks, default=1) <= e.n,
        "eval.ks",
        f"in [1, eval.n={e.n}]",
        list(e.ks),
    )
    _need(e.temperature > 0, "eval.temperature", "> 0", e.temperature)
    for s in e.sets:
        if s.generator is not None:
            GENERATORS.get(s.generator)
        _need(s.num_mazes >= 1, f"eval.sets[{s.name}].num_mazes", ">= 1", s.num_mazes)
        _need(s.size_delta >= 0, f"eval.sets[{s.name}].size_delta", ">= 0", s.size_delta)
    _need(
        cfg.logger.progress in ("auto", "bar", "lines", "off"),
        "logger.progress",
        "auto, bar, lines or off",
        cfg.logger.progress,
    )
    _need(cfg.threads >= 0, "threads", ">= 0", cfg.threads)
    dev = str(cfg.device)
    _need(dev in ("auto", "cpu") or dev.startswith("cuda"), "device", "auto, cpu or cuda[:N]", dev)
    if dev.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"device={dev} requested but CUDA is not available here")


def to_container(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
