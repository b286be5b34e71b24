"""Benchmark: the paired tests on a paper-sized XNLI comparison, on one core.

7 languages x 5,010 test examples x 5 seeds, 0/1 per-example scores, with 10,000
bootstrap resamples (bootstrapped t-test and bootstrap interval) and 10,000 permutation
iterations; also the analytic t-test. All languages go through the batch forms at once,
as a report does per configuration. BLAS and OpenMP are held to one thread. Prints, per
test, the best wall time of ``--repeats`` runs (and its CPU time), the target of issue 10
and PASS or MISS. ``--general`` also times the general resampling path (draws per
example, as for continuous scores) on the same data, for reference. Not a test: the
figures depend on the machine and its load.

    PYTHONPATH=. python benchmarks/bootstrap_benchmark.py [--general]
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import analysis.stats as stats  # noqa: E402

# Seconds, from issue 10 ("fast statistics"); the analytic t-test has none.
TARGETS = {"bootstrapped t-test": 0.1, "bootstrap CI": 0.1, "permutation test": 1.0}


def timed(run, repeats: int) -> tuple[float, float, object]:
    """Best wall time of ``repeats`` runs, the CPU time of that run, and its result."""
    best = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if best is None or wall < best[0]:
            best = (wall, cpu, result)
    return best


def paper_size_scores(
    languages: int = 7, examples: int = 5010, seeds: int = 5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """0/1 per-example scores of a system and a baseline, (languages, seeds, examples): the
    baseline right with a per-example probability drawn from Beta(2, 1), the system one
    point more often."""
    rng = np.random.default_rng(seed)
    shape = (languages, seeds, examples)
    difficulty = rng.beta(2, 1, size=(languages, 1, examples))
    baseline = (rng.uniform(size=shape) < difficulty).astype(float)
    system = (rng.uniform(size=shape) < np.minimum(difficulty + 0.01, 1)).astype(float)
    return system, baseline


def paired_tests(system: np.ndarray, baseline: np.ndarray, resamples: int) -> dict:
    """Each test by name (the keys of TARGETS, plus the analytic t-test): a call that runs
    it on every language at once through the batch forms."""
    return {
        "paired t-test": lambda: stats.ttest_batch(system, baseline),
        "bootstrapped t-test": lambda: stats.bootstrap_ttest_batch(system, baseline, resamples),
        "bootstrap CI": lambda: stats.bootstrap_ci_batch(system, baseline, resamples),
        "permutation test": lambda: stats.permutation_test_batch(system, baseline, resamples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", type=int, default=7)
    parser.add_argument("--examples", type=int, default=5010)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--general", action="store_true", help="also time the general path")
    args = parser.parse_args()

    system, baseline = paper_size_scores(args.languages, args.examples, args.seeds)
    print(
        f"{args.languages} languages x {args.examples} examples x {args.seeds} seeds, "
        f"{args.resamples} resamples, one thread, best of {args.repeats}"
    )
    runs = paired_tests(system, baseline, args.resamples)
    paths = [("grouped", stats.GROUPED_MAX_VALUES)] + ([("general", 0)] * args.general)
    print(f"{'test':20s} {'path':8s} {'wall':>8s} {'cpu':>8s} {'target':>8s}  verdict   p-values")
    for path, max_values in paths:
        stats.GROUPED_MAX_VALUES = max_values
        for name, run in runs.items():
            if path == "general" and name not in TARGETS:
                continue  # the analytic t-test does not resample
            wall, cpu, result = timed(run, args.repeats if path == "grouped" else 1)
            target = TARGETS.get(name)
            if path == "general" or target is None:
                target_text, verdict = "-", "-"
            else:
                target_text, verdict = f"{target:.2f} s", "PASS" if wall <= target else "MISS"
            print(
                f"{name:20s} {path if name != 'paired t-test' else '-':8s} {wall:6.3f} s "
                f"{cpu:6.3f} s {target_text:>8s}  {verdict:8s}  "
                f"{np.round(result.p_value, 4).tolist()}"
            )


if __name__ == "__main__":
    main()
