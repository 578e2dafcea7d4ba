"""`summarize(*folders)`: the tables and figures of one sweep, or of runs from several
folders compared together (paired where they match)."""

import shlex
from dataclasses import replace
from pathlib import Path

from mazerl.analysis.claims import summarize_claims
from mazerl.analysis.convergence import convergence, convergence_markdown, entry_moving
from mazerl.analysis.figures import (
    Output,
    lacking_training_data,
    plot_categorical,
    plot_maze,
    plot_routes,
)
from mazerl.analysis.folders import check_folders
from mazerl.analysis.leaderboard import (
    board_markdown,
    board_rows,
    measure,
    missing_markdown,
    place,
    plot_board,
    varies_methods,
    write_board_csv,
)
from mazerl.analysis.power import power_markdown
from mazerl.analysis.runs import Run, agree, at_step, config_value, evaluations, find_runs
from mazerl.analysis.study import Summary, study_pairing, study_sections
from mazerl.analysis.tables import aggregate, markdown, paired_comparisons, write_csv
from mazerl.core.provenance import code_identity, short_code


def summarize(*folders: Path, out: Path | None = None, step: int | None = None) -> str:
    """Write `summary.md`, `summary.csv` and the figures into `out` (default: the one folder
    given) for every run under `folders`, and for a sweep of 3 or more methods (`algo`) the
    leaderboard (`mazerl.analysis.leaderboard`: its section, leaderboard.csv and
    leaderboard.png; the runs of a study's pairing protocol, which a folder's `study.yaml`
    names, from one folder or several, get it paired by its unit: `place`), then the sections
    the folders' `study.yaml` names
    (`mazerl.analysis.study`), and where the (first) folder's `study.yaml` names a claims
    file, `claims.md` and `claims.csv` (`mazerl.analysis.claims`); returns the markdown.
    summary.md names the code the runs ran at (`code_line`), each figure's footer the command
    and the code that drew it. With `step`, every run is read as it stood at that evaluation
    (`at_step`): longer runs count as ended there, runs without it as unfinished. Runs of
    several folders are matched as `gather` says."""
    folders = tuple(Path(f) for f in folders)
    out = check_folders(folders, out, step)
    sections = study_sections(folders)
    runs, notes = gather(folders, step)
    runs, placement = place(runs, study_pairing(folders), step)
    out.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["mazerl-summarize", *map(str, folders)])
    command += f" --out {out}" if len(folders) > 1 else ""
    command += f" --at-step {step}" if step is not None else ""
    dest = Output(out, command, short_code(code_identity()))
    cols, rows = aggregate(runs)
    paired = paired_comparisons(runs, cols) if rows else []
    trends = convergence(runs, cols, paired) if rows else {"groups": {}, "paired": []}
    evaluated_only = evaluation_only(runs)
    for i, e in enumerate(paired):
        sets = {c.set for c in e["diffs"]}
        if not evaluated_only:  # convergence is of training curves
            e["moving"] = {s: entry_moving(trends, i, e, s) for s in sets}
    maze = any(c.source == "eval" for c in cols)
    on_board = maze and (placement is not None or varies_methods(runs))
    board = measure(board_rows(runs, placement), cols) if on_board else []
    extra = notes + board_markdown(board, cols, placement)
    extra += missing_markdown(runs, board) if board else []
    summary = Summary(runs, cols, paired, trends, dest, folders)
    extra += convergence_markdown(trends, paired) + power_markdown(paired, cols)
    for section in sections:
        extra += section(summary)
    if rows and not evaluated_only and lacking_training_data([r for r in runs if r.metrics]):
        extra += [
            "These runs have no training scalars (train.csv, or TensorBoard events, which are "
            "not committed): curves.png, routes.png and behaviour.png are kept as drawn when "
            "the events existed, or drawn without their training panels.",
            "",
        ]
    text = markdown(cols, rows, runs, paired, extra)
    if evaluated_only:
        text = EVALUATION_ONLY + "\n\n" + text
    if step is not None:
        text = f"Every run as it stood at step {step:,} (`{command}`).\n\n" + text
    (out / "summary.md").write_text(text)
    write_csv(out / "summary.csv", cols, rows, paired)
    if board:
        write_board_csv(out / "leaderboard.csv", board)
        plot_board(dest, board, cols)
    summarize_claims(folders[0], out)  # claims.md and claims.csv where a study.yaml names them
    if rows:
        if maze:
            plot_maze(dest, runs, cols)
            if any(c.source == "routes" for c in cols):
                plot_routes(dest, runs)
        else:
            plot_categorical(dest, runs, cols)
    return text


EVALUATION_ONLY = (
    "An evaluation-only sweep: each run evaluated a model as it is (`mazerl-llm eval`: exact "
    "and sampled pass@k on every set), none trained; the runs are grouped by `model=NAME` "
    "and each is paired with `model=base` maze by maze."
)


def evaluation_only(runs: list[Run]) -> bool:
    """Whether every finished run only evaluated a model (`mazerl-llm eval` records
    `about.command = eval` in its metrics.json): its summary then says so and shows nothing
    of training (no still-moving column, no note on training scalars)."""
    read = [r for r in runs if r.metrics is not None]
    return bool(read) and all((r.metrics.get("about") or {}).get("command") == "eval" for r in read)


def gather(folders: tuple[Path, ...], step: int | None = None) -> tuple[list[Run], list[str]]:
    """The runs of every folder (as of evaluation `step`, if given) and the markdown lines
    saying what was matched. With several folders, runs are named without `experiment` (a
    preset's name, not a setting: the long study and the leaderboard share their GRPO runs),
    and a run that lacks an override key another folder's runs have gets it from its config
    (`config_value`: `algo=grpo` for a sweep that left GRPO at its default). Where one set of
    overrides then occurs in more than one folder and every such run agrees with the one read
    furthest at each evaluation they share (`agree`: the same run launched twice), that run
    is kept once; otherwise every run gets the override `folder=<its folder>`, so that no run
    hides another."""
    by_folder = [(f, find_runs(f)) for f in folders]
    if step is not None:
        by_folder = [(f, [at_step(r, step) for r in runs]) for f, runs in by_folder]
    if len(folders) == 1:
        return [r for _, rs in by_folder for r in rs], []
    by_folder = [  # `experiment`: a preset's name, not a setting: two presets can be one run
        (f, [replace(r, overrides={k: v for k, v in r.overrides.items() if k != "experiment"})
             for r in rs])
        for f, rs in by_folder
    ]  # fmt: skip
    keys = {k for _, rs in by_folder for r in rs for k in r.overrides}
    by_folder = [(f, [_completed(r, keys) for r in rs]) for f, rs in by_folder]
    runs = [r for _, rs in by_folder for r in rs]
    same: dict[tuple, list[Run]] = {}
    for r in runs:
        same.setdefault(tuple(sorted(r.overrides.items())), []).append(r)
    repeated = [(max(rs, key=lambda r: len(evaluations(r))), rs) for rs in same.values()]
    repeated = [(best, [r for r in rs if r is not best]) for best, rs in repeated if len(rs) > 1]
    shared = [[agree(best, r) for r in rest] for best, rest in repeated]
    if not all(all(n) for n in shared):
        runs = [
            replace(r, overrides=r.overrides | {"folder": str(f)})
            for f, rs in by_folder
            for r in rs
        ]
        return runs, []
    notes = [
        f"- {best.path} also ran as {', '.join(str(r.path) for r in rest)}: the same exact "
        f"per-maze values at each of the {min(n)} evaluations they share; counted once"
        for (best, rest), n in zip(repeated, shared, strict=True)
    ]
    dropped = {id(r) for _, rest in repeated for r in rest}
    runs = [r for r in runs if id(r) not in dropped]
    return runs, ["Runs found in more than one folder:", "", *notes, ""] if notes else []


def _completed(run: Run, keys: set[str]) -> Run:
    """`run` with each override key of `keys` it lacks read from its config (`config_value`)."""
    found = {k: config_value(run, k) for k in keys - run.overrides.keys()}
    return replace(run, overrides=run.overrides | {k: v for k, v in found.items() if v is not None})
