"""Statistics case: the paired tests at paper size, timed by `bootstrap_benchmark`'s own
functions (its data, its tests, its best-of timing and targets) in a worker process, so
that its one-thread BLAS setting holds: it takes effect only before numpy is loaded,
which the runner's process has done long before.

    python -m benchmarks.significance [--quick]   # the worker: prints one JSON line
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Iterator

from benchmarks.common import REPO, Result, Settings, measured

REPEATS = 3  # best of, as bootstrap_benchmark.py's default
RESAMPLES = 10_000
QUICK = {"examples": 500, "resamples": 1000, "repeats": 1}


def statistics(settings: Settings) -> Iterator[Result]:
    command = [sys.executable, "-m", "benchmarks.significance"] + ["--quick"] * settings.quick
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {completed.returncode}:\n"
                           + completed.stderr[-3000:])  # fmt: skip
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    size = report["size"]
    for test in report["tests"]:
        target = test["target"]
        yield measured(
            f"{test['name']} ({size})",
            test["wall"],
            "s",
            None if target is None else ("<=", target),
            f"best of {report['repeats']}, CPU {test['cpu']:.3f} s, one thread",
        )


def _worker(quick: bool) -> dict:
    from benchmarks import bootstrap_benchmark as bench  # holds BLAS to one thread, then numpy

    languages, seeds = 7, 5
    examples = QUICK["examples"] if quick else 5010
    resamples = QUICK["resamples"] if quick else RESAMPLES
    repeats = QUICK["repeats"] if quick else REPEATS
    system, baseline = bench.paper_size_scores(languages, examples, seeds)
    tests = []
    for name, run in bench.paired_tests(system, baseline, resamples).items():
        wall, cpu, _ = bench.timed(run, repeats)
        tests.append({"name": name, "wall": wall, "cpu": cpu, "target": bench.TARGETS.get(name)})
    size = f"{languages} x {examples} x {seeds} seeds, {resamples} resamples"
    return {"size": size, "repeats": repeats, "tests": tests}


if __name__ == "__main__":
    print(json.dumps(_worker("--quick" in sys.argv[1:])))
