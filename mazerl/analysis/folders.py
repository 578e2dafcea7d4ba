"""The sweep folders a summary reads, checked before anything heavy loads (`mazerl-summarize`
calls `check_folders` before it imports pandas, scipy and matplotlib)."""

import itertools
from pathlib import Path

import yaml

from mazerl.core.errors import UserError


def run_dirs(sweep: Path) -> list[Path]:
    """Every run folder under `sweep` (a folder holding `.hydra/`, whatever the launcher), in
    path order."""
    return [hydra_dir.parent for hydra_dir in sorted(Path(sweep).rglob(".hydra"))]


def check_folders(folders: tuple[Path, ...], out: Path | None, step: int | None) -> Path:
    """Raise `UserError` naming the first mistake (a folder that does not exist, several
    folders without `out`, a negative `step`, no run under any folder); returns where the
    summary goes (`out`, else the one folder given)."""
    for folder in folders:
        if not folder.is_dir():
            raise UserError(f"sweep dir {folder} does not exist")
    if out is None and len(folders) > 1:
        raise UserError("several sweep dirs: name the folder for the summary with --out DIR")
    if step is not None and step < 0:
        raise UserError(f"--at-step {step}: must be a step >= 0 at which the runs evaluated")
    if not any(run_dirs(f) for f in folders):
        where = ", ".join(map(str, folders))
        raise UserError(f"no runs under {where} (looked for folders with a .hydra/ config)")
    return Path(out) if out is not None else folders[0]


def launched_jobs(sweep: Path) -> list[list[str]]:
    """The jobs of the sweep's last launch, each as its overrides (`key=value`), expanded from
    its `multirun.yaml` (the preset's `hydra.sweeper.params`, then the command line's
    overrides) as Hydra's basic sweeper does: a key given twice takes its later value in its
    first place, and the jobs are the product of the keys' values in that order; empty
    without a `multirun.yaml`."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    path = Path(sweep) / "multirun.yaml"
    if not path.is_file():
        return []
    hydra = (yaml.safe_load(path.read_text()) or {}).get("hydra", {})
    params = (hydra.get("sweeper") or {}).get("params") or {}
    given = [f"{k}={v}" for k, v in params.items()] + list(hydra["overrides"]["task"])
    values: dict[str, list[str]] = {}  # key -> its `key=value` of each job
    for override in OverridesParser.create().parse_overrides(given):
        key = override.get_key_element()
        if override.is_sweep_override():
            values[key] = [f"{key}={v}" for v in override.sweep_string_iterator()]
        else:
            values[key] = [f"{key}={override.get_value_element_as_str()}"]
    return [list(job) for job in itertools.product(*values.values())]


def unfinished_jobs(sweep: Path) -> list[str]:
    """One line per job of the sweep's last launch (`launched_jobs`) with no finished run
    under `sweep` (no `metrics.json` in the folder whose `.hydra/overrides.yaml` holds its
    overrides): failed, running or never started. Each names the job by its swept overrides
    (those whose values differ between the jobs; all of them for a single job) and its log
    (`log_line`), or says that the job has no folder."""
    jobs = launched_jobs(sweep)
    folders = {}
    for run in run_dirs(sweep):
        saved = run / ".hydra" / "overrides.yaml"
        if saved.is_file():
            folders[frozenset(yaml.safe_load(saved.read_text()) or [])] = run
    values = {}  # key -> the values the jobs give it
    for o in (o for job in jobs for o in job):
        values.setdefault(o.partition("=")[0], set()).add(o)
    lines = []
    for job in jobs:
        name = " ".join(o for o in job if len(values[o.partition("=")[0]]) > 1) or " ".join(job)
        folder = folders.get(frozenset(job))
        if folder is None:
            lines.append(f"- {name}: not started (no folder)")
        elif not (folder / "metrics.json").exists():
            lines.append(f"- {name}: {log_line(folder)}")
    return lines


def log_line(folder: Path) -> str:
    """A run folder's log (its `*.log`) and the log's last error line, else its last line:
    `<path>: <line>`; `<folder> (no log)` without one."""
    logs = sorted(Path(folder).glob("*.log"))
    if not logs:
        return f"{folder} (no log)"
    lines = [line for line in logs[0].read_text().splitlines() if line.strip()]
    errors = [line for line in lines if "][ERROR] " in line]
    return f"{logs[0]}: {(errors or lines or ['(empty)'])[-1]}"
