"""The lab's nodes brought up and, whatever happens, removed (sweeps.drills.lab_nodes makes
their files and commands): `with LabCluster(run_dir, workers, repo) as lab:`. Closing kills
each node's PID namespace (its init, so every process in it), deletes the namespaces and the
bridge, and removes the run's folder and the launcher's state for the cluster."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from sweeps.drills.lab_nodes import (
    BRIDGE,
    CommandFailed,
    Node,
    boot_command,
    lab_nodes,
    make_image,
    network_commands,
    postgres_version,
    prepare_node,
    run,
    teardown_commands,
)

TOOLS = ("sshd", "ssh", "rsync", "sudo", "unshare", "nsenter", "ip", "ssh-keygen")
INSTALL_HINT = "apt-get install -y openssh-server sudo rsync"


def check_machine() -> None:
    """CommandFailed (one line: the cause, what to do) unless this machine can make the lab."""
    if os.geteuid() != 0:
        raise CommandFailed("needs root (network namespaces, sshd, mounts): run it as root")
    missing = [tool for tool in TOOLS if not shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin")]
    if missing:
        raise CommandFailed(f"{', '.join(missing)} not found: {INSTALL_HINT}")
    postgres_version()  # the head's database server, before any node is made


class LabCluster:
    """The head and `workers` worker nodes on this machine, each an SSH host (see lab_nodes)."""

    def __init__(self, run_dir: Path, workers: int, repo: Path):
        self.run_dir = run_dir
        self.repo = repo
        self.nodes = lab_nodes(run_dir, workers)
        self.key = run_dir / "id_ed25519"
        self.processes: dict[str, subprocess.Popen] = {}
        self.launcher_files: list[Path] = []

    def __enter__(self) -> LabCluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        check_machine()
        self.run_dir.mkdir(mode=0o711)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], "ssh-keygen")
        public_key = self.key.with_suffix(".pub").read_text()
        image_site = make_image(self.run_dir, self.repo)
        for node in self.nodes:
            prepare_node(node, self.nodes, public_key, image_site, self.repo)
        for command in teardown_commands(self.nodes):  # a killed run's leftovers, if any
            subprocess.run(command, capture_output=True)
        for command in network_commands(self.nodes):
            run(command, " ".join(command[:4]))
        for node in self.nodes:
            log = (node.root / "boot.log").open("w")
            self.processes[node.name] = subprocess.Popen(
                boot_command(node), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        for node in self.nodes:
            self.wait_for_sshd(node)

    def wait_for_sshd(self, node: Node, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes[node.name].poll() is not None:
                log = (node.root / "boot.log").read_text().strip().splitlines()
                cause = next((line for line in log if "mount:" in line or "rror" in line), log[-1:])
                raise CommandFailed(f"node {node.name} did not boot: {cause}")
            try:
                socket.create_connection((node.address, 22), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise CommandFailed(f"node {node.name}: sshd not listening on {node.address}:22")

    def init_pid(self, node: Node) -> int:
        """The node's init (PID 1 of its namespace), as this machine numbers it."""
        unshare = self.processes[node.name].pid
        children = Path(f"/proc/{unshare}/task/{unshare}/children").read_text().split()
        if not children:
            raise CommandFailed(f"node {node.name} is not running")
        return int(children[0])

    def inside(self, node: Node, command: list[str], what: str) -> str:
        """`command`'s output, run in the node's namespaces (network, PID, mounts)."""
        enter = ["nsenter", "-t", str(self.init_pid(node)), "-n", "-p", "-m", "-u", "--"]
        return run(enter + command, what).stdout

    def close(self) -> None:
        """Every node killed, the network and the run's files removed; errors ignored (a
        half-made lab is closed as far as it got)."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for command in teardown_commands(self.nodes):
            subprocess.run(command, capture_output=True)
        # The launcher's own SSH connections to the nodes (an interrupted `ray up`'s): each
        # names the run's key, so the run's folder is in its command line.
        pgrep = subprocess.run(["pgrep", "-f", str(self.run_dir)], capture_output=True, text=True)
        for pid in pgrep.stdout.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        # The launcher's state for the cluster, and Ray's cached copies of its file (they name
        # the run's key).
        cached = Path(tempfile.gettempdir()).glob("ray-config-*")
        self.launcher_files += [path for path in cached if str(self.run_dir) in path.read_text()]
        for path in self.launcher_files:
            path.unlink(missing_ok=True)

    def leftovers(self) -> list[str]:
        """What of the lab is still on this machine: namespaces, the bridge, processes."""
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        left = [f"namespace {n.netns}" for n in self.nodes if n.netns in netns.split()]
        if Path(f"/sys/class/net/{BRIDGE}").exists():
            left.append(f"bridge {BRIDGE}")
        pgrep = subprocess.run(["pgrep", "-f", str(self.run_dir)], capture_output=True, text=True)
        left += [f"process {pid}" for pid in pgrep.stdout.split()]
        if self.run_dir.exists():
            left.append(f"folder {self.run_dir}")
        return left
