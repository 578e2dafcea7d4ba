"""mazerl for language-model trainers (the optional extra `pip install mazerl[llm]`).

The same mazes, verifier and objectives for TRL and verl users, and exact pass@k for any
Hugging Face causal LM:

- `text`: mazes as prompts and answers, in MaxRL's token grid (`maxrl`) or a plain-text
  format a chat model can read (`plain`), how each format's answers are read, and MaxRL's
  whole token sequence (its data's ground truth) both ways;
- `verifier`: mazerl's reward rule on model text, as TRL's `reward_funcs` and verl's
  `compute_score`, for mazerl's ground truths and MaxRL's;
- `export`: maze sources -> JSONL / Parquet datasets (Hugging Face `datasets`), laid out as
  MaxRL's maze data;
- `objective`: mazerl's registered advantage estimators and focal weight on `[P, G]` rewards;
- `sft`: the supervised warm-up on the reference answers that GRPO needs first;
- `trainer`: `FocalGRPOTrainer`, TRL's `GRPOTrainer` with those advantages;
- `verl_config`: the environment and Hydra overrides that reach verl's Ray actors;
- `verl_estimators`: registers the estimators with verl's `register_adv_est` on import;
- `models`: the maze-vocabulary tokenizer and a causal LM of mazerl's transformer shape;
- `exact`: exact (and sampled) pass@k of a causal LM, written like mazerl's evaluations;
- `speed`: TRL's GRPO throughput for `mazerl-bench`'s TRL-versus-mazerl row.

`text`, `verifier`, `objective` and `verl_config` need only the core install; the rest import
`transformers`, `trl`, `datasets` or `verl`. Nothing outside this package (and the
`mazerl-llm` app) imports them.
"""
