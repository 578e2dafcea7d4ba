"""mazerl's Hydra launchers beyond one machine (the `cluster` extra): `hydra/launcher=ray_cluster`
and `ray_local` (`RayLauncher`, hydra-ray-launcher's), `slurm` and `submitit_local`
(`SubmititSlurmLauncher`, `SubmititLocalLauncher`, hydra-submitit-launcher's).

What they add to the plugins' own:

- Ray: `ray_cluster` joins a running cluster (no object-store size is passed when connecting),
  `ray_local` starts its own; a wrong address, a refused connection (Ray's token
  authentication, `RAY_AUTH_MODE`) or resources no node has end within `CONNECT_TIMEOUT_S`
  seconds in one `error:` line naming the setting, instead of waiting for ever.
- The sweep dir and `MAZERL_CACHE` are made absolute on the driver and handed to every job
  (a Ray worker runs where `ray start` ran, with that process's environment).
- Every job runs to its end: a job's user error is its recorded result
  (`mazerl.core.cli.hydra_task`), never a crashed worker, so Ray does not retry it; a crash (a
  killed worker) is retried by Ray and resumes from the job's checkpoint; a job that never
  finished is one line naming it and its log (`JobFailed`).

Hydra takes a launcher only from the `hydra_plugins` package: `hydra_plugins.mazerl_launchers`
names these classes, and the YAML files of `conf/hydra/launcher/` point at it.
"""

import logging
import os
import re
import socket
from collections.abc import Sequence
from pathlib import Path

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher as PluginRayLauncher
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import (
    LocalLauncher as PluginLocalLauncher,
)
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import (
    SlurmLauncher as PluginSlurmLauncher,
)
from omegaconf import DictConfig, OmegaConf, open_dict

from mazerl.core.errors import JobFailed, UserError

log = logging.getLogger(__name__)

# seconds a Ray driver waits for the cluster's address to answer (the whole connection, with
# Ray's own retries, is bounded by the same: `ray.init` is told so)
CONNECT_TIMEOUT_S = 10
# keys of `hydra.launcher.ray.remote` that ask for resources, by Ray's resource name
RESOURCES = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}


def job_env() -> dict[str, str]:
    """The environment variables a job must see as the driver does: `MAZERL_CACHE` (the
    base-model cache), made absolute here. Empty when it is not set."""
    cache = os.environ.get("MAZERL_CACHE")
    return {"MAZERL_CACHE": str(Path(cache).expanduser().absolute())} if cache else {}


def absolute_sweep_dir(config: DictConfig) -> Path:
    """The sweep dir of `config` (`hydra.sweep.dir`), absolute: a relative one is taken from
    the driver's working directory, where `multirun.yaml` goes."""
    return Path(str(config.hydra.sweep.dir)).expanduser().absolute()


def _ray_address_setting(address: str | None) -> str:
    """How a user names the address: the setting and where its value came from."""
    source = " (from RAY_ADDRESS)" if address and address == os.environ.get("RAY_ADDRESS") else ""
    return f"hydra.launcher.ray.init.address={address}{source}"


def connect_ray(init: dict) -> None:
    """`ray.init(**init)` with mistakes as `UserError`s naming the setting: an address where
    nothing answers within `CONNECT_TIMEOUT_S` seconds, no cluster to join (`auto`), a refused
    connection (token authentication: `RAY_AUTH_MODE`, `RAY_AUTH_TOKEN`), a setting Ray
    rejects. Joining a cluster, the driver turns on token authentication where a token is at
    hand, as `ray start` does. `address: local` starts a Ray instance of its own."""
    import ray

    address = init.get("address")
    where = _ray_address_setting(address)
    if address and ":" in address and "://" not in address:
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except (OSError, ValueError) as e:
            raise UserError(
                f"{where}: nothing answers there within {CONNECT_TIMEOUT_S} s ({e}); the head "
                "node's `ray start --head` prints the address to use"
            ) from None
    if address and address != "local":  # Ray's own retries (about 20 s) end sooner, quietly
        os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(CONNECT_TIMEOUT_S))
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
        # `ray start`'s rule on the driver too: token authentication where a token is at hand
        # (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token) and RAY_AUTH_MODE is unset;
        # a cluster without authentication accepts such a driver as well
        from ray._private.authentication import authentication_token_setup as auth

        auth.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    auth = (
        "the cluster refused the connection: it uses token authentication, which needs its "
        "token on the driver (~/.ray/auth_token, RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH) and "
        "RAY_AUTH_MODE unset or token"
    )
    try:
        ray.init(**init)
    except ray.exceptions.AuthenticationError:
        raise UserError(f"{where}: {auth}") from None
    except ConnectionError as e:
        if "InvalidAuthToken" in str(e.__cause__):
            raise UserError(f"{where}: {auth}") from None
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"{where}: {first}") from None
    except (ValueError, TypeError, RuntimeError) as e:
        raise UserError(f"hydra.launcher.ray.init: {str(e).splitlines()[0]}") from None


def check_resources(remote: dict, nodes: list[dict]) -> None:
    """Raise `UserError` when no node of the cluster (`nodes`: the `Resources` of each live
    node, as `ray.nodes()` gives them) has what one job asks for (`remote`: the keys of
    `hydra.launcher.ray.remote`; a task asks for 1 CPU when `num_cpus` is not given): such a
    job would wait for ever. Names the first setting no node meets and the largest offer."""
    wants = {RESOURCES[k]: (k, v) for k, v in remote.items() if k in RESOURCES and v}
    wants.setdefault("CPU", ("num_cpus", 1))
    for name, amount in (remote.get("resources") or {}).items():
        wants[name] = (f"resources.{name}", amount)
    for name, (key, amount) in wants.items():
        largest = max((node.get(name, 0) for node in nodes), default=0)
        if amount > largest:
            raise UserError(
                f"hydra.launcher.ray.remote.{key}={amount}: no node of the Ray cluster has that "
                f"much {name} (the largest has {largest:g}); a job asking for it would wait for "
                "ever"
            )
    if not any(all(node.get(n, 0) >= a for n, (_, a) in wants.items()) for node in nodes):
        raise UserError(
            f"hydra.launcher.ray.remote: no node of the Ray cluster has all of "
            f"{ {k: a for k, a in wants.values()} } at once"
        )


def run_job_on_ray(hydra_context, sweep_config, task_function, singleton_state) -> JobReturn:
    """One job in a Ray worker: Hydra's `run_job` (a job's error is its recorded result)."""
    from hydra_plugins.hydra_ray_launcher._launcher_util import _run_job

    return _run_job(hydra_context, sweep_config, task_function, singleton_state)


class RayLauncher(PluginRayLauncher):
    """hydra-ray-launcher's launcher with the checks and paths above (`hydra/launcher=ray_cluster`,
    `ray_local`)."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> list:
        """Submit every job as a Ray task, then wait for all of them; a job whose worker died
        more often than Ray retries it is a failed result (`JobFailed`)."""
        import ray

        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = absolute_sweep_dir(self.config)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        log.info(f"Ray launcher: {len(job_overrides)} jobs, sweep dir {sweep_dir}")
        connect_ray(OmegaConf.to_container(self.ray_cfg.init, resolve=True))
        remote = OmegaConf.to_container(self.ray_cfg.remote, resolve=True)
        check_resources(remote, [n["Resources"] for n in ray.nodes() if n["Alive"]])
        runtime_env = dict(remote.pop("runtime_env", None) or {})
        runtime_env["env_vars"] = {**runtime_env.get("env_vars", {}), **job_env()}
        task = ray.remote(**remote, runtime_env=runtime_env)(run_job_on_ray)
        jobs = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
            config = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
            with open_dict(config):
                config.hydra.sweep.dir = str(sweep_dir)
                config.hydra.job.id, config.hydra.job.num = f"job_id_for_{idx}", idx
            ref = task.remote(self.hydra_context, config, self.task_function, Singleton.get_state())
            jobs.append((ref, list(overrides), sweep_dir / str(config.hydra.sweep.subdir)))
        return [self._result(ref, overrides, folder) for ref, overrides, folder in jobs]

    @staticmethod
    def _result(ref, overrides: list[str], folder: Path) -> JobReturn:
        """The job's own result, or a failed one naming the job and its log."""
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayError as e:
            why = str(e).strip().splitlines()[0]
            failed = JobReturn(overrides=overrides, status=JobStatus.FAILED)
            failed.return_value = JobFailed(
                f"job {' '.join(overrides)} did not finish ({why}); its log: {folder}/*.log"
            )
            return failed


class _SubmititJobs:
    """What mazerl adds to the submitit launchers: `MAZERL_CACHE` absolute for the jobs, and a
    job that did not finish (killed, out of time) as one line naming its log."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> list:
        from submitit.core.utils import UncompletedJobError

        os.environ.update(job_env())  # a local job inherits it, sbatch exports it
        try:
            return super().launch(job_overrides, initial_job_idx)
        except UncompletedJobError as e:  # its message: "Job ID (task: T) with path RESULT ..."
            found = re.search(r"Job (\S+) \(task: (\d+)\) with path (\S+)", str(e))
            state = re.search(r"\(state: ([^)]*)\)", str(e))
            if found is None:
                raise
            job, task, result = found.groups()
            logs = Path(result).parent / f"{job}_{task}_log"
            raise JobFailed(
                f"submitit job {job} did not finish (state: {state[1] if state else '?'}); its "
                f"output: {logs}.out and .err"
            ) from None


class SubmititLocalLauncher(_SubmititJobs, PluginLocalLauncher):
    """hydra-submitit-launcher's local launcher (`hydra/launcher=submitit_local`)."""


class SubmititSlurmLauncher(_SubmititJobs, PluginSlurmLauncher):
    """hydra-submitit-launcher's SLURM launcher (`hydra/launcher=slurm`)."""
