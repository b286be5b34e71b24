"""The benchmark suite of issue 10 (`make bench`, `python -m benchmarks`): per case, the
measured figure, its target and PASS or MISS. Cases, one module per group: `training`
(step cost per objective, training throughput), `evaluation`, `sweep` (smoke-sweep
overhead), `significance` (the paired tests at paper size, through
`bootstrap_benchmark`), `memory` (peak memory of a step per objective). See
docs/benchmarks.md.

Nothing heavy is imported here: `python -m benchmarks.significance` must load numpy only
after `bootstrap_benchmark` has held BLAS to one thread.
"""
