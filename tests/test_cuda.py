"""The device-independent parts on CUDA: stepper, generation, scoring, the update and a short
training run agree with the CPU. Skipped without a CUDA device, except the check that
experiments/gpu_check.sh refuses to run there."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import ROOT, metrics

from mazerl.algos import AlgoConfig
from mazerl.envs.batch import MazeBatch
from mazerl.envs.spec import MazeSpec
from mazerl.policy import build_policy
from mazerl.policy.gru import GruConfig
from mazerl.policy.tokens import Prompts
from mazerl.policy.transformer import TransformerConfig
from mazerl.rollout import ROW_FIELDS, Rollouts, generate, score
from mazerl.train.update import update

CUDA = torch.device("cuda")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
POLICIES = [
    GruConfig(hidden=32, encoder_layers=3),
    TransformerConfig(hidden=32, layers=2, ffn=64),
]
TRAIN_CFG = SimpleNamespace(
    ppo_epochs=1, minibatches=1, temperature=1.0, grad_clip=1.0, skip_zero_advantage=True
)


@pytest.fixture(autouse=True)
def exact_float32():
    """Full float32 matmuls and convolutions (no TF32), so CUDA and CPU agree to rounding."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def mazes(count: int, size: int = 4) -> list:
    return [MazeSpec(size=size).sample(np.random.default_rng(i)) for i in range(count)]


def to_device(r: Rollouts, device) -> Rollouts:
    """The same rollouts with every tensor on `device`."""
    moved = {f: getattr(r, f).to(device) for f in ROW_FIELDS}
    prompts = Prompts(r.prompts.cells.to(device), r.prompts.start.to(device))
    return dataclasses.replace(r, prompts=prompts, **moved)


def policies(cfg) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The same weights on CPU and on CUDA."""
    torch.manual_seed(0)
    cpu = build_policy(cfg)
    gpu = build_policy(cfg).to(CUDA)
    gpu.load_state_dict(cpu.state_dict())
    return cpu, gpu


@needs_cuda
def test_stepper_on_cuda_matches_cpu_step_for_step():
    batch = mazes(64, size=5)
    cpu, gpu = MazeBatch(batch), MazeBatch(batch, device=CUDA)
    rng = np.random.default_rng(0)
    for _ in range(40):
        actions = torch.as_tensor(rng.integers(0, 5, len(batch)))  # 4 = stop
        a, b = cpu.step(actions), gpu.step(actions.to(CUDA))
        for field in ("reward", "terminated", "truncated", "event", "route"):
            assert torch.equal(getattr(a, field), getattr(b, field).cpu()), field
    assert torch.equal(cpu.pos, gpu.pos.cpu()) and torch.equal(cpu.steps, gpu.steps.cpu())
    assert cpu.done.all()  # 40 random moves end every episode of a 5x5-cell maze


@needs_cuda
@pytest.mark.parametrize("cfg", POLICIES, ids=lambda c: c.name)
def test_rollouts_generated_on_cuda_are_scored_as_the_cpu_stepper_scores_them(cfg):
    _, policy = policies(cfg)
    batch = mazes(8)
    r = generate(policy, batch, 4, generator=torch.Generator(CUDA).manual_seed(0), device=CUDA)
    assert r.actions.device.type == r.reward.device.type == "cuda"
    # replay the sampled actions on the CPU stepper: the same rewards, events and lengths
    replay = MazeBatch([m for m in batch for _ in range(4)])
    for t in range(r.actions.shape[1]):
        replay.step(r.actions[:, t].cpu())
    assert torch.equal(replay.success.float(), r.reward.cpu())
    assert torch.equal(replay.event, r.event.cpu())
    assert torch.equal(replay.steps, r.length.cpu())
    # the sampling-time log-probs are the teacher-forced ones
    logp, _ = score(policy, r)
    torch.testing.assert_close(logp.detach(), r.logp, atol=2e-5, rtol=1e-4)


@needs_cuda
@pytest.mark.parametrize("cfg", POLICIES, ids=lambda c: c.name)
def test_score_and_one_update_on_cuda_match_cpu(cfg):
    cpu, gpu = policies(cfg)
    r = generate(cpu, mazes(8), 4, generator=torch.Generator().manual_seed(1))
    logp_cpu, ent_cpu = score(cpu, r)
    logp_gpu, ent_gpu = score(gpu, to_device(r, CUDA))
    torch.testing.assert_close(logp_gpu.detach().cpu(), logp_cpu.detach(), atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(ent_gpu.detach().cpu(), ent_cpu.detach(), atol=2e-5, rtol=1e-4)
    # one clipped update with SGD at lr 1: each weight moves by its (clipped) gradient
    advantages = torch.randn(len(r.reward), generator=torch.Generator().manual_seed(2))
    moved = []
    for policy, rollouts in ((cpu, r), (gpu, to_device(r, CUDA))):
        before = [p.detach().clone() for p in policy.parameters()]
        stats, skipped = update(
            policy, None, torch.optim.SGD(policy.parameters(), lr=1.0), rollouts,
            advantages.to(rollouts.reward.device), AlgoConfig(), TRAIN_CFG, seed=0, it=0,
        )  # fmt: skip
        assert skipped == 0 and stats["grad_norm"] > 0
        deltas = [p.detach() - q for p, q in zip(policy.parameters(), before, strict=True)]
        moved.append(torch.cat([d.flatten().cpu() for d in deltas]))
    torch.testing.assert_close(moved[1], moved[0], atol=1e-5, rtol=1e-3)


@needs_cuda
def test_two_iterations_on_cuda_then_on_cpu_from_the_cuda_trained_base(train, tmp_path):
    small_eval = ["train.iterations=2", "eval.n=8", "eval.n_during=8", "eval.exact_ks=[1,8]"]
    _, gpu_run = train("device=cuda", *small_eval, run_dir=tmp_path / "cuda")
    out, cpu_run = train("device=cpu", *small_eval, run_dir=tmp_path / "cpu")
    assert "base model: using the cached" in out.stdout + out.stderr  # trained on CUDA
    gpu, cpu = metrics(gpu_run), metrics(cpu_run)
    assert gpu["device"].startswith("cuda") and cpu["device"] == "cpu"
    assert gpu["iterations"] == cpu["iterations"] == 2
    assert gpu["base"] == cpu["base"]  # the same base model and its stored evaluation
    for m in (gpu, cpu):
        assert 0 <= m["train"]["reward_mean"] <= 1 and np.isfinite(m["train"]["loss"])
        assert 0 <= m["final"]["eval/id/pass@1"] <= m["final"]["eval/id/pass@8"] <= 1


def test_gpu_check_refuses_without_cuda_in_one_line(tmp_path):
    """With no visible device the script stops before any work: exit 2, one `error:` line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPU_CHECK_", "MAZERL_BIN"))}
    work = tmp_path / "work"
    out = subprocess.run(
        ["bash", str(ROOT / "experiments" / "gpu_check.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **env,
            "CUDA_VISIBLE_DEVICES": "",
            "GPU_CHECK_DIR": str(work),
            "MAZERL_BIN": str(Path(sys.executable).parent),
        },  # this interpreter, any venv
    )
    assert out.returncode == 2
    assert out.stdout == "" and not work.exists()
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: experiments/gpu_check.sh needs a CUDA GPU, and torch ")
    assert lines[0].endswith("sees no CUDA device; nothing was run")
