"""A study's `study.yaml` beside its runs, and the summary sections it names.

The library's summary knows no study: the tables, paired differences, convergence, power and
leaderboard of any sweep. A study adds its claims (`mazerl.analysis.claims`) and its own
sections (a comparison with published values, features of its base models, ...) by naming
them in `study.yaml` in its sweep folder:

    # experiments/runs/<sweep>/study.yaml
    claims: ../../studies/mine/claims.yaml          # relative to this folder
    sections:
      - ../../studies/mine/sections.py:my_section   # a file, relative to this folder
      - my_package.sections:my_section              # or an importable module

Each entry names a function `section(summary: Summary) -> list[str]`: the markdown lines it
adds (none: nothing to say for these runs); it may draw figures into `summary.dest.folder`.
`summarize` appends the sections after its own, in the order listed; with several folders,
each section once, in the order met.

A study whose runs are paired by another unit than the seed names its protocol, a
`mazerl.analysis.leaderboard.Pairing`, the same way (`pairing:
../../studies/leaderboard/protocol.py:PROTOCOL`); with several folders, the first one named.
"""

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import yaml

from mazerl.analysis.figures import Output
from mazerl.analysis.runs import Run
from mazerl.core.errors import UserError
from mazerl.eval.metric_names import Metric

STUDY_FILE = "study.yaml"


@dataclass(frozen=True)
class Summary:
    """What a section reads: the `runs` (records) as the summary reads them, the tabulated
    columns `cols`, the `paired` comparisons (`paired_comparisons`), the convergence `trends`
    (`convergence`), where the figures go (`dest`) and the sweep `folders`."""

    runs: list[Run]
    cols: list[Metric]
    paired: list[dict]
    trends: dict
    dest: Output
    folders: tuple[Path, ...]


Section = Callable[[Summary], list[str]]


def load_module(path: Path) -> ModuleType:
    """The Python file at `path` as a module (loaded once per process)."""
    path = Path(path).resolve()
    name = "mazerl_study_" + "_".join(path.with_suffix("").parts[-3:]).replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: its dataclasses look themselves up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_section(entry: str, folder: Path, where: str = STUDY_FILE, what: str = "section"):
    """The function (or, for a `pairing`, the object) `entry` names: `FILE.py:name` (FILE
    relative to `folder`) or `module:name`; a `UserError` naming `where` and the entry when it
    cannot be found."""
    target, _, function = str(entry).rpartition(":")
    if not target or not function:
        raise UserError(f"{where}: {what} {entry!r} is not 'file.py:NAME' or 'module:NAME'")
    if target.endswith(".py"):
        path = folder / target
        if not path.is_file():
            raise UserError(f"{where}: {what} {entry!r}: no file {path}")
        module = load_module(path)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise UserError(f"{where}: {what} {entry!r}: cannot import {target} ({e})") from None
    found = getattr(module, function, None)
    if found is None or (what == "section" and not callable(found)):
        kind = "function " if what == "section" else ""
        raise UserError(f"{where}: {what} {entry!r}: {target} has no {kind}{function}")
    return found


KEYS = ("claims", "sections", "pairing")  # what a study.yaml may say


def study_spec(folder: Path) -> dict:
    """The `study.yaml` of sweep `folder` as a mapping (empty without one): `claims` (the
    claims file, `mazerl.analysis.claims`), `sections` and `pairing` (this module); one
    `UserError` line
    where it is not YAML, not a mapping or has another key."""
    path = Path(folder) / STUDY_FILE
    if not path.is_file():
        return {}
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise UserError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: must be a mapping with keys {', '.join(KEYS)}")
    unknown = sorted(set(doc) - set(KEYS))
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    return doc


def study_sections(folders: tuple[Path, ...]) -> list[Section]:
    """The sections the `study.yaml` of each folder names (a folder without one: none), each
    once, in the order met."""
    out: dict[Section, None] = {}
    for folder in folders:
        path = Path(folder) / STUDY_FILE
        entries = study_spec(folder).get("sections", [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise UserError(f"{path}: 'sections' must be a list of 'file.py:function' entries")
        for entry in entries:
            out.setdefault(load_section(entry, path.parent, str(path)), None)
    return list(out)


def study_pairing(folders: tuple[Path, ...]):
    """The `Pairing` (`mazerl.analysis.leaderboard`) the first folder's `study.yaml` that
    names one names (`pairing: FILE.py:NAME`); None where none does."""
    for folder in folders:
        entry = study_spec(folder).get("pairing")
        if entry is not None:
            from mazerl.analysis.leaderboard import Pairing

            path = Path(folder) / STUDY_FILE
            found = load_section(str(entry), path.parent, str(path), "pairing")
            if not isinstance(found, Pairing):
                kind = type(found).__name__
                raise UserError(f"{path}: pairing {entry!r} is a {kind}, not a Pairing")
            return found
    return None
