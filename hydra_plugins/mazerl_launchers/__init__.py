"""mazerl's launchers for Ray and SLURM, where Hydra looks for them: Hydra takes a launcher only
from a class defined under the `hydra_plugins` package, so each is named here; the work is
`mazerl.apps.launchers`. Defined with the `cluster` extra only, so that Hydra's scan of its
plugins finds nothing missing without it."""

from importlib.util import find_spec

EXTRA = ("ray", "hydra_plugins.hydra_ray_launcher", "hydra_plugins.hydra_submitit_launcher")

if all(find_spec(name) for name in EXTRA):
    from mazerl.apps import launchers

    class RayLauncher(launchers.RayLauncher):
        """`hydra/launcher=ray_cluster` and `ray_local`."""

    class SubmititLocalLauncher(launchers.SubmititLocalLauncher):
        """`hydra/launcher=submitit_local`."""

    class SubmititSlurmLauncher(launchers.SubmititSlurmLauncher):
        """`hydra/launcher=slurm`."""
