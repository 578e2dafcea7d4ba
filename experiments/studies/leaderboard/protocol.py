"""The leaderboard protocol (conf/experiment/leaderboard.yaml, docs/results/leaderboard.md,
docs/tutorials/new-method.md): a run that chose a leaderboard cell (`cell=n32`, `cell=n8`:
conf/cell/) is paired with GRPO's run of the same bank model, not of the same seed, from one
folder or several, and a pair whose two runs ran on different kinds of CPU is marked (their RL
rounding differs). The study's `study.yaml` names it (`pairing:
../../studies/leaderboard/protocol.py:PROTOCOL`); `mazerl.analysis.leaderboard` pairs the runs
and tabulates them.
"""

from mazerl.analysis.leaderboard import Pairing, bank_model
from mazerl.analysis.runs import Run
from mazerl.train.bank import bank_index


def bank_unit(run: Run) -> tuple[str | None, str]:
    """The bank model `run` started from (`bank_model` on the installed bank's index), or
    None and why it cannot be placed."""
    return bank_model(run, bank_index())


PROTOCOL = Pairing(
    group="cell",
    unit_of=bank_unit,
    unit="bank model",
    units="bank models",
    paired_by=(
        "Each run paired by the bank model it started from (its metrics.json's base model: "
        "cache key and sha256 those of the bank's file)."
    ),
    cross_note="paired by bank model across CPU kinds: RL rounding differs",
)
