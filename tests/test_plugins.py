"""Plug-ins: a policy, a maze generator and an advantage estimator from files outside mazerl,
declared through the `mazerl.plugins` entry point of an installed distribution, train from the
command line (no edit of mazerl's own files, no YAML for the policy or the method: `policy=NAME`,
`algo=NAME`); a broken plug-in is one line naming it."""

import textwrap
from pathlib import Path

import yaml
from conftest import ROOT, metrics, options, run_app

from mazerl.core import checkpoint

POLICY = '''
"""A toy policy: the mean maze embedding and the previous move, through one linear layer."""
from dataclasses import dataclass

import torch
from torch import nn

from mazerl.core.settings import COUNT, setting
from mazerl.policy.base import POLICIES, PolicyConfig, SequencePolicy, policy_name, previous_actions
from mazerl.policy.tokens import N_ACTIONS


@dataclass
class ToyConfig(PolicyConfig):
    name: str = policy_name("toy_mlp")
    width: int = setting(8, COUNT, "the toy policy's width")


@POLICIES.register("toy_mlp")
class ToyPolicy(SequencePolicy):
    config_class = ToyConfig

    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.cell = nn.Embedding(4, cfg.width)
        self.move = nn.Embedding(N_ACTIONS + 1, cfg.width)
        self.head = nn.Linear(2 * cfg.width, N_ACTIONS)

    def prefill(self, prompts, group_size, max_len=0):
        maze = self.cell(prompts.cells).mean((1, 2))  # [P, width]
        return maze.repeat_interleave(group_size, 0)  # [B, width]

    def step(self, state, prev, pos):
        return self.head(torch.cat([state, self.move(prev)], -1)), state

    def select_rows(self, state, rows):
        return state[rows]

    def forward(self, prompts, group_size, actions, positions):
        maze = self.prefill(prompts, group_size)[:, None].expand(-1, actions.shape[1], -1)
        return self.head(torch.cat([maze, self.move(previous_actions(actions))], -1))
'''

GENERATOR = '''
"""A toy generator: the binary-tree maze (each cell opens north or west), logging its calls."""
import os

from mazerl.envs.generators import GENERATORS


@GENERATORS.register("toy_binary_tree")
def binary_tree(height, width, rng):
    with open(os.environ["TOY_GENERATOR_LOG"], "a") as log:
        log.write(f"{height}x{width}\\n")
    passages = []
    for i in range(height):
        for j in range(width):
            here = i * width + j
            options = ([here - width] if i else []) + ([here - 1] if j else [])
            if options:
                passages.append((here, options[int(rng.integers(len(options)))]))
    return passages
'''


ESTIMATOR = '''
"""A toy method: the sign of the group-centred reward, logging the group sizes it is called on."""
import os

import torch

from mazerl.algos.advantages import estimator


@estimator("toy_sign")
def toy_sign(rewards):
    with open(os.environ["TOY_ESTIMATOR_LOG"], "a") as log:
        log.write(f"{rewards.shape[0]}x{rewards.shape[1]}\\n")
    return torch.sign(rewards - rewards.mean(dim=1, keepdim=True))
'''


def install(tmp: Path, modules: dict[str, str], entry_points: dict[str, str]) -> dict:
    """Write `modules` (name -> source) and a distribution declaring `entry_points` (name ->
    module) in the group `mazerl.plugins` into `tmp`; returns the environment that finds them."""
    for name, source in modules.items():
        (tmp / f"{name}.py").write_text(textwrap.dedent(source))
    info = tmp / "mazerl_toy_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mazerl-toy-plugins\nVersion: 0.1\n"
    )
    lines = [f"{name} = {module}" for name, module in entry_points.items()]
    (info / "entry_points.txt").write_text("[mazerl.plugins]\n" + "\n".join(lines) + "\n")
    return {
        "PYTHONPATH": f"{tmp}:{ROOT}",
        "TOY_GENERATOR_LOG": str(tmp / "generator.log"),
        "TOY_ESTIMATOR_LOG": str(tmp / "estimator.log"),
    }


TINY = [
    "maze.size=4",
    "train.iterations=2",
    "train.num_prompts=4",
    "train.group_size=2",
    "train.eval_every=0",
    "base.steps=2",
    "base.target_pass1=null",
    "eval.sets=[{name: id, num_mazes: 4}]",
    "eval.n=2",
    "eval.n_during=2",
    "eval.exact_ks=[1]",
    "eval.images=0",
    "logger.progress=lines",
    "threads=1",
]


def train_with(tmp_path: Path, env: dict, *overrides: str):
    """Train TINY with `overrides` in tmp_path/run; returns (the finished process, the run dir)."""
    run = tmp_path / "run"
    out = run_app(
        "mazerl.apps.train",
        *TINY,
        *overrides,
        f"hydra.run.dir={run}",
        f"base.cache_dir={tmp_path / 'cache'}",
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out, run


def test_a_plugin_policy_and_generator_train_two_iterations(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    env = install(
        plugins,
        {"toy_policy": POLICY, "toy_generator": GENERATOR},
        {"toy_policy": "toy_policy", "toy_generator": "toy_generator"},
    )
    out, run = train_with(
        tmp_path, env, "policy=toy_mlp", "policy.width=6", "maze.generator=toy_binary_tree"
    )
    assert "toy_binary_tree mazes of 4x4 cells" in out.stdout
    m = metrics(run)
    assert m["iterations"] == 2 and 0.0 <= m["final"]["eval/id/pass@1"] <= 1.0
    assert (m["hparams"]["policy"], m["hparams"]["generator"]) == ("toy_mlp", "toy_binary_tree")
    # the toy policy's own weights, at the width given on the command line (2 x 6 inputs)
    state = checkpoint.load(run / "checkpoints" / "ckpt_0000002.pt")
    assert state["policy_config"] == {
        "name": "toy_mlp",
        "sees_position": False,
        "hidden": 64,
        "width": 6,
    }
    assert tuple(state["policy_state"]["head.weight"].shape) == (5, 12)
    # the training (4 mazes x 2 iterations) and evaluation (4) mazes came from the generator
    calls = (plugins / "generator.log").read_text().split()
    assert set(calls) == {"4x4"} and len(calls) >= 4 * 2 + 4
    # --help lists the policy among the options and describes its settings
    page = run_app("mazerl.apps.train", "--help", "policy=toy_mlp", cwd=tmp_path, env=env).stdout
    assert f"policy: {', '.join(sorted({*options('policy'), 'toy_mlp'}))}" in page.splitlines()
    rows = [line.split() for line in page.splitlines()]
    assert ["policy.width=8", "the", "toy", "policy's", "width"] in rows


def test_a_plugin_estimator_is_the_option_algo_name(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    env = install(plugins, {"toy_estimator": ESTIMATOR}, {"toy_estimator": "toy_estimator"})
    _, run = train_with(tmp_path, env, "algo=toy_sign")
    assert metrics(run)["hparams"]["algo"] == "toy_sign"
    # named and estimated by the plug-in, every other setting of the method GRPO's
    algo = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())["algo"]
    grpo = yaml.safe_load((ROOT / "mazerl" / "conf" / "algo" / "grpo.yaml").read_text())
    assert (algo.pop("name"), algo.pop("advantage")) == ("toy_sign", "toy_sign")
    assert algo.pop("label") is None  # shown by its name, not as GRPO
    mine = ("defaults", "name", "advantage", "label")
    assert algo == {k: v for k, v in grpo.items() if k not in mine}
    # called on each iteration's 4 mazes x 2 rollouts, and on the config's check (1 x 2)
    calls = (plugins / "estimator.log").read_text().split()
    assert sorted(calls) == ["1x2", "4x2", "4x2"]
    # --help lists the method among the algo options and shows its settings
    page = run_app("mazerl.apps.train", "--help", "algo=toy_sign", cwd=tmp_path, env=env).stdout
    options = next(line for line in page.splitlines() if line.startswith("algo: "))
    assert "toy_sign" in options.removeprefix("algo: ").split(", ")
    assert "grpo" in options.removeprefix("algo: ").split(", ")
    rows = [line.split()[0] for line in page.splitlines() if line.startswith("  algo.")]
    assert "algo.advantage=toy_sign" in rows and "algo.name=toy_sign" in rows


def test_every_registered_estimator_is_an_option_of_the_algo_group():
    """`algo=NAME` for each estimator: its YAML (whose base gives what it does not set), or
    GRPO's settings with NAME as estimator and name where it has none."""
    from hydra import compose, initialize_config_dir

    from mazerl.algos import ADVANTAGES
    from mazerl.apps.schema import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "mazerl" / "conf"), version_base="1.3"):
        for name in ADVANTAGES.names():
            algo = compose("config", overrides=[f"algo={name}"]).algo
            assert (algo.name, algo.advantage) == (name, name)
            assert (algo.loss, algo.clip_low, algo.kl_beta) == ("clip", 0.2, 0.0)


def test_a_broken_plugin_is_one_line_naming_its_entry_point(tmp_path):
    env = install(
        tmp_path, {"toy_broken": "raise RuntimeError('needs a GPU')\n"}, {"broken": "toy_broken"}
    )
    out = run_app(
        "mazerl.apps.train", *TINY, f"hydra.run.dir={tmp_path}/run", cwd=tmp_path, env=env
    )
    assert (out.returncode, out.stderr) == (
        2,
        "error: plug-in broken = 'toy_broken' (entry point group mazerl.plugins) failed to "
        "load: RuntimeError: needs a GPU\n",
    )
    assert not (tmp_path / "run").exists()
