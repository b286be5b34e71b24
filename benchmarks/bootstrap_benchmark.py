"""Benchmark: the paired tests on a paper-sized XNLI comparison.

7 languages x 5,010 test examples x 5 seeds, 0/1 per-example scores, with 10,000
bootstrap resamples (bootstrapped t-test and bootstrap interval) and 10,000 permutation
iterations; also the analytic t-test. All languages go through the batch forms at once,
as a report does per configuration. Prints the wall time of each.

    PYTHONPATH=. python benchmarks/bootstrap_benchmark.py
"""

import argparse
import time

import numpy as np

from analysis.stats import (
    bootstrap_ci_batch,
    bootstrap_ttest_batch,
    permutation_test_batch,
    ttest_batch,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", type=int, default=7)
    parser.add_argument("--examples", type=int, default=5010)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    shape = (args.languages, args.seeds, args.examples)
    difficulty = rng.beta(2, 1, size=(args.languages, 1, args.examples))
    baseline = (rng.uniform(size=shape) < difficulty).astype(float)
    system = (rng.uniform(size=shape) < np.minimum(difficulty + 0.01, 1)).astype(float)
    print(
        f"{args.languages} languages x {args.examples} examples x {args.seeds} seeds, "
        f"{args.resamples} resamples"
    )
    runs = {
        "paired t-test": lambda: ttest_batch(system, baseline),
        "bootstrapped t-test": lambda: bootstrap_ttest_batch(system, baseline, args.resamples),
        "bootstrap CI": lambda: bootstrap_ci_batch(system, baseline, args.resamples),
        "permutation test": lambda: permutation_test_batch(system, baseline, args.resamples),
    }
    for name, run in runs.items():
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        print(f"{name:20s} {seconds:7.2f} s   p-values {np.round(result.p_value, 4).tolist()}")


if __name__ == "__main__":
    main()
