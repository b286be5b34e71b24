"""SIGINT drill (issue 22, item 12): smoke sweeps started from a launcher that ignores SIGINT
(as a background job of a non-interactive shell does), each in its own session, sent SIGINT
to its process group at a random moment. Each run must either stop with exit 130 and then,
continued as the driver says (`--resume`; the same command when nothing was tracked yet), end
with exactly one FINISHED trial run per (configuration, seed), its report written; or have
finished before the signal (its report written; the driver exits 0, saying so if the signal
came after its report).

    python -m sweeps.drills.sigint --runs 20 [--seed N] [--max-delay S] [--set KEY=VALUE]

`--signal TERM` drills SIGTERM to the whole process group instead (issue 41, item 2: what
`timeout -s TERM`, systemd and Slurm send): exit 143, the rest as above.

The seed is printed, and each run's moment. A moment counts from when the driver catches
SIGINT (its handler installed: `SigCgt` in /proc/PID/status). Before that, the interpreter's
start, the imports and reading the command line (a second or two), a launcher's ignored
SIGINT stays ignored, as for any program: nothing has started or been tracked yet, and the
sweep then runs to its end. Ray's trial workers run in sessions of their own and its other
processes block SIGINT: the signal to the group reaches the driver alone.
Without `--max-delay`, a first uninterrupted sweep measures how long one takes.
Exit status: 0 every run passed, 1 some did not, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from xlt_schema import COMPLETE_TAG, CONFIG_KEY_TAG, PARENT_ROLE, REPORTED_TAG, ROLE_TAG, TRIAL_ROLE

SWEEPS = Path(__file__).resolve().parents[1]
# What the driver prints when a signal comes after its report (`StopSignals.finished`).
AFTER_THE_END = "received: the sweep has already finished"
EXPERIMENT = "ear_xnli"
# What it prints when the signal came before its parent run existed (sweeps/cli.py).
NOTHING_TRACKED = "nothing was tracked yet; run the same command again"


@dataclass
class DrillRun:
    """One run of the drill: when SIGINT was sent, what the driver and `--resume` did, and
    what the checks found wrong (`problems`; empty: the run passed)."""

    delay_s: float
    signum: int = signal.SIGINT
    after_parent: bool = False  # the moment counted from when the parent run exists
    exit_code: int | None = None
    resume_code: int | None = None
    continued_with: str = "--resume"  # or the same command, when nothing was tracked yet
    finished_before: bool = False
    problems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        resumed = (
            "" if self.resume_code is None else f", {self.continued_with} exit {self.resume_code}"
        )
        verdict = "ok" if not self.problems else "FAILED: " + "; ".join(self.problems)
        before = " (the sweep had finished before the signal)" if self.finished_before else ""
        name = signal.Signals(self.signum).name
        moment = f"{self.delay_s:.1f} s" + (" after the parent run" if self.after_parent else "")
        return f"{name} at {moment}: exit {self.exit_code}{resumed}{before}: {verdict}"


def start_ignoring_sigint(argv: list[str], workdir: Path) -> subprocess.Popen:
    """`argv` in its own session, SIGINT ignored as it starts (inherited across exec, as from a
    background launcher); its output appended to `driver.log` in `workdir`."""
    log = open(workdir / "driver.log", "a")
    with log:
        return subprocess.Popen(
            argv,
            cwd=workdir,
            # A driver that crashes (a segfault at exit was seen once) leaves its stack in the log.
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )


def catches_sigint(pid: int) -> bool:
    """Whether process `pid` has a SIGINT handler installed (its /proc status's SigCgt)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


def sweep_argv(workdir: Path, settings: list[str], resume: bool = False) -> list[str]:
    uri = f"sqlite:///{workdir / 'mlflow.db'}"
    sets = [word for setting in settings for word in ("--set", setting)]
    command = [sys.executable, str(SWEEPS / f"{EXPERIMENT}.py"), "--preset", "smoke"]
    return [*command, "--tracking-uri", uri, *sets, *(["--resume"] if resume else [])]


def drill_once(
    workdir: Path,
    delay_s: float,
    settings: list[str],
    timeout_s: float,
    signum: int = signal.SIGINT,
    after_parent: bool = False,
) -> DrillRun:
    """One run: a sweep in `workdir` (made), `signum` to its process group `delay_s` after
    it catches SIGINT (`after_parent`: after its parent run exists, a moment within its
    phases on a machine of any speed), then `--resume` if it stopped with 128 + `signum`,
    then the store's checks."""
    workdir.mkdir(parents=True, exist_ok=True)
    run = DrillRun(delay_s, signum, after_parent)
    driver = start_ignoring_sigint(sweep_argv(workdir, settings), workdir)
    try:
        _interrupt_at(driver, delay_s, workdir, run)
        run.exit_code = _wait(driver, timeout_s)
    finally:
        _stop(driver)
    log = (workdir / "driver.log").read_text(errors="replace")
    if run.exit_code == 128 + signum:
        # As the driver says: `--resume`, or the same command when nothing was tracked yet.
        resume = NOTHING_TRACKED not in log
        run.continued_with = "--resume" if resume else "the same command"
        again = start_ignoring_sigint(sweep_argv(workdir, settings, resume=resume), workdir)
        try:
            run.resume_code = _wait(again, timeout_s)
        finally:
            _stop(again)
        if run.resume_code != 0:
            run.problems.append(f"{run.continued_with} exited {run.resume_code}")
    elif run.exit_code != 0 or not (run.finished_before or AFTER_THE_END in log):
        name = signal.Signals(signum).name
        run.problems.append(f"exit {run.exit_code}, though {name} came before the sweep's end")
    run.problems += store_problems(workdir / "mlflow.db", expected_trials(settings))
    return run


def _interrupt_at(driver: subprocess.Popen, delay_s: float, workdir: Path, run: DrillRun):
    """Wait until the driver catches SIGINT (its handlers installed), then `delay_s`, then
    send `run.signum` to its process group (unless it ended first); notes whether its
    report was written before."""
    while driver.poll() is None and not catches_sigint(driver.pid):
        time.sleep(0.01)
    while run.after_parent and driver.poll() is None and not _has_parent(workdir / "mlflow.db"):
        time.sleep(0.1)
    deadline = time.monotonic() + delay_s
    while driver.poll() is None and time.monotonic() < deadline:
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    run.finished_before = _reported(workdir / "mlflow.db")
    if driver.poll() is None:
        os.killpg(driver.pid, run.signum)
    else:
        run.finished_before = True


def _wait(process: subprocess.Popen, timeout_s: float) -> int | None:
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def _stop(process: subprocess.Popen) -> None:
    """Kill what is left of a run's session (a driver past its time, Ray's processes)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _reported(database: Path) -> bool:
    """Whether the sweep's parent run already has its report (read-only, no MLflow)."""
    return _tagged(database, REPORTED_TAG, "true")


def _has_parent(database: Path) -> bool:
    """Whether the sweep's parent run exists (read-only, no MLflow)."""
    return _tagged(database, ROLE_TAG, PARENT_ROLE)


def _tagged(database: Path, key: str, value: str) -> bool:
    """Whether a run in the SQLite store `database` has tag `key` = `value`."""
    import sqlite3

    if not database.is_file():
        return False
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
            rows = connection.execute(
                "select count(*) from tags where key = ? and value = ?", (key, value)
            ).fetchone()
    except sqlite3.Error:
        return False
    return rows[0] > 0


def expected_trials(settings: list[str]) -> int | None:
    """The smoke sweep's trials under `settings`: its configurations times its seeds."""
    from sweeps import ear_xnli
    from sweeps.cli import apply_overrides
    from sweeps.spec.experiment import experiment_spec
    from xlt_core.config import parse_assignments

    spec = apply_overrides(experiment_spec(ear_xnli, "smoke", None), parse_assignments(settings))
    return len(spec.points) * len(spec.seeds)


def store_problems(database: Path, trials: int) -> list[str]:
    """What is wrong with the sweep's store at the end: not one parent, complete and
    reported; not exactly one FINISHED trial run per (configuration, seed), none RUNNING."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{database}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    if experiment is None:
        return ["no experiment in the store"]
    runs = client.search_runs([experiment.experiment_id], max_results=10000)
    parents = [run for run in runs if run.data.tags.get(ROLE_TAG) == PARENT_ROLE]
    trial_runs = [run for run in runs if run.data.tags.get(ROLE_TAG) == TRIAL_ROLE]
    problems = [] if len(parents) == 1 else [f"{len(parents)} parent runs"]
    for parent in parents:
        problems += parent_problems(parent)
    return problems + trial_problems(trial_runs, trials)


def parent_problems(parent) -> list[str]:
    """What is wrong with a sweep's parent run at the end: not FINISHED, complete, reported."""
    tags = parent.data.tags
    problems = []
    if parent.info.status != "FINISHED" or tags.get(COMPLETE_TAG) != "true":
        problems.append(f"parent {parent.info.status}, complete={tags.get(COMPLETE_TAG)}")
    if tags.get(REPORTED_TAG) != "true":
        problems.append("no report")
    return problems


def trial_problems(trial_runs: list, trials: int) -> list[str]:
    """Not exactly one FINISHED trial run per (configuration, seed) of `trials`; any RUNNING."""
    problems = []
    finished = [run for run in trial_runs if run.info.status == "FINISHED"]
    pairs = {(run.data.tags.get(CONFIG_KEY_TAG), run.data.params.get("seed")) for run in finished}
    if len(finished) != trials or len(pairs) != trials:
        problems.append(f"{len(finished)} FINISHED trial runs for {len(pairs)} of {trials} trials")
    running = sum(run.info.status == "RUNNING" for run in trial_runs)
    if running:
        problems.append(f"{running} trial runs left RUNNING")
    return problems


def _measure(workdir: Path, settings: list[str], timeout_s: float) -> float:
    """Seconds an uninterrupted sweep takes from when its driver catches SIGINT."""
    workdir.mkdir(parents=True, exist_ok=True)
    driver = start_ignoring_sigint(sweep_argv(workdir, settings), workdir)
    try:
        while driver.poll() is None and not catches_sigint(driver.pid):
            time.sleep(0.01)
        started = time.monotonic()
        code = _wait(driver, timeout_s)
    finally:
        _stop(driver)
    if code != 0:
        raise SystemExit(f"the uninterrupted sweep in {workdir} exited {code}: see driver.log")
    return time.monotonic() - started


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sweeps.drills.sigint",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=20, help="sweeps to interrupt (default 20)")
    parser.add_argument("--seed", type=int, help="the moments' random seed (default: drawn)")
    parser.add_argument(
        "--max-delay", type=float, metavar="S", help="latest moment, seconds (default: measured)"
    )
    parser.add_argument("--workdir", help="where the runs' folders go (default: a new one)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per sweep, seconds")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a smoke setting"
    )
    parser.add_argument(
        "--signal",
        choices=["INT", "TERM"],
        default="INT",
        help="the signal sent to the process group (default INT)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.runs < 1 or (args.max_delay is not None and not args.max_delay > 0):
        parser.error("--runs must be >= 1 and --max-delay > 0")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="sigint-drill-"))
    signum = signal.Signals[f"SIG{args.signal}"]
    print(f"SIG{args.signal} drill: {args.runs} runs, seed {seed}, in {workdir}", flush=True)
    max_delay = args.max_delay or _measure(workdir / "uninterrupted", args.set, args.timeout)
    print(f"moments drawn between 0 and {max_delay:.1f} s", flush=True)
    rng = random.Random(seed)
    failed = 0
    for index in range(1, args.runs + 1):
        delay = rng.uniform(0.0, max_delay)
        run = drill_once(workdir / f"run-{index:02d}", delay, args.set, args.timeout, signum)
        failed += bool(run.problems)
        print(f"run {index}/{args.runs}: {run.describe()}", flush=True)
    print(f"{args.runs - failed} of {args.runs} runs passed (seed {seed})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
