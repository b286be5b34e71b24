"""Scale case: the report and `analysis compare` as the tracking store grows to paper size.

Stores of growing size (`SIZES` trial runs of ding2022's EAR x XNLI paper preset, mBERT,
16 evaluation sets of 5,010 per-example scores each; plus one robust sweep of huang2021's
paper preset with generalized pairs and the mixed-language set, 15x the artifacts per
trial), built by `benchmarks.scale_store` in worker processes, then per store `python -m
analysis report` and `python -m analysis compare`, each in its own subprocess: wall time and
peak resident memory (that child's `ru_maxrss`, from `os.wait4`). The growth exponent is
the log-log slope of time (and memory) against trials. The paper-size figure is the
`PAPER_TRIALS` store: target <= 15 s and <= 500 MB for the report.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterator, NamedTuple

import numpy as np

from benchmarks.common import REPO, Result, Settings, measured
from benchmarks.scale_store import StorePlan, build_store

EXAMPLES = 5010  # an XNLI test set
PAPER_TRIALS = 95  # ding2022's grid in issue 24: 19 configurations x 5 seeds
SIZES = (10, 50, PAPER_TRIALS, 500)
# The robust sweep: its 10 configurations at 2 seeds (a 10-seed store would hold 24,000
# artifacts, 1.3 GB: minutes to build on two cores).
ROBUST = StorePlan("robust_xnli", 20, EXAMPLES, seeds=2)
# --quick: 2 seeds, 2 target languages, 50 examples: a check that the case runs.
QUICK_SIZES = (4, 8)
QUICK_ROBUST = StorePlan("robust_xnli", 4, 50, seeds=2, languages=2)
TARGETS = {"seconds": ("<=", 15.0), "MB": ("<=", 500.0)}
BUILD_WORKERS = 3  # stores built at once (mostly waiting on SQLite's commits)
TIMEOUT_S = 600


class Timing(NamedTuple):
    seconds: float
    peak_mb: float


def plans(quick: bool) -> dict[str, StorePlan]:
    """The stores to build, by name, largest first (so the pool starts it first)."""
    if quick:
        sized = {
            f"ear_{n}": StorePlan("ear_xnli", n, 50, seeds=2, languages=2) for n in QUICK_SIZES
        }
        return {**dict(reversed(sized.items())), "robust": QUICK_ROBUST}
    sized = {f"ear_{n}": StorePlan("ear_xnli", n, EXAMPLES) for n in SIZES}
    return {**dict(reversed(sized.items())), "robust": ROBUST}


def _build(plan: StorePlan, root: str) -> tuple[str, str, float]:
    """In a worker: build one store; (tracking URI, experiment, seconds)."""
    clock = time.perf_counter()
    uri, experiment = build_store(plan, Path(root))
    return uri, experiment, time.perf_counter() - clock


def build_stores(plans_by_name: dict[str, StorePlan], scratch: Path) -> dict[str, tuple]:
    """Every store, built in worker processes (forked after the trial path's imports, so
    each worker does not import torch again); name -> (URI, experiment, build seconds)."""
    import sweeps.running.trainable  # noqa: F401  (the builders' imports, once, before forking)
    import xlt_core.tasks.pair_encoding_and_scoring  # noqa: F401
    from sweeps.records.tracking import prepare_store

    # MLflow's tables made once (its migrations take seconds), copied into every store.
    scratch.mkdir(parents=True)
    template = scratch / "empty.db"
    prepare_store(f"sqlite:///{template}")
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(BUILD_WORKERS, mp_context=context) as pool:
        futures = {}
        for name, plan in plans_by_name.items():
            root = scratch / f"store-{name}"
            root.mkdir()
            shutil.copyfile(template, root / "mlflow.db")
            futures[name] = pool.submit(_build, plan, str(root))
        return {name: future.result() for name, future in futures.items()}


# Runs the command as its own child and prints that child's peak RSS (KiB) and exit code.
# A child of this process would inherit this process's peak (Linux keeps the larger across
# fork and exec), so the measured command is a grandchild, forked from this small launcher.
LAUNCHER = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
    "open(sys.argv[1], 'w').write(f'{peak} {code}')"
)


def timed_command(arguments: list[str], workdir: Path, name: str) -> Timing:
    """Run `python ARGUMENTS` in `workdir` (its output in `<name>.log` there); its wall time
    and its own peak RSS."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    log, usage = workdir / f"{name}.log", workdir / f"{name}.usage"
    command = [sys.executable, "-c", LAUNCHER, str(usage), sys.executable, *arguments]
    clock = time.perf_counter()
    with open(log, "w") as handle:
        subprocess.run(command, cwd=workdir, env=env, stdout=handle, stderr=handle, check=True)
    seconds = time.perf_counter() - clock
    peak_kib, code = usage.read_text().split()
    if code != "0":
        raise RuntimeError(f"{' '.join(arguments)} failed: {log.read_text()[-2000:]}")
    return Timing(seconds, int(peak_kib) / 1024)


def report_and_compare(uri: str, experiment: str, workdir: Path) -> tuple[Timing, Timing]:
    """`python -m analysis report` then `compare` on one store."""
    common = ["--tracking-uri", uri]
    report = ["report", "--experiment", experiment, *common, "--out", str(workdir / "report")]
    compare = ["compare", "--experiments", experiment, *common, "--out", str(workdir / "compare")]
    return (
        timed_command(["-m", "analysis", *report], workdir, "report"),
        timed_command(["-m", "analysis", *compare], workdir, "compare"),
    )


def growth_exponent(trials: list[int], values: list[float]) -> float:
    """The slope of log(value) against log(trials): 1 = linear growth, 0 = a fixed cost."""
    slope, _ = np.polyfit(np.log(trials), np.log(values), 1)
    return float(slope)


def size_results(name: str, plan: StorePlan, timings, build_s: float, paper: bool) -> list:
    """The lines of one store: the report's and compare's time and memory."""
    (report, compare) = timings
    what = f"{plan.trials} trials" + (", robust, generalized pairs" if "robust" in name else "")
    target = TARGETS if paper else {}
    note = f"store built in {build_s:.0f} s"
    return [
        measured(
            f"scale report seconds ({what})", report.seconds, "s", target.get("seconds"), note
        ),
        measured(f"scale report peak RSS ({what})", report.peak_mb, "MB", target.get("MB")),
        measured(f"scale compare seconds ({what})", compare.seconds, "s"),
        measured(f"scale compare peak RSS ({what})", compare.peak_mb, "MB"),
    ]


def exponent_results(points: list[tuple[int, tuple[Timing, Timing]]]) -> list[Result]:
    """The growth exponents of the report's and compare's time and memory."""
    trials = [n for n, _ in points]
    results = []
    for index, command in enumerate(("report", "compare")):
        for field, unit in (("seconds", "time"), ("peak_mb", "peak RSS")):
            values = [getattr(timings[index], field) for _, timings in points]
            slope = growth_exponent(trials, values)
            sizes = ", ".join(map(str, trials))
            results.append(
                measured(
                    f"scale {command} {unit} growth exponent",
                    slope,
                    "",
                    None,
                    f"log-log slope over {sizes} trials",
                )
            )
    return results


def scale(settings: Settings) -> Iterator[Result]:
    """The case: build the stores, time report and compare on each, the growth exponents."""
    chosen = plans(settings.quick)
    clock = time.perf_counter()
    stores = build_stores(chosen, settings.scratch / "scale")
    print(f"  (the stores built in {time.perf_counter() - clock:.0f} s)", flush=True)
    points = []
    for name in sorted(chosen, key=lambda n: (n == "robust", chosen[n].trials)):
        uri, experiment, build_s = stores[name]
        workdir = settings.scratch / "scale" / f"run-{name}"
        workdir.mkdir()
        timings = report_and_compare(uri, experiment, workdir)
        paper = chosen[name].trials == PAPER_TRIALS and name != "robust"
        yield from size_results(name, chosen[name], timings, build_s, paper)
        if name != "robust":
            points.append((chosen[name].trials, timings))
    yield from exponent_results(points)
