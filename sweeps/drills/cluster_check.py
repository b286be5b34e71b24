"""`make cluster-check`: an on-premises cluster brought up by Ray's launcher on this machine,
its smoke sweep run and read back, `ray up` again, a worker lost, `ray down`, and nothing left.

    python -m sweeps.drills.cluster_check [--workers N] [--set KEY=VALUE ...] [--skip-worker-loss]

The nodes (sweeps.drills.lab_nodes): a head and N workers, each a network namespace with its own
sshd, processes, /tmp and home. The cluster file is ray_cluster_onprem.yaml's template filled in
with their addresses, root and a key made for the run (sweeps.cluster_files). Each step prints
its time and outcome, and the transcript goes to reports/cluster-check/transcript.md with every
command's output beside it. Needs root and Debian's openssh-server, sudo and rsync. Whatever
happens (a failed step, Ctrl-C), the nodes, their namespaces and the run's folder are removed.
Exit status: 0 every step passed, 1 a step failed (its line says why and what to do), 130
interrupted (Ctrl-C; the lab removed all the same).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sweeps.cluster_files import REPO, Lab, onprem_file
from sweeps.drills.lab_cluster import LabCluster
from sweeps.drills.lab_nodes import CommandFailed
from sweeps.drills.transcript import Transcript

RAY = str(REPO / ".venv" / "bin" / "ray")
CLUSTER_NAME = "xlt-cluster-check"
# Ray's autoscaler v2 (`ray up`'s default since Ray 2.50) never starts the local provider's
# workers (its monitor drops the head as "no longer found" and keeps "Adding 1 node(s)";
# ray-project/ray#59905): v1 does (docs/cluster.md, "On your own machines").
# Ray's own worker processes on a node: any other `ray::` process is a task or actor (a trial).
RAY_OWN = ("IDLE", "DashboardAgent", "RuntimeEnvAgent")
LAUNCHER_ENV = {"RAY_UP_enable_autoscaler_v2": "0"}
SMOKE = ["epochs=0.2", "confirm_seeds=0"]
# Made once on the head (their content and modification time stay); rewritten each setup with
# the same content (their content stays).
MADE_ONCE = [".xlt/pg_password", ".ray/auth_token", ".xlt/mlflow_admin_password"]
MADE_ONCE += [".xlt/mlflow_secret_key"]
REWRITTEN = [".pgpass", ".xlt/mlflow_auth.ini", ".mlflow/credentials", ".xlt/env.sh"]


class ClusterCheck:
    """The steps, on a lab; each command's output in `logs`."""

    def __init__(self, lab: LabCluster, logs: Path, settings: list[str]):
        self.lab = lab
        self.logs = logs
        self.settings = settings
        self.file = lab.run_dir / "cluster.yaml"
        self.count = 0

    def ray(self, what: str, *args: str, timeout: float = 600, check: bool = True) -> str:
        """`ray ARGS FILE` from the repository root (the launcher); its output, logged."""
        self.count += 1
        log = self.logs / f"{self.count:02d}-{what.replace(' ', '-')}.log"
        command = [RAY, *args[:1], str(self.file), *args[1:]]
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **LAUNCHER_ENV)
        try:
            done = subprocess.run(
                command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise CommandFailed(f"{what}: no end after {timeout:.0f} s (see {log})") from None
        log.write_text(f"$ ray {' '.join(args)}\n{done.stdout}{done.stderr}")
        if check and done.returncode:
            raise CommandFailed(
                f"{what} failed: {failure_line(done.stdout + done.stderr)} (see {log})"
            )
        return done.stdout

    def on_head(self, what: str, command: str, timeout: float = 600, check=True) -> str:
        return self.ray(what, "exec", f"cd ~/xlt-sweeps && {command}", timeout=timeout, check=check)

    def write_file(self) -> str:
        head, *workers = self.lab.nodes
        lab = Lab(head.address, tuple(w.address for w in workers), "root", str(self.lab.key))
        self.file.write_text(onprem_file(Lab(**{**lab.__dict__, "cluster_name": CLUSTER_NAME})))
        self.lab.launcher_files += [
            Path(tempfile.gettempdir()) / "ray" / f"cluster-{CLUSTER_NAME}.{end}"
            for end in ("state", "lock")
        ]
        for path in self.lab.launcher_files:
            path.unlink(missing_ok=True)
        (self.lab.run_dir / "shared").mkdir()
        return f"{self.file.name}: head {head.address}, workers {lab.worker_ips}, user root"

    def ray_up(self) -> str:
        self.ray("ray up", "up", "-y", "--no-config-cache")
        return f"head set up; {self.wait_for_workers()}"

    def wait_for_workers(self, timeout: float = 420) -> str:
        """Until every worker has joined (the head's autoscaler sets them up)."""
        wanted = sorted(node.address for node in self.lab.nodes)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.on_head(
                "nodes", "python -m sweeps.drills.cluster_readback --nodes", check=False
            )
            nodes = (
                json.loads(out.strip().splitlines()[-1]).get("nodes", []) if "nodes" in out else []
            )
            if nodes == wanted:
                return f"nodes alive: {', '.join(nodes)}"
            time.sleep(5)
        raise CommandFailed(f"the workers did not join in {timeout:.0f} s (see {self.logs})")

    def sweep_command(self, extra: list[str]) -> str:
        """The smoke sweep, its checkpoints in a folder every node reaches at the same path
        (the lab's shared file system standing in for NFS; a head's local folder fails every
        trial on a worker at its first checkpoint)."""
        storage = ["--storage-path", str(self.lab.run_dir / "shared" / "ray_results")]
        return " ".join(
            ["python sweeps/ear_xnli.py --preset smoke", *self.settings, *storage, *extra]
        )

    def sweep(self, extra: list[str] = (), what: str = "sweep") -> str:
        out = self.on_head(what, self.sweep_command(list(extra)))
        lines = [line for line in out.splitlines() if "trials of the reported phase" in line]
        report = [
            line.split(":", 1)[1].strip() for line in out.splitlines() if "Report files:" in line
        ]
        return f"{(lines or ['?'])[0].strip()}; report {(report or ['?'])[0]}"

    def read_back(self) -> str:
        out = self.on_head(
            "read back",
            "python -m sweeps.drills.cluster_readback " + " ".join(self.settings),
            check=False,
        )
        summary = json.loads(out.strip().splitlines()[-1])
        if summary["problems"]:
            raise CommandFailed(f"read back: {'; '.join(summary['problems'])}")
        return (
            f"{summary['runs']} runs through {summary['tracking_uri']} as admin (401 without "
            f"the password); latest sweep's trials {summary['trial_runs']} on "
            f"{', '.join(summary['trial_nodes'])}"
        )

    def live_audit(self) -> str:
        if importlib.util.find_spec("sweeps.cluster_audit") is None:
            return "SKIPPED: `python -m sweeps.cluster --live` is not there yet"
        # A finding is recorded, not fatal: the steps after it still run.
        out = self.on_head("live audit", "python -m sweeps.cluster --live", check=False)
        lines = [
            line for line in out.splitlines() if line.strip() and "Shared connection" not in line
        ]
        verdict = "FAILED" if "Command failed" in out else "passed"
        return f"{verdict}: {' / '.join(lines[-3:])}"

    def head_state(self) -> dict:
        """The head's secrets (sha256 and mtime, never their content), its databases' oids,
        and the runs its server holds."""
        home = self.lab.nodes[0].home
        files = {
            name: (
                hashlib.sha256((home / name).read_bytes()).hexdigest(),
                (home / name).stat().st_mtime_ns,
            )
            for name in MADE_ONCE + REWRITTEN
        }
        query = "SELECT oid, datname FROM pg_database WHERE datname LIKE 'mlflow%' ORDER BY 2"
        databases = self.lab.inside(
            self.lab.nodes[0], ["runuser", "-u", "postgres", "--", "psql", "-tAc", query], "psql"
        )
        return {"files": files, "databases": databases.split(), "runs": self.read_back()}

    def ray_up_again(self) -> str:
        before = self.head_state()
        self.ray("ray up again", "up", "-y", "--no-config-cache")
        self.wait_for_workers()
        after = self.head_state()
        changed = [
            name
            for name in MADE_ONCE + REWRITTEN
            if after["files"][name][0] != before["files"][name][0]
            or (name in MADE_ONCE and after["files"][name][1] != before["files"][name][1])
        ]
        if changed or after["databases"] != before["databases"]:
            raise CommandFailed(f"ray up again changed {changed or after['databases']}")
        if after["runs"].split(" runs")[0] != before["runs"].split(" runs")[0]:
            raise CommandFailed(f"the server's runs changed: {after['runs']}")
        return (
            f"no secret made again ({len(MADE_ONCE)} files same content and mtime, "
            f"{len(REWRITTEN)} same content), databases {' '.join(after['databases'])} kept, "
            f"{after['runs'].split(' through')[0]} kept"
        )


def failure_line(output: str) -> str:
    """The line of a command's output that says what failed: the last error pip, Ray or the
    shell printed before Ray's own "update-failed" lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    end = next((i for i, line in enumerate(lines) if "update-failed" in line), len(lines))
    causes = [line for line in lines[:end] if re.search(r"(?i)error|failed|terminated", line)]
    return (causes or lines[:end] or ["(no output)"])[-1][:300]


def worker_lost(check: ClusterCheck) -> str:
    """A second sweep; the worker's raylet killed once a trial runs there; the sweep resumed
    if it stopped; then nothing tracked lost (one FINISHED run per configuration and seed)."""
    worker = check.lab.nodes[1]
    extra = ["--set", "seeds=4,5"]
    command = [RAY, "exec", str(check.file), f"cd ~/xlt-sweeps && {check.sweep_command(extra)}"]
    log = (check.logs / "worker-lost-sweep.log").open("w")
    driver = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not trial_running(check, worker) and time.monotonic() < deadline:
            time.sleep(2)
        time.sleep(5)
        check.lab.inside(worker, ["pkill", "-KILL", "-x", "raylet"], "pkill raylet")
        killed = time.monotonic()
        code = driver.wait(timeout=600)
    finally:
        if driver.poll() is None:
            driver.kill()
    text = (check.logs / "worker-lost-sweep.log").read_text()
    failed = text.count("Trial task failed")
    restarted = (
        "restarted by the head's autoscaler" if "Restarting 1 nodes" in text else "not restarted"
    )
    outcome = (
        f"raylet killed: {failed} trials on it failed and were retried, the worker {restarted}; "
        f"the sweep ended {code} after {time.monotonic() - killed:.0f} s"
    )
    if code:
        check.wait_for_workers()
        check.sweep([*extra, "--resume"], what="resume")
        outcome += "; --resume finished it"
    settings = check.settings
    check.settings = [*settings, *extra]
    try:
        return f"{outcome}; {check.read_back()}"
    finally:
        check.settings = settings


def trial_running(check: ClusterCheck, node) -> bool:
    out = check.lab.inside(node, ["ps", "-eo", "args"], "ps")
    return any(
        line.startswith("ray::") and not any(name in line for name in RAY_OWN)
        for line in out.splitlines()
    )


def ray_down(check: ClusterCheck, timeout: float = 150) -> str:
    """`ray down`, then until no node has a Ray process (or `timeout`, then the step fails):
    Ray 2.60 runs `ray stop` on the head only (the local provider's workers are just marked
    terminated); a worker's raylet ends once the head's GCS is gone, and the watcher the
    worker's start commands leave behind then stops the rest of its Ray."""
    check.ray("ray down", "down", "-y")
    start = time.monotonic()
    ended = {}
    while len(ended) < len(check.lab.nodes) and time.monotonic() - start < timeout:
        for node in check.lab.nodes:
            if node.name not in ended and not ray_processes(check, node):
                ended[node.name] = time.monotonic() - start
        time.sleep(2)
    left = {node.name: ray_processes(check, node) for node in check.lab.nodes}
    left = {name: names for name, names in left.items() if names}
    if left:
        raise CommandFailed(f"Ray processes left {timeout:.0f} s after ray down: {left}")
    head = check.lab.inside(check.lab.nodes[0], ["ps", "-eo", "args"], "ps")
    mlflow = "keeps running" if "mlflow server" in head else "stopped"
    gone = ", ".join(f"{name} after {seconds:.0f} s" for name, seconds in ended.items())
    return (
        f"no Ray process left: {gone}; the head's MLflow server {mlflow} (ray down stops Ray only)"
    )


def ray_processes(check: ClusterCheck, node) -> list[str]:
    """The names of the node's Ray processes (its own daemons, workers and agents)."""
    out = check.lab.inside(node, ["ps", "-eo", "comm=,args="], "ps")
    return sorted(
        {
            process_name(line)
            for line in out.splitlines()
            if line.strip()
            and re.search(r"raylet|gcs_server|^\S+\s+ray::|/site-packages/ray/|\['ray'", line)
        }
    )


def process_name(ps_line: str) -> str:
    """`raylet`, `ray::DashboardAgent`; a Python process by its script (`log_monitor.py`)."""
    comm, _, args = ps_line.strip().partition(" ")
    script = re.search(r"(\S+\.py)\b", args) if comm.startswith("python") else None
    return Path(script.group(1)).name if script else comm


def run_check(args: argparse.Namespace, transcript: Transcript) -> None:
    logs = transcript.path.parent
    run_dir = Path("/var/tmp") / f"xlt-cluster-check-{os.getpid()}"
    lab = LabCluster(run_dir, args.workers, REPO)
    try:
        transcript.step("nodes", lambda: lab.start() or node_summary(lab))
        settings = [item for value in args.settings or SMOKE for item in ("--set", value)]
        check = ClusterCheck(lab, logs, settings)
        transcript.step("cluster file", check.write_file)
        transcript.step("ray up", check.ray_up)
        transcript.step("sweep", check.sweep)
        transcript.step("read back", check.read_back)
        transcript.step("live audit", check.live_audit)
        transcript.step("ray up again", check.ray_up_again)
        if not args.skip_worker_loss:
            transcript.step("worker lost", lambda: worker_lost(check))
        transcript.step("ray down", lambda: ray_down(check))
    finally:
        start = time.monotonic()
        lab.close()
        time.sleep(1)
        left = lab.leftovers()
        transcript.record("lab removed", start, f"left: {left or 'nothing'}")


def node_summary(lab: LabCluster) -> str:
    return ", ".join(f"{node.name} {node.address}" for node in lab.nodes) + (
        ": sshd (key only) in network, PID, mount and UTS namespaces of their own"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sweeps.drills.cluster_check")
    parser.add_argument("--workers", type=int, default=1, choices=range(1, 5))
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="KEY=VALUE")
    parser.add_argument("--skip-worker-loss", action="store_true")
    args = parser.parse_args(argv)
    logs = REPO / "reports" / "cluster-check"
    logs.mkdir(parents=True, exist_ok=True)
    for old in logs.glob("*.log"):
        old.unlink()
    transcript = Transcript(logs / "transcript.md")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run_check(args, transcript)
    except CommandFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the lab was removed", file=sys.stderr)
        return 130
    finally:
        transcript.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
