"""mazerl's estimators in verl's advantage registry, across a process boundary as verl runs
them: its trainer and workers are Ray actors, fresh processes that get only the environment
variables of Ray's runtime environment. verl is not part of the extra; `make test` (and so CI)
installs verl 0.9.1 with `--no-deps` as docs/tutorials/language-models.md says. Everywhere, a
stand-in of the two pieces of verl this touches is written to a temporary folder:
`verl/__init__.py` importing the modules named by `VERL_USE_EXTERNAL_MODULES` (as verl
0.9.1's does) and `verl.trainer.ppo.core_algos` with verl's registry functions. Where verl is
installed, the same child runs against it too, and verl's own `ppo_trainer.yaml`, composed
with the printed overrides, resolves mazerl's reward function and every estimator through
verl's own loaders, and verl's dataset class and prompt builder read the tutorial's exports as
`main_ppo` does (those tests skip, saying why, only where verl is not installed)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from mazerl.apps.llm import main
from mazerl.core.config import CONF_DIR, load_option
from mazerl.llm import verl_config
from mazerl.llm.objective import estimator_names, focal_advantages
from mazerl.llm.text import sequence
from mazerl.llm.verl_config import overrides, runtime_env

ROOT = Path(__file__).resolve().parents[1]
STAND_IN = {
    "verl/__init__.py": """
import importlib
import os

for _module in filter(None, os.getenv("VERL_USE_EXTERNAL_MODULES", "").split(",")):
    importlib.import_module(_module)
""",
    "verl/trainer/__init__.py": "",
    "verl/trainer/ppo/__init__.py": "",
    "verl/trainer/ppo/core_algos.py": """
ADV_ESTIMATOR_REGISTRY = {}


def register_adv_est(name):
    def decorator(fn):
        if name in ADV_ESTIMATOR_REGISTRY and ADV_ESTIMATOR_REGISTRY[name] != fn:
            raise ValueError(f"Adv estimator {name} has already been registered")
        ADV_ESTIMATOR_REGISTRY[name] = fn
        return fn

    return decorator


def get_adv_estimator_fn(name):
    if name not in ADV_ESTIMATOR_REGISTRY:
        raise ValueError(f"Unknown advantage estimator simply: {name}")
    return ADV_ESTIMATOR_REGISTRY[name]
""",
}
# the child imports only verl (never mazerl) and runs mazerl_grpo on two interleaved groups of
# 4 whose outcome reward sits on the last response token
CHILD = """
import json, sys
import numpy as np
import torch
import verl.trainer.ppo.core_algos as core_algos

names = sorted(n for n in core_algos.ADV_ESTIMATOR_REGISTRY if n.startswith("mazerl_"))
out = {"names": names}
if names:
    index = np.array(["a", "b"] * 4, dtype=object)
    scores = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    mask = torch.tensor([[1, 1, 1]] * 4 + [[1, 1, 0]] * 4, dtype=torch.float32)
    rewards = torch.zeros(8, 3)
    rewards[torch.arange(8), mask.sum(1).long() - 1] = scores
    fn = core_algos.get_adv_estimator_fn(sys.argv[1])
    adv, returns = fn(token_level_rewards=rewards, response_mask=mask, index=index, config=None)
    out["adv"] = adv.tolist()
    out["masked"] = bool(torch.equal(adv * mask, adv) and torch.equal(adv, returns))
print(json.dumps(out))
"""
ESTIMATORS = [f"mazerl_{name}" for name in estimator_names()]  # mazerl's registries


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("verl_stand_in")
    for name, text in STAND_IN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def child(env: dict[str, str], path: list[Path], name: str = "mazerl_grpo") -> dict:
    """Run CHILD on estimator `name` in a fresh interpreter with only `env` (and PATH,
    PYTHONPATH: `path` first) set."""
    paths = [*map(str, path), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, name], env={**base, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def by_hand(gamma: float) -> np.ndarray:
    """`[8]` GRPO advantages times (1 - mu)^gamma of CHILD's groups, rows interleaved a, b.
    a: rewards 1,0,0,0 -> mu 0.25, std 0.5 (unbiased): A = (1.5, -0.5, -0.5, -0.5), g = 0.75^gamma
    b: rewards 1,1,1,0 -> mu 0.75, std 0.5: A = (0.5, 0.5, 0.5, -1.5), g = 0.25^gamma."""
    a = np.array([1.5, -0.5, -0.5, -0.5]) * 0.75**gamma
    b = np.array([0.5, 0.5, 0.5, -1.5]) * 0.25**gamma
    return np.stack([a, b], 1).reshape(-1)


VERL_MISSING = (
    "verl is not installed: it is no part of mazerl's extras (verl 0.9.1 pins transformers "
    "< 5.11); make test installs it with --no-deps, as docs/tutorials/language-models.md says"
)


def need_verl():
    """verl, or a skip that says why it is missing and how the suite installs it."""
    return pytest.importorskip("verl", reason=VERL_MISSING)


def verl_paths(kind: str, stand_in: Path) -> list[Path]:
    if kind == "verl":
        need_verl()
    return [stand_in, ROOT] if kind == "stand-in" else [ROOT]


@pytest.mark.parametrize("kind", ["stand-in", "verl"])
def test_a_fresh_process_registers_from_the_runtime_env_alone(stand_in, kind):
    out = child(runtime_env(gamma=1.0), verl_paths(kind, stand_in))
    assert out["names"] == ESTIMATORS
    np.testing.assert_allclose(np.array(out["adv"])[:, 0], by_hand(1.0), atol=1e-5)
    assert out["masked"]  # the advantage on every response token, 0 on padding


def test_the_estimators_hyperparameters_travel_too(stand_in):
    # W-REINFORCE with weights 0.1 and 1 (gamma 0): +0.1 where the reward is 1, -1 elsewhere
    env = runtime_env(gamma=0.0, kwargs={"positive_weight": 0.1, "negative_weight": 1.0})
    out = child(env, [stand_in, ROOT], "mazerl_w_reinforce")
    scores = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.array(out["adv"])[:, 0], np.where(scores == 1, 0.1, -1.0))


def test_without_the_env_var_verl_never_sees_them(stand_in):
    assert child({}, [stand_in, ROOT]) == {"names": []}


def test_bad_gamma_and_uneven_groups_are_named(stand_in):
    code = """
import numpy as np, torch
import verl.trainer.ppo.core_algos as c
fn = c.get_adv_estimator_fn("mazerl_rloo")
for rows in ([0, 0, 1], [0, 0]):
    try:
        fn(torch.zeros(len(rows), 2), torch.ones(len(rows), 2), np.array(rows))
    except ValueError as e:
        print(e)
"""
    env = {**runtime_env(), "MAZERL_FOCAL_GAMMA": "-1", "PATH": os.environ["PATH"]}
    env["PYTHONPATH"] = os.pathsep.join([str(stand_in), str(ROOT)])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.splitlines() == [
        "mazerl estimators need groups of one size; got sizes [1, 2]",
        "MAZERL_FOCAL_GAMMA must be a finite number >= 0, got '-1'",
    ], done.stderr[-2000:]


def test_verl_args_are_hydra_overrides_that_keep_the_env_values_strings(tmp_path, capsys):
    """The printed overrides, applied by Hydra to a config shaped as verl's (`ray_kwargs` is a
    struct there), give Ray string environment values (it takes no numbers) and name the
    estimator and the reward function."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    main(["verl-args", "--algo", "maxrl", "--gamma", "1"])
    printed = capsys.readouterr().out.split()
    assert printed == overrides("maxrl", 1.0)
    (tmp_path / "ppo_trainer.yaml").write_text(
        "algorithm: {adv_estimator: gae}\n"
        "reward: {custom_reward_function: {path: null, name: null}}\n"
        "ray_kwargs: {ray_init: {num_cpus: null, runtime_env: {py_executable: null}}}\n"
    )
    with initialize_config_dir(str(tmp_path), version_base=None):
        cfg = compose("ppo_trainer", overrides=printed)
    assert cfg.algorithm.adv_estimator == "mazerl_maxrl"
    env = OmegaConf.to_container(cfg.ray_kwargs.ray_init.runtime_env.env_vars)
    assert env == {
        "VERL_USE_EXTERNAL_MODULES": "mazerl.llm.verl_estimators",
        "MAZERL_FOCAL_GAMMA": "1.0",
    }
    assert cfg.reward.custom_reward_function.path == "pkg://mazerl.llm.verifier"
    assert cfg.reward.custom_reward_function.name == "compute_score"
    main(["verl-args", "--algo", "passk", "--algo-arg", "k=4"])
    passk = capsys.readouterr().out.split()
    assert "+ray_kwargs.ray_init.runtime_env.env_vars.MAZERL_ADVANTAGE_KWARGS='{\"k\":4}'" in passk
    with initialize_config_dir(str(tmp_path), version_base=None):
        cfg = compose("ppo_trainer", overrides=passk)
    assert cfg.ray_kwargs.ray_init.runtime_env.env_vars.MAZERL_ADVANTAGE_KWARGS == '{"k":4}'
    for argv, message in (
        (["--algo", "ppo"], "unknown advantage estimator 'ppo'"),
        (["--algo-arg", "k=4"], "advantage estimator 'grpo' takes no argument 'k'; its "
                                "arguments: eps"),
        (["--gamma", "-1"], "focal gamma must be a finite number >= 0, got -1.0"),
    ):  # fmt: skip
        with pytest.raises(SystemExit):
            main(["verl-args", *argv])
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("algo", ["pkpo", "passk"])
def test_verl_args_take_a_methods_hyperparameters_from_its_file(capsys, algo):
    """conf/algo/pkpo.yaml and passk.yaml set k = 4: `verl-args --algo pkpo` prints it
    without `--algo-arg`, and `--algo-arg k=8` replaces it."""
    key = "+ray_kwargs.ray_init.runtime_env.env_vars.MAZERL_ADVANTAGE_KWARGS="
    for extra, k in (([], 4), (["--algo-arg", "k=8"], 8)):
        main(["verl-args", "--algo", algo, *extra])
        printed = capsys.readouterr().out.split()
        assert f"{key}'{{\"k\":{k}}}'" in printed
        assert f"algorithm.adv_estimator=mazerl_{algo}" in printed


@pytest.mark.parametrize(
    ("version", "prefix"),
    [
        ("0.5.0", ""),
        ("0.7.0", ""),
        ("0.7.1", "reward."),
        ("0.8.0", "reward."),
        ("0.9.1", "reward."),
    ],
)
def test_verl_args_name_the_reward_keys_of_the_installed_verl(monkeypatch, capsys, version, prefix):
    """verl reads `reward.custom_reward_function` from 0.7.1 on (its `get_custom_reward_fn`),
    the top-level `custom_reward_function` before; the installed verl decides."""
    monkeypatch.setattr(verl_config, "installed_verl", lambda: version)
    main(["verl-args"])
    printed = capsys.readouterr().out.split()
    assert printed[-2:] == [
        f"{prefix}custom_reward_function.path=pkg://mazerl.llm.verifier",
        f"{prefix}custom_reward_function.name=compute_score",
    ]
    monkeypatch.setattr(verl_config, "installed_verl", lambda: None)  # none: the current keys
    assert overrides()[-1] == "reward.custom_reward_function.name=compute_score"


# composes verl's own ppo_trainer.yaml with each estimator's printed overrides (argv[1]: JSON
# {name: overrides}), sets the runtime environment's variables as Ray does in every actor,
# then resolves, through verl's own loaders, the reward function (scoring argv[2]'s cases)
# and each estimator (on CHILD's two interleaved groups of 4)
VERL_CHILD = """
import importlib.util, json, os, sys
from pathlib import Path
from hydra import compose, initialize_config_dir

root = Path(importlib.util.find_spec("verl").submodule_search_locations[0])
configs = {}
with initialize_config_dir(str(root / "trainer" / "config"), version_base=None):
    for name, printed in json.loads(sys.argv[1]).items():
        configs[name] = compose("ppo_trainer", overrides=printed)
first = next(iter(configs.values()))
os.environ.update(first.ray_kwargs.ray_init.runtime_env.env_vars)  # before verl is imported
import numpy as np
import torch
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.reward import get_custom_reward_fn

index = np.array(["a", "b"] * 4, dtype=object)
scores = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0])
mask = torch.ones(8, 3)
rewards = torch.zeros(8, 3)
rewards[:, -1] = scores
out = {}
for name, cfg in configs.items():
    env = dict(cfg.ray_kwargs.ray_init.runtime_env.env_vars)
    for key in ("MAZERL_FOCAL_GAMMA", "MAZERL_ADVANTAGE_KWARGS"):
        os.environ.pop(key, None)
    os.environ.update(env)
    fn = core_algos.get_adv_estimator_fn(cfg.algorithm.adv_estimator)
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, index=index, config=cfg.algorithm)
    reward_fn = get_custom_reward_fn(cfg)
    scored = [reward_fn(**case) for case in json.loads(sys.argv[2])]
    out[name] = {"adv": adv[:, 0].tolist(), "scores": scored}
print(json.dumps(out))
"""


def method_kwargs(name: str) -> dict:
    """The hyperparameters mazerl's method `conf/algo/<name>.yaml` gives estimator `name`
    (its transform's, for a reward transform; none without such a file: a plug-in's)."""
    path = CONF_DIR / "algo" / f"{name}.yaml"
    if not path.is_file():
        return {}
    method = load_option("algo", name)
    kwargs = method.reward_transform_kwargs if method.reward_transform == name else None
    return OmegaConf.to_container(kwargs if kwargs is not None else method.advantage_kwargs)


def test_verls_own_config_and_loaders_take_the_printed_overrides(capsys):
    """The done-when of issue 52: verl's `ppo_trainer.yaml` with `mazerl-llm verl-args`'
    overrides loads mazerl's `compute_score` through `get_custom_reward_fn` (a right answer
    scores 1) and every mazerl estimator through verl's registry, with its gamma and
    hyperparameters (advantages as mazerl's `focal_advantages`, to 1e-6)."""
    need_verl()
    from mazerl.envs.maze import MOVE_NAMES
    from mazerl.envs.spec import MazeSpec

    maze = MazeSpec(size=8, generator="prim").sample(np.random.default_rng(0))  # 17x17 cells
    moves = [MOVE_NAMES[m] for m in maze.solution]
    cases = [  # MaxRL's ground truth; the solution, then the solution less its last move
        {"data_source": "mazerl-maxrl", "solution_str": " ".join(moves) + " DONE"},
        {"data_source": "maze", "solution_str": " ".join(moves[:-1]) + " DONE"},
    ]
    cases = [{**case, "ground_truth": sequence(maze), "extra_info": {}} for case in cases]
    printed = {}
    for i, name in enumerate(ESTIMATORS):
        algo, gamma = name.removeprefix("mazerl_"), (0.5, 1.0, 0.0)[i % 3]
        kwargs = method_kwargs(algo)
        argv = ["verl-args", "--algo", algo, "--gamma", str(gamma)]
        main(argv + [f"--algo-arg={k}={json.dumps(v)}" for k, v in kwargs.items()])
        printed[algo] = capsys.readouterr().out.split()
        assert printed[algo] == overrides(algo, gamma, kwargs)
        assert "reward.custom_reward_function.name=compute_score" in printed[algo]
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    done = subprocess.run(
        [sys.executable, "-c", VERL_CHILD, json.dumps(printed), json.dumps(cases)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(out) == sorted(printed)
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]])  # groups a and b
    for i, algo in enumerate(printed):
        expected, _ = focal_advantages(rewards, algo, (0.5, 1.0, 0.0)[i % 3], **method_kwargs(algo))
        interleaved = expected.T.reshape(-1)  # rows a, b, a, b, ...
        np.testing.assert_allclose(out[algo]["adv"], interleaved.numpy(), atol=1e-6)
        assert out[algo]["scores"] == [
            {"score": 1.0, "reason": "goal"},
            {"score": 0.0, "reason": "stopped before the goal"},
        ]


def test_verls_dataset_and_prompt_builder_read_the_chat_exports(tmp_path, capsys):
    """The tutorial's verl data (`mazerl-llm export ... --chat` to Parquet: training mazes and
    the evaluation sets) read as `main_ppo` reads it: verl's `ppo_trainer.yaml` composed with
    the data files, the model folder and the printed `verl-args`; the tokenizer from the
    folder by `hf_tokenizer`; the datasets by `create_rl_dataset` (`RLHFDataset`); each
    prompt by the Continuous Token builder of the single-turn agent loop (the tokenizer's
    chat template over the row's `raw_prompt`). Every prompt is the maze tokenizer's tokens
    of the maze's prompt text, and verl's reward function scores each row's reference
    answer 1 and that answer less its last move 0, both decoded from token ids as verl's
    reward loop decodes them. A text prompt (an export without `--chat`) makes the builder
    raise the `TypeError` the tutorial's verl command met before it exported with `--chat`."""
    need_verl()
    from hydra import compose, initialize_config_dir
    from transformers import AutoConfig
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils import hf_tokenizer
    from verl.utils.tokenizer.continuous_token_wiring import create_continuous_token_builder

    from mazerl.llm.models import maze_tokenizer, tiny_model
    from mazerl.llm.text import continuation, prompt
    from mazerl.llm.verifier import maze_of

    model = tmp_path / "model"
    tiny_model().save_pretrained(model)
    maze_tokenizer().save_pretrained(model)
    train, val, text = (tmp_path / f"{n}.parquet" for n in ("train", "eval", "text"))
    two = "eval.sets=[{name: id, num_mazes: 5}, {name: ood_dfs, generator: dfs, num_mazes: 3}]"
    main(["export", str(train), "--generator", "prim", "--size", "2", "--count", "6", "--chat"])
    main(["export", str(val), "--eval-sets", "maze.size=2", two, "--chat"])
    main(["export", str(text), "--generator", "prim", "--size", "2", "--count", "2"])
    capsys.readouterr()
    main(["verl-args", "--algo", "grpo"])
    printed = capsys.readouterr().out.split()
    data = [f"data.train_files={train}", f"data.val_files={val}"]
    data += [f"actor_rollout_ref.model.path={model}"]
    root = Path(importlib.util.find_spec("verl").submodule_search_locations[0])
    with initialize_config_dir(str(root / "trainer" / "config"), version_base=None):
        cfg = compose("ppo_trainer", overrides=[*printed, *data])
    tokenizer = hf_tokenizer(cfg.actor_rollout_ref.model.path)
    model_type = AutoConfig.from_pretrained(cfg.actor_rollout_ref.model.path).model_type
    builder = create_continuous_token_builder(tokenizer, hf_model_type=model_type)
    reward_fn = get_custom_reward_fn(cfg)
    ours = maze_tokenizer()
    sizes = {}
    for files in (cfg.data.train_files, cfg.data.val_files):
        dataset = create_rl_dataset(files, cfg.data, tokenizer, None)
        sizes[Path(files).stem] = len(dataset)
        for i in range(len(dataset)):
            row = dataset[i]
            ids = builder.build_initial_tokens(list(row["raw_prompt"]))  # the agent loop's call
            maze = maze_of(row["maze"])
            assert ids == ours(prompt(maze, "maxrl"), add_special_tokens=False)["input_ids"]
            truth = row["reward_model"]["ground_truth"]
            right = continuation(row["solution"], "maxrl")  # ' RIGHT ... DONE'
            short = right.removesuffix(" DONE").rsplit(" ", 1)[0] + " DONE"
            for answer, expected in ((right, 1.0), (short, 0.0)):
                response = tokenizer(answer, add_special_tokens=False)["input_ids"]
                decoded = tokenizer.decode([*response, tokenizer.eos_token_id],
                                           skip_special_tokens=True)  # fmt: skip
                result = reward_fn(
                    data_source=row["data_source"],
                    solution_str=decoded,
                    ground_truth=truth,
                    extra_info=row["extra_info"],
                )
                assert result["score"] == expected, (answer, result)
    assert sizes == {"train": 6, "eval": 8}
    as_text = create_rl_dataset(str(text), cfg.data, tokenizer, None)[0]["raw_prompt"]
    assert isinstance(as_text, str)
    with pytest.raises(TypeError, match=r'can only concatenate list \(not "str"\) to list'):
        builder.build_initial_tokens(as_text)
