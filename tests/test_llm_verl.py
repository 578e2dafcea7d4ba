"""mazerl's estimators in verl's advantage registry, across a process boundary as verl runs
them: its trainer and workers are Ray actors, fresh processes that get only the environment
variables of Ray's runtime environment. verl is not installed here (it is not part of the
extra, see docs/tutorials/language-models.md), so a stand-in of the two pieces of verl this
touches is written to a temporary folder: `verl/__init__.py` importing the modules named by
`VERL_USE_EXTERNAL_MODULES` (as verl 0.9.1's does) and `verl.trainer.ppo.core_algos` with
verl's registry functions. Where verl is installed, the same child runs against it too."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mazerl.apps.llm import main
from mazerl.llm.objective import estimator_names
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


def verl_paths(kind: str, stand_in: Path) -> list[Path]:
    if kind == "verl" and importlib.util.find_spec("verl") is None:
        pytest.skip("verl is not installed")
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
        "custom_reward_function: {path: null, name: compute_score}\n"
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
    assert cfg.custom_reward_function.path == "pkg://mazerl.llm.verifier"
    main(["verl-args", "--algo", "passk", "--algo-arg", "k=4"])
    passk = capsys.readouterr().out.split()
    assert "+ray_kwargs.ray_init.runtime_env.env_vars.MAZERL_ADVANTAGE_KWARGS='{\"k\":4}'" in passk
    with initialize_config_dir(str(tmp_path), version_base=None):
        cfg = compose("ppo_trainer", overrides=passk)
    assert cfg.ray_kwargs.ray_init.runtime_env.env_vars.MAZERL_ADVANTAGE_KWARGS == '{"k":4}'
    for argv, message in (
        (["--algo", "ppo"], "unknown advantage estimator 'ppo'"),
        (["--algo", "passk"], "advantage estimator 'passk' needs the argument k"),
        (["--algo-arg", "k=4"], "advantage estimator 'grpo' takes no argument 'k'"),
        (["--gamma", "-1"], "focal gamma must be a finite number >= 0, got -1.0"),
    ):
        with pytest.raises(SystemExit):
            main(["verl-args", *argv])
        assert message in capsys.readouterr().err
