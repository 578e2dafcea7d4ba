"""mazerl for language-model trainers (the optional extra `pip install mazerl[llm]`).

The same mazes, verifier and objectives for TRL and verl users, and exact pass@k for any
Hugging Face causal LM:

- `text`: mazes as prompts and answers, in MaxRL's token grid (`maxrl`) or a plain-text
  format a chat model can read (`plain`), and how each format's answers are read;
- `verifier`: mazerl's reward rule on model text, as TRL's `reward_funcs` and verl's
  `compute_score`;
- `export`: maze sources -> JSONL / Parquet datasets (Hugging Face `datasets`);
- `objective`: mazerl's registered advantage estimators and focal weight on `[P, G]` rewards;
- `trainer`: `FocalGRPOTrainer`, TRL's `GRPOTrainer` with those advantages;
- `verl_estimators`: registers them with verl's `register_adv_est` on import;
- `models`: the maze-vocabulary tokenizer and a Qwen2-style config of mazerl's transformer;
- `exact`: exact (and sampled) pass@k of a causal LM, written like mazerl's evaluations;
- `speed`: TRL's GRPO throughput for `mazerl-bench`'s TRL-versus-mazerl row.

`text`, `verifier` and `objective` need only the core install; the rest import
`transformers`, `trl`, `datasets` or `verl`. Nothing outside this package (and the
`mazerl-llm` app) imports them.
"""
