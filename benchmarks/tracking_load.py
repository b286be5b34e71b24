"""Load on the shared tracking server: `python -m benchmarks.tracking_load
[--backend postgresql,sqlite] [--trials 8,32] [--evaluations 40] [--interval 0.5]
[--time-limit 120] [--workers 4] [--markdown FILE]`.

For each backend, starts a real `mlflow server` on loopback over a fresh store
(benchmarks/tracking_servers.py), then for each trial count N runs N simulated trials at
once, each its own process with its own HTTP connection, as Ray trials are: it creates its
run, then at every evaluation (every `interval` seconds, the trials staggered over the
interval) makes the call a trial makes, one `log_batch` of the training curve's keys
(`sweeps.records.tracking.log_metrics`), and finally ends its run. Bounded twice: `evaluations` per
trial, and no call starts after `time_limit` seconds. Then every point is read back through
the server and compared with what was logged (count per run and key, step and value).

Printed per backend and N: the sustained load (trials x log calls/s each, against what the
cadence offered), the latency of a log call (p50, p99, max), errors and points lost. The
exit status is 1 when a point was lost or a call failed, else 0.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import shlex
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.common import cpu_count, cpu_model, load_average
from benchmarks.tracking_servers import (
    BACKENDS,
    SERVER_WORKERS,
    postgres_unavailable,
    tracking_server,
)

# The curve a trial logs at each evaluation (xlt_core/train.py: loss, its parts, dev accuracy,
# epoch): one log_batch of these keys is one log call.
CURVE_KEYS = ("train/loss", "train/ce", "train/dev_accuracy", "train/epoch")
# How long the trials may take to start and create their runs before logging together.
START_TIMEOUT_S = 180


def curve_value(trial: int, step: int, key_index: int) -> float:
    """The value trial `trial` logs for CURVE_KEYS[key_index] at `step`: distinct per point
    (steps below 2**17), so a point stored under the wrong run, step or key reads back wrong;
    a sum of powers of two, so it survives any float64 store exactly."""
    return trial + key_index / 8 + step / 2**20


@dataclass
class TrialLog:
    """What one simulated trial did: the steps it attempted and those whose call returned."""

    trial: int
    run_id: str | None = None
    attempted: list[int] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    started: float = math.nan
    ended: float = math.nan


@dataclass
class LoadResult:
    backend: str
    trials: int
    interval_s: float
    evaluations: int
    calls: int  # acknowledged log calls
    errors: list[str]
    wall_s: float  # from the first trial's first call to the last trial's last
    latencies_s: list[float]
    problems: list[str]  # points lost, wrong or duplicated, runs not FINISHED
    load: str  # the machine's 1-minute load average as the trials started

    @property
    def sustained_per_s(self) -> float:
        return self.calls / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def offered_per_s(self) -> float:
        return self.trials / self.interval_s if self.interval_s > 0 else math.inf

    def latency_ms(self, quantile: float) -> float:
        """The nearest-rank `quantile` of the log calls' latencies, in milliseconds."""
        if not self.latencies_s:
            return math.nan
        ordered = sorted(self.latencies_s)
        return 1000 * ordered[min(len(ordered) - 1, math.ceil(quantile * len(ordered)) - 1)]

    @property
    def held(self) -> bool:
        """Nothing lost or failed, and the cadence kept: at least 95% of the offered rate."""
        kept = self.interval_s == 0 or self.sustained_per_s >= 0.95 * self.offered_per_s
        return not self.errors and not self.problems and kept

    def line(self) -> str:
        per_trial = self.sustained_per_s / self.trials
        offered = (
            "as fast as answered" if self.interval_s == 0 else f"offered {self.offered_per_s:.1f}/s"
        )
        return (
            f"{self.backend:<10} {self.trials:>3} trials x {per_trial:5.2f} logs/s = "
            f"{self.sustained_per_s:6.1f} logs/s ({offered}); latency p50 "
            f"{self.latency_ms(0.5):.0f} ms, p99 {self.latency_ms(0.99):.0f} ms, max "
            f"{self.latency_ms(1.0):.0f} ms; {self.calls} calls x {len(CURVE_KEYS)} keys, "
            f"{len(self.errors)} errors, {len(self.problems)} lost or wrong; load {self.load}"
        )


@dataclass(frozen=True)
class Plan:
    """What every simulated trial is told."""

    uri: str
    experiment_id: str
    trials: int
    evaluations: int
    interval_s: float
    time_limit_s: float


def simulate_trial(plan: Plan, trial: int, ready, results) -> None:
    """One trial's process: create its run, wait for every trial (`ready`, a Barrier), log
    the curve at its cadence, end the run; put its TrialLog on `results`."""
    from mlflow.tracking import MlflowClient

    from sweeps.records.tracking import log_metrics

    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"  # a line per run otherwise
    log = TrialLog(trial)
    try:
        client = MlflowClient(plan.uri)
        log.run_id = client.create_run(plan.experiment_id, run_name=f"trial-{trial}").info.run_id
        ready.wait(timeout=START_TIMEOUT_S)
        start = time.time()
        for step in range(1, plan.evaluations + 1):
            # Staggered over the interval, as trials that started apart are.
            due = start + plan.interval_s * (step - 1 + trial / plan.trials)
            time.sleep(max(0.0, due - time.time()))
            if time.time() >= start + plan.time_limit_s:
                break
            point = {key: curve_value(trial, step, i) for i, key in enumerate(CURVE_KEYS)}
            if not log.attempted:
                log.started = time.time()
            log.attempted.append(step)
            began = time.perf_counter()
            try:
                log_metrics(client, log.run_id, point, step)
            except Exception as error:  # recorded, and the trial goes on as a real one would
                log.errors.append(f"trial {trial} step {step}: {type(error).__name__}: {error}")
            else:
                log.acknowledged.append(step)
            log.latencies_s.append(time.perf_counter() - began)
            log.ended = time.time()
        client.set_terminated(log.run_id)
    except Exception:
        ready.abort()  # the others stop waiting for this one
        log.errors.append(f"trial {trial}: {traceback.format_exc(limit=3)}")
    results.put(log)


def run_load(
    uri: str,
    trials: int,
    evaluations: int,
    interval_s: float,
    time_limit_s: float,
    backend: str = "",
) -> LoadResult:
    """`trials` simulated trials against the tracking server at `uri`, then every point read
    back and checked."""
    from mlflow.tracking import MlflowClient

    experiment_id = MlflowClient(uri).create_experiment(f"load-{trials}-trials-{time.time_ns()}")
    load = load_average().split()[0]
    plan = Plan(uri, experiment_id, trials, evaluations, interval_s, time_limit_s)
    # forkserver: each trial a fresh process forked from one that imported MLflow once.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["mlflow.tracking", "sweeps.records.tracking"])
    ready, results = context.Barrier(trials), context.Queue()
    processes = [
        # daemon: an interrupted run does not wait for its trials
        context.Process(target=simulate_trial, args=(plan, trial, ready, results), daemon=True)
        for trial in range(trials)
    ]
    for process in processes:
        process.start()
    budget = START_TIMEOUT_S + time_limit_s + 120  # the last calls, ending the runs
    logs = [results.get(timeout=budget) for _ in processes]
    for process in processes:
        process.join(timeout=30)
    logs.sort(key=lambda log: log.trial)
    started = [log.started for log in logs if not math.isnan(log.started)]
    ended = [log.ended for log in logs if not math.isnan(log.ended)]
    return LoadResult(
        backend=backend,
        trials=trials,
        interval_s=interval_s,
        evaluations=evaluations,
        calls=sum(len(log.acknowledged) for log in logs),
        errors=[error for log in logs for error in log.errors],
        wall_s=max(ended) - min(started) if started and ended else 0.0,
        latencies_s=[latency for log in logs for latency in log.latencies_s],
        problems=lost_points(uri, logs),
        load=load,
    )


def lost_points(uri: str, logs: list[TrialLog]) -> list[str]:
    """What the server does not hold as logged: per run and key, every acknowledged step with
    its value, nothing twice, nothing never attempted; and the run FINISHED."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    problems = []
    for log in logs:
        if log.run_id is None:
            problems.append(f"trial {log.trial}: no run was created")
            continue
        status = client.get_run(log.run_id).info.status
        if status != "FINISHED":
            problems.append(f"trial {log.trial}: run {log.run_id} is {status}")
        for index, key in enumerate(CURVE_KEYS):
            stored = sorted((m.step, m.value) for m in client.get_metric_history(log.run_id, key))
            steps = [step for step, _ in stored]
            missing = sorted(set(log.acknowledged) - set(steps))
            unexpected = sorted(set(steps) - set(log.attempted))
            duplicated = len(steps) - len(set(steps))
            wrong = [step for step, value in stored if value != curve_value(log.trial, step, index)]
            if missing or unexpected or duplicated or wrong:
                problems.append(
                    f"trial {log.trial} {key}: {len(stored)} points stored, "
                    f"{len(log.acknowledged)} acknowledged; missing steps {missing[:5]}, "
                    f"never logged {unexpected[:5]}, {duplicated} duplicated, "
                    f"wrong values at {wrong[:5]}"
                )
    return problems


def measure_backend(backend: str, trial_counts: list[int], args) -> list[LoadResult]:
    """One server over a fresh `backend` store, each trial count in its own experiment."""
    results = []
    with tempfile.TemporaryDirectory(prefix=f"tracking-load-{backend}-") as workdir:
        with tracking_server(backend, Path(workdir), args.workers) as uri:
            for trials in trial_counts:
                result = run_load(
                    uri, trials, args.evaluations, args.interval, args.time_limit, backend
                )
                print(result.line(), flush=True)
                for message in (result.errors + result.problems)[:5]:
                    print(f"    {message}", flush=True)
                results.append(result)
    return results


def markdown(results: list[LoadResult], command: str, started: datetime, load: str) -> str:
    lines = [
        "",
        f"### Run of {started:%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {cpu_count()} CPUs (nproc), {cpu_model()}; load average at the start "
        f"{load}, at the end {load_average()}.",
        f"Command: `{command}`.",
        "",
        "| backend | trials | logs/s per trial | logs/s in all | offered | p50 ms | p99 ms "
        "| max ms | calls | errors | lost or wrong | held | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        offered = "unpaced" if r.interval_s == 0 else f"{r.offered_per_s:.1f}"
        lines.append(
            f"| {r.backend} | {r.trials} | {r.sustained_per_s / r.trials:.2f} "
            f"| {r.sustained_per_s:.1f} | {offered} | {r.latency_ms(0.5):.0f} "
            f"| {r.latency_ms(0.99):.0f} | {r.latency_ms(1.0):.0f} | {r.calls} "
            f"| {len(r.errors)} | {len(r.problems)} | {'yes' if r.held else 'no'} | {r.load} |"
        )
    return "\n".join(lines + [""])


def _counts(text: str) -> list[int]:
    return [int(value) for value in text.split(",") if value.strip()]


def _backends(text: str) -> list[str]:
    chosen = [value.strip() for value in text.split(",") if value.strip()]
    unknown = [value for value in chosen if value not in BACKENDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown backend {unknown}; one of {BACKENDS}")
    return chosen


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.tracking_load", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--backend", type=_backends, default=list(BACKENDS))
    parser.add_argument("--trials", type=_counts, default=[8, 32], help="e.g. 8,32")
    parser.add_argument("--evaluations", type=int, default=40, help="log calls per trial")
    parser.add_argument(
        "--interval", type=float, default=0.5, help="seconds between a trial's calls (0: unpaced)"
    )
    parser.add_argument("--time-limit", type=float, default=120, help="seconds of logging")
    parser.add_argument("--workers", type=int, default=SERVER_WORKERS, help="server workers")
    parser.add_argument("--markdown", type=Path, help="append the table to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", "-m", "benchmarks.tracking_load", *(argv or sys.argv[1:])])
    started, load = datetime.now(timezone.utc), load_average()
    results = []
    for backend in args.backend:
        reason = postgres_unavailable() if backend == "postgresql" else None
        if reason:
            print(f"{backend:<10} SKIP: {reason}", flush=True)
            continue
        results += measure_backend(backend, args.trials, args)
    if args.markdown and results:
        with open(args.markdown, "a") as handle:
            handle.write(markdown(results, command, started, load))
    return 0 if all(not r.errors and not r.problems for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
