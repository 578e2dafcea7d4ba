"""Measure every bank model before RL and write `mazerl/bank/features.json`: exact pass@k,
the per-maze success probabilities' quantiles and tail fractions, the theory's predicted focal
gain score and the policy entropy (the bank study, `experiments/studies/bank/sections.py`,
defines each). A study's `mazerl-summarize` reads the file instead of loading the models.

    python experiments/bank_features.py          # about 15 s of one core a model
"""

import argparse
import json
from pathlib import Path

from hydra import compose, initialize_config_dir

from mazerl.analysis.study import load_module
from mazerl.apps.schema import register_configs, typed
from mazerl.core.config import CONF_DIR
from mazerl.train.bank import BANK_DIR


def main() -> None:
    bank = load_module(Path(__file__).parent / "studies" / "bank" / "sections.py")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=16, help="samples per maze for the entropy")
    args = ap.parse_args()
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=maze_long"])
    doc = bank.bank_features(typed(cfg), BANK_DIR, args.samples)
    (BANK_DIR / bank.FEATURES).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(doc['models'])} bank models -> {BANK_DIR / bank.FEATURES}")


if __name__ == "__main__":
    main()
