"""The sweep folders a summary reads, checked before anything heavy loads (`mazerl-summarize`
calls `check_folders` before it imports pandas, scipy and matplotlib)."""

from pathlib import Path

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
