"""The command-line apps: `mazerl-train`, `mazerl-eval`, `mazerl-categorical`, `mazerl-maze`,
`mazerl-summarize`, `mazerl-bench`, and the config schema they validate against."""
