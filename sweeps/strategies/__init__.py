"""The built-in sweep strategies, one module each behind `sweeps.spec.strategy.Strategy`:
`grid` (with `--set seeds=auto`, sequential seeds) and `search`. They stand above the engine's
layers: each plans with `sweeps/planning/` and runs on `sweeps/running/`, which it imports
only where it runs, so a dry run loads no Ray."""
