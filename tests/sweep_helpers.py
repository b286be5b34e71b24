"""Helpers shared by the sweep tests that run real (tiny) sweeps."""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import scaled_timeout, what_went_wrong
from mlflow.tracking import MlflowClient
from tracking_stores import sqlite_uri, tracking_store

from xlt_schema import PARENT_ROLE, ROLE_TAG, TRIAL_ROLE

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "sweeps" / "ear_xnli.py"
# The smallest sweep that still trains and evaluates: seconds per trial on one core.
TINY = [
    "--set",
    "epochs=1",
    "--set",
    "max_train_examples=200",
    "--set",
    "max_eval_examples=50",
    "--set",
    "tiny_layers=2",
    "--set",
    "layer=2",
    # No confirmation phase: these sweeps test their own path (faults, signals, resumes); the
    # demo's shared sweep (DEMO_SETTINGS) and tests/sweeps/test_confirmation.py confirm.
    "--set",
    "confirm_seeds=0",
]
# One EAR configuration besides the baseline.
ONE_EAR = ["--set", "alpha=1", "--set", "beta=0.1"]


def start_script(cwd, *args, env=None, script: Path = SCRIPT) -> subprocess.Popen:
    """The sweep script (ear_xnli's unless `script`) in its own session, so that it and what
    it starts can be stopped together; its output goes to `driver.log` in `cwd` (a pipe
    nobody reads would block it)."""
    log = open(Path(cwd) / "driver.log", "a")
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_for(condition, timeout_s: float, what: str, interval_s: float = 0.5):
    """Poll `condition` until it returns something truthy; fail after `timeout_s`."""
    timeout_s = scaled_timeout(timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def _client(uri: str) -> MlflowClient:
    """A client of the sweep's store, opened under the lock the sweep creates a new SQLite
    store under (`sweeps.records.tracking`): a poller that opened it unlocked while the driver
    creates its tables would race it ("table ... already exists")."""
    if not uri.startswith("sqlite:///"):
        return MlflowClient(uri)
    with open(f"{uri.removeprefix('sqlite:///')}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        client = MlflowClient(uri)
        client.search_experiments(max_results=1)
    return client


def _runs_of_role(uri: str, experiment: str, role: str, max_results: int):
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).exists():
        return []  # the sweep has not created its store yet
    client = _client(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    return client.search_runs(
        [found.experiment_id],
        filter_string=f"tags.`{ROLE_TAG}` = '{role}'",
        max_results=max_results,
    )


def child_runs(uri: str, experiment: str = "ear_xnli"):
    return _runs_of_role(uri, experiment, TRIAL_ROLE, max_results=1000)


def parent_runs(uri: str, experiment: str = "ear_xnli"):
    return _runs_of_role(uri, experiment, PARENT_ROLE, max_results=100)


def processes_mentioning(marker: str) -> list[int]:
    """Pids of live processes whose command line mentions `marker` (e.g. a Ray temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def kill_driver(process: subprocess.Popen, ray_tmpdir: str) -> None:
    """SIGKILL the driver's whole session, then check that the local Ray it started went with
    it (Ray's processes share the driver's fate); stragglers are killed and reported."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=scaled_timeout(30))
    _ray_gone(ray_tmpdir)


def interrupt_driver(process: subprocess.Popen, ray_tmpdir: str) -> int:
    """SIGINT to the driver's whole session, as Ctrl-C in its terminal sends it; its exit
    code, once it and the local Ray it started have exited (stragglers killed and reported)."""
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=scaled_timeout(180))
    _ray_gone(ray_tmpdir)
    return code


def _ray_gone(ray_tmpdir: str) -> None:
    """Check that the stopped driver's local Ray (under `ray_tmpdir`) exited with it."""
    try:
        wait_for(
            lambda: not processes_mentioning(ray_tmpdir),
            60,
            "the stopped driver's Ray processes to exit",
        )
    except AssertionError:
        leftovers = processes_mentioning(ray_tmpdir)
        for pid in leftovers:
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"Ray processes outlived the stopped driver: {leftovers}")


def resume_sweep(cwd, args: list[str], env: dict) -> subprocess.CompletedProcess:
    """ear_xnli's sweep with `args` and `--resume` in `cwd`, as an interrupted sweep says to
    continue; fails the test unless it exits 0."""
    resumed = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--resume"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(600),
    )
    assert resumed.returncode == 0, what_went_wrong(resumed)
    return resumed


def run_command(
    argv: list[str], workdir: Path, timeout: int = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """`argv` (the Python interpreter prepended) with cwd `workdir`, tracked through
    `MLFLOW_TRACKING_URI` in a SQLite store there, as a user runs a README command; fails the
    test unless it exits 0."""
    completed = subprocess.run(
        [sys.executable, *argv],
        cwd=workdir,
        env={**os.environ, "MLFLOW_TRACKING_URI": sqlite_uri(workdir), **(env or {})},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(timeout),
    )
    assert completed.returncode == 0, f"{' '.join(argv)} {what_went_wrong(completed)}"
    return completed


def run_smoke_sweep(
    name: str, workdir: Path, *args: str, timeout: int = 600
) -> tuple[str, subprocess.CompletedProcess]:
    """`sweeps/<name>.py --preset smoke` in `workdir`, tracked in its own SQLite store there
    (an empty one copied in: tests/tracking_stores.py); fails the test unless it exits 0.
    Returns the tracking URI and the finished process."""
    script = REPO / "sweeps" / f"{name}.py"
    uri = tracking_store(workdir)
    return uri, run_command([str(script), "--preset", "smoke", *args], workdir, timeout)


# The `--set` values of the smoke sweeps shared by a whole test session (conftest's
# `ear_xnli_smoke`, `robust_xnli_smoke`, `adjust_xnli_smoke`): paired seeds 0 and 1, every
# grid point, training steps, evaluation beyond dev and the report, on the smallest work that
# keeps each reading test's numbers (100 and 60 evaluation examples). The demo's models learn
# nothing this small (its report warns so and registers none), as with the README test's
# settings it replaces.
DEMO_SETTINGS = {
    "epochs": "0.2",
    "evals_per_epoch": "1",
    "tiny_layers": "2",
    "layer": "2",  # EAR's smoke points read layer 6 of 6
    "max_train_examples": "200",
    "max_eval_examples": "100",
}
# The robust and adjustment sweeps leave out the confirmation phase (the demo's shared sweep
# runs it): their tests read the grid, whose runs it would not change, at a third more trials.
ROBUST_SETTINGS = {
    "epochs": "1",
    "evals_per_epoch": "1",
    "tiny_layers": "2",
    "max_train_examples": "200",
    "max_eval_examples": "60",
    "confirm_seeds": "0",
}
# The adjustment's measured distances and probes need the smoke model's 6 layers.
ADJUST_SETTINGS = {
    "epochs": "1",
    "evals_per_epoch": "1",
    "max_train_examples": "300",
    "max_eval_examples": "100",
    "parallel_max_sentences": "300",
    "target_langs": "es,de",
    "confirm_seeds": "0",
}


def set_arguments(settings: dict[str, str]) -> list[str]:
    """`--set key=value` for each of `settings`."""
    return [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]


@dataclass(frozen=True)
class SharedSweep:
    """A finished smoke sweep that several tests read: `sweeps/<name>.py --preset smoke`
    with `settings` appended, run in `workdir` (its ray_results/ and reports/), tracked at
    `uri`. Tests must not write to it: a test that does works on `copy_to`'s copy."""

    name: str
    settings: dict[str, str]
    workdir: Path
    uri: str
    completed: subprocess.CompletedProcess

    def copy_to(self, destination: Path) -> "SharedSweep":
        """A copy of the working directory (its SQLite store included) at `destination`, for a
        test that writes; the copied store's artifacts stay where the sweep logged them."""
        shutil.copytree(self.workdir, destination)
        copied = self.uri.replace(str(self.workdir), str(destination))
        return SharedSweep(self.name, self.settings, destination, copied, self.completed)


def run_shared_sweep(
    name: str,
    root: Path,
    settings: dict[str, str],
    beside: SharedSweep | None = None,
    new_store: bool = False,
    timeout: int = 900,
) -> SharedSweep:
    """`sweeps/<name>.py --preset smoke` with `settings` in `root/<name>`, tracked in a SQLite
    store there (a copy of `beside`'s, which then stays as its own tests read it; else a copy
    of an empty store, or with `new_store` one the sweep makes), as a user runs the README
    command; fails unless it exits 0.
    Once per test session: `root` is shared by the session's pytest-xdist workers (conftest's
    `session_root`); the first to ask runs the sweep under a lock on `root/<name>.lock` and
    records how it ended, the others wait for it and read the record."""
    workdir = root / name
    record = root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, on failure too
        if record.is_file():
            saved = json.loads(record.read_text())
            completed = subprocess.CompletedProcess(
                saved["args"], 0, saved["stdout"], saved["stderr"]
            )
            return SharedSweep(name, settings, workdir, saved["uri"], completed)
        shutil.rmtree(workdir, ignore_errors=True)  # an earlier worker's failed attempt
        workdir.mkdir()
        uri = sqlite_uri(workdir)
        if beside is not None:
            shutil.copy2(beside.workdir / "mlflow.db", workdir / "mlflow.db")
        elif not new_store:
            tracking_store(workdir)
        argv = [str(REPO / "sweeps" / f"{name}.py"), "--preset", "smoke", *set_arguments(settings)]
        completed = run_command(argv, workdir, timeout=timeout)  # tracked in `uri`
        saved = {"args": argv, "stdout": completed.stdout, "stderr": completed.stderr, "uri": uri}
        record.write_text(json.dumps(saved))
        return SharedSweep(name, settings, workdir, uri, completed)


def smoke_spec(name: str, overrides: list[str], data_dir: str | None = None):
    """The smoke `SweepSpec` of `sweeps/<name>.py` with `--set` values applied, as the command
    line builds it (paths made absolute)."""
    import importlib

    from sweeps.cli import apply_overrides, resolve_paths
    from sweeps.spec.experiment import experiment_spec
    from xlt_core.config import parse_assignments

    spec = experiment_spec(importlib.import_module(f"sweeps.{name}"), "smoke", data_dir)
    return resolve_paths(apply_overrides(spec, parse_assignments(overrides)))


def printed_resume_command(log: str) -> list[str]:
    """The `--resume` command an interrupted sweep printed last (the line after
    "continue with:"), as an argv."""
    import shlex

    lines = log.splitlines()
    marks = [i for i, line in enumerate(lines) if line.rstrip().endswith("continue with:")]
    assert marks, f"no resume command printed:\n{log[-3000:]}"
    return shlex.split(lines[marks[-1] + 1])


def plugin_sweep(tmp_path: Path, cwd: Path, uri: str, plugin: str, source: str, **env):
    """A runner of the smoke sweep's baseline and one EAR configuration x 2 seeds in `cwd`
    (`--max-failures 0`), every process of it importing module `plugin` (XLT_PLUGINS) of
    `source`, with `env` added to the environment; `run(*extra)` returns the finished process."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / f"{plugin}.py").write_text(source)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(plugins), os.environ.get("PYTHONPATH")])),
        "XLT_PLUGINS": plugin,
        "RAY_TMPDIR": tempfile.mkdtemp(prefix="xr", dir="/tmp"),
        **env,
    }
    argv = [sys.executable, str(SCRIPT), "--preset", "smoke", "--tracking-uri", uri, *TINY]
    argv += [*ONE_EAR, "--set", "seeds=0,1", "--max-failures", "0"]

    def run(*extra):
        return subprocess.run(
            argv + list(extra),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=scaled_timeout(600),
        )

    return run
