"""Driver case: how the sweep driver scales with the number of trials (issue 24).

A search of N trials (`sweeps/ear_xnli.py --preset smoke --strategy search --set
search_trials=N`: Optuna TPE samples, ASHA schedules, then phase 2 re-runs the top
configuration and the baseline over two seeds and the report is written; no confirmation
phase, `confirm_seeds=0`, a constant 4 trials whatever N) through the real
command, runner, tracking and Tune on a local Ray. Each trial is the real trainable
(`sweeps.running.trainable.run_tracked_trial`: its MLflow child run, params, tags, metrics,
per-example scores, Ray checkpoint) with the training replaced by `noop_trial` (named in the
workers' $XLT_TRIAL_FUNCTION), so what grows with N is the driver's and the store's share alone.

Figures per N: the driver process's peak RSS; seconds per trial (the command's wall / trials,
and the driver process's CPU time / trials: Tune's loop, the searcher, the callbacks, the
runner); the searcher's own CPU per trial, timed alone after the sweep (`searcher_cpu`); the
tracking store's bytes per trial (mlflow.db and its artifacts) and, in the note, Tune's own
state (ray_results) per trial. Then the CPU per trial at the largest N over that at the
smallest (issue 44's target: <= 1.2x from 100 to 1,000). `driver_10k`, an option, runs N =
10,000.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import zlib
from pathlib import Path
from typing import Iterator

from benchmarks.common import (
    REPO,
    Result,
    Settings,
    measured,
    run_in_own_session,
    status_bytes,
)

SIZES = (100, 1000)
QUICK_SIZES = (4, 8)
LARGE_SIZES = (10_000,)  # `--only driver-10k`: not in the default run (about an hour)
QUICK_LARGE_SIZES = (6,)
# Driver CPU per trial at the largest size / at the smallest (issue 44).
FLAT_TARGET = ("<=", 1.2)
SEEDS = "0,1"  # phase 2: the top configuration and the baseline, two seeds each
EVAL_EXAMPLES = 50  # per evaluation set of a no-op trial: the smoke preset's test size order
TIMEOUT_S, TIMEOUT_S_PER_TRIAL = 600, 3.6  # 1,000 trials: an hour
NOOP = "benchmarks.driver_scale:noop_trial"


def scored_trial_result(config, scores_of):
    """A trial's result with nothing trained: the selection metric's dev set and every test
    language, each given the 0/1 scores `scores_of(split, lang)` and their mean as its metric."""
    from xlt_core.trial_result import TrialResult
    from xlt_schema import example_scores_key, metric_key

    dev_split, dev_lang, metric = config.selection_metric().split("/")
    metrics, per_example = {}, {}
    for split, lang in [(dev_split, dev_lang), *(("test", lang) for lang in config.test_langs)]:
        scores = [float(score) for score in scores_of(split, lang)]
        metrics[metric_key(split, lang, metric)] = sum(scores) / len(scores)
        per_example[example_scores_key(split, lang)] = {
            "split": split,
            "lang": lang,
            "metric": metric,
            "scores": scores,
        }
    return TrialResult(metrics=metrics, example_scores=per_example)


def noop_trial(config, reporter):
    """A trial that trains nothing: every set scored on EVAL_EXAMPLES 0/1 scores drawn from
    the configuration and seed (so the search has something to rank and the report something
    to test). Runs in a Ray worker."""
    import numpy as np

    seed = zlib.crc32(f"{config.config_key()}-{config.seed}".encode())
    rng = np.random.default_rng(seed)
    return scored_trial_result(
        config, lambda split, lang: rng.random(EVAL_EXAMPLES) < rng.uniform(0.3, 0.7)
    )


def sweep_arguments(trials: int) -> list[str]:
    return [
        *("--preset", "smoke", "--strategy", "search"),
        *("--set", f"search_trials={trials}", "--set", "top_k=1", "--set", f"seeds={SEEDS}"),
        # No confirmation phase (4 trials whatever N): the figures stay those of earlier runs.
        *("--set", "log_models=false", "--set", "confirm_seeds=0"),
    ]


def drive(trials: int) -> int:
    """The driver process: the sweep command in this process, then its own peak RSS and CPU
    time as one JSON line (what Ray's processes use is theirs, not the driver's), and whether
    it imported torch."""
    from sweeps import ear_xnli
    from sweeps.cli import main

    code = main(ear_xnli, sweep_arguments(trials))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures = {
        "code": code,
        # Not ru_maxrss: that kept `make bench`'s own peak (8.5 GB after the mBERT cases).
        "peak_rss_kib": status_bytes("VmHWM") // 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "torch": "torch" in sys.modules,  # the driver leaves torch to the trials
        "searcher_cpu_s": searcher_cpu(trials),  # after the driver's own CPU was read
    }
    print(json.dumps(figures), flush=True)
    return code


def searcher_cpu(trials: int) -> float:
    """CPU seconds of the sweep's phase-1 searcher alone (Optuna TPE behind Tune's
    ConcurrencyLimiter, as `sweeps.running.search.phase_one_searcher` builds it for this sweep) over
    `trials` suggestions, each completed at once with a random dev score: the share of the
    driver's CPU that is the searcher's own and grows with the trials it has seen."""
    import random

    from sweeps import ear_xnli
    from sweeps.cli import apply_overrides
    from sweeps.running import search
    from sweeps.spec.experiment import experiment_spec
    from xlt_core.config import parse_assignments

    overrides = parse_assignments([f"search_trials={trials}"])
    spec = apply_overrides(experiment_spec(ear_xnli, "smoke", None), overrides)
    searcher = search.phase_one_searcher(spec, "searcher-alone")
    scores = random.Random(0)
    started = time.process_time()
    for number in range(trials):
        trial_id = f"trial-{number}"
        if searcher.suggest(trial_id) is None:
            raise RuntimeError(f"the searcher suggested nothing for trial {number}")
        searcher.on_trial_complete(trial_id, {search.METRIC: scores.random()})
    return time.process_time() - started


def _run_driver(trials: int, workdir: Path, timeout_s: int) -> tuple[dict, float]:
    """Run `drive(trials)` in a fresh process in `workdir`; its figures and wall time."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a local Ray
    env.update(
        MLFLOW_TRACKING_URI=f"sqlite:///{workdir / 'mlflow.db'}",
        XLT_TRIAL_FUNCTION=NOOP,  # the workers inherit it
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    log_path = workdir / "driver.log"
    command = [sys.executable, "-m", "benchmarks.driver_scale", str(trials)]
    code, started, ended = run_in_own_session(command, workdir, env, log_path, timeout_s)
    wall = ended - started
    lines = log_path.read_text().splitlines()
    if code != 0 or not lines or not lines[-1].startswith("{"):
        tail = "\n".join(lines[-40:])
        raise RuntimeError(f"{' '.join(command)} exited {code}:\n{tail}")
    return json.loads(lines[-1]), wall


def tree_bytes(path: Path) -> int:
    """Bytes of the files under `path` (0 when it is absent)."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def trial_run_count(tracking_uri: str) -> int:
    """The sweep's trial runs in the store (both phases)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri)
    experiment = client.get_experiment_by_name("ear_xnli")
    runs = client.search_runs(
        [experiment.experiment_id], filter_string="tags.`xlt.role` = 'trial'", max_results=50_000
    )
    return len(runs)


def driver_scaling(settings: Settings) -> Iterator[Result]:
    """The driver at 100 and 1,000 trials (`--quick`: 4 and 8), then the CPU per trial at the
    largest over that at the smallest."""
    yield from _driver_sizes(settings, QUICK_SIZES if settings.quick else SIZES)


def driver_10k(settings: Settings) -> Iterator[Result]:
    """The driver at 10,000 no-op trials (`--quick`: 6), an option: `--only driver-10k`."""
    yield from _driver_sizes(settings, QUICK_LARGE_SIZES if settings.quick else LARGE_SIZES)


def _driver_sizes(settings: Settings, sizes) -> Iterator[Result]:
    cpu_per_trial = {}
    for size in sizes:
        workdir = settings.scratch / f"driver-{size}"
        workdir.mkdir()
        figures, wall = _run_driver(size, workdir, TIMEOUT_S + TIMEOUT_S_PER_TRIAL * size)
        trials = trial_run_count(f"sqlite:///{workdir / 'mlflow.db'}")
        cpu_per_trial[size] = figures["cpu_s"] / trials
        yield from _size_figures(size, trials, figures, wall, workdir)
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        yield measured(
            f"driver CPU per trial, {large} trials / {small} trials",
            cpu_per_trial[large] / cpu_per_trial[small],
            "x",
            FLAT_TARGET,
            f"{cpu_per_trial[small]:.3f} s -> {cpu_per_trial[large]:.3f} s per trial run",
        )


def _size_figures(size: int, trials: int, figures: dict, wall: float, workdir: Path):
    store = tree_bytes(workdir / "mlflow.db") + tree_bytes(workdir / "mlartifacts")
    tune_state = tree_bytes(workdir / "ray_results")
    what = f"{size}-trial search, {trials} trial runs"
    yield measured(
        f"driver peak RSS ({what})",
        figures["peak_rss_kib"] / 1024,
        "MiB",
        note="VmHWM; torch " + ("imported" if figures.get("torch") else "not imported"),
    )
    yield measured(f"driver wall per trial ({what})", wall / trials, "s", note=f"wall {wall:.0f} s")
    yield measured(
        f"driver CPU per trial ({what})",
        figures["cpu_s"] / trials,
        "s",
        note=f"driver CPU {figures['cpu_s']:.0f} s (user + system)",
    )
    yield measured(
        f"searcher CPU per trial, Optuna TPE alone ({size} trials)",
        figures["searcher_cpu_s"] / size,
        "s",
        note="part of the driver's CPU: its suggest + complete timed apart from the sweep",
    )
    yield measured(
        f"tracking store per trial ({what})",
        store / trials / 1024,
        "KiB",
        note=f"mlflow.db + mlartifacts {store / 2**20:.1f} MiB; "
        f"ray_results {tune_state / trials / 1024:.0f} KiB per trial",
    )


if __name__ == "__main__":
    sys.exit(drive(int(sys.argv[1])))
