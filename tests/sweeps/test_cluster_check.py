"""The fast parts of `make cluster-check` (sweeps.drills.cluster_check; the bring-up itself is run
by hand, docs/cluster.md): the nodes' namespaces, sshd and boot commands, the cluster file for
their addresses, the cleanup that runs whatever happened, and the one-line errors."""

import subprocess

import pytest
import yaml

from sweeps.cluster import validate_cluster_file
from sweeps.cluster_files import Lab, onprem_file
from sweeps.drills import lab_cluster
from sweeps.drills.cluster_check import failure_line, main, ray_processes
from sweeps.drills.lab_cluster import LabCluster, check_machine
from sweeps.drills.lab_nodes import (
    BRIDGE,
    CommandFailed,
    boot_command,
    boot_script,
    lab_nodes,
    network_commands,
    sshd_config,
    teardown_commands,
)
from sweeps.drills.transcript import Transcript


def test_the_nodes_are_private_addresses_on_one_bridge(tmp_path):
    head, worker = lab_nodes(tmp_path, 1)
    assert (head.name, head.address, worker.address) == ("head", "10.77.0.1", "10.77.0.2")
    commands = [" ".join(command) for command in network_commands([head, worker])]
    assert commands[:3] == [
        f"ip link add {BRIDGE} type bridge",
        f"ip addr add 10.77.0.254/24 dev {BRIDGE}",
        f"ip link set {BRIDGE} up",
    ]
    assert "ip netns add xlt-worker1" in commands
    assert "ip netns exec xlt-worker1 ip addr add 10.77.0.2/24 dev eth0" in commands
    # No route out: no default route, no NAT is ever added.
    assert not any("route" in command or "iptables" in command for command in commands)
    assert [" ".join(c) for c in teardown_commands([head, worker])] == [
        "ip link del xlt-head",
        "ip netns del xlt-head",
        "ip link del xlt-worker1",
        "ip netns del xlt-worker1",
        f"ip link del {BRIDGE}",
    ]


def test_each_node_has_its_own_processes_tmp_home_and_key_only_sshd(tmp_path):
    head, worker = lab_nodes(tmp_path, 1)
    command = boot_command(worker)
    assert command[:4] == ["ip", "netns", "exec", "xlt-worker1"]
    for flag in ("--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--uts"):
        assert flag in command
    script = boot_script(worker)
    assert "mount -t tmpfs -o mode=1777 tmpfs /tmp" in script
    assert f"mount --bind {worker.root}/home /root" in script
    assert script.rstrip().splitlines()[-1].startswith("exec /usr/sbin/sshd -D")
    assert "pg_ctlcluster" not in script and "pg_ctlcluster 15 main start" in boot_script(head)
    config = sshd_config(worker)
    for line in ("ListenAddress 10.77.0.2", "PasswordAuthentication no", "UsePAM no"):
        assert line in config.splitlines()


def test_the_cluster_file_for_the_nodes_passes_the_offline_checker(tmp_path):
    head, worker = lab_nodes(tmp_path, 1)
    path = tmp_path / "cluster.yaml"
    key = str(tmp_path / "id_ed25519")
    path.write_text(onprem_file(Lab(head.address, (worker.address,), "root", key)))
    prepared = validate_cluster_file(path)
    assert prepared["auth"] == {"ssh_user": "root", "ssh_private_key": key}
    start = " ".join(yaml.safe_load(path.read_text())["head_start_ray_commands"])
    assert "--num-cpus=0" in start and "/root/.xlt/mlflow_auth.ini" in start


def test_closing_the_lab_kills_its_nodes_and_removes_its_files(tmp_path, monkeypatch):
    """Whatever happened before (here: a node up, nothing else), close() kills the node's
    process group, runs the network's teardown and removes the run's folder and the
    launcher's state."""
    ran = []
    real_run = subprocess.run
    monkeypatch.setattr(
        lab_cluster.subprocess,
        "run",
        lambda command, **kw: ran.append(command) or real_run(["true"], **kw),
    )
    lab = LabCluster(tmp_path / "run", 1, tmp_path)
    lab.run_dir.mkdir()
    state = tmp_path / "cluster-x.state"
    state.write_text("{}")
    lab.launcher_files.append(state)
    node = subprocess.Popen(["sleep", "60"], start_new_session=True)
    lab.processes["head"] = node
    lab.close()
    assert node.returncode == -9
    teardown = teardown_commands(lab.nodes)
    assert ran == [*teardown, ["pgrep", "-f", str(lab.run_dir)]]
    assert not lab.run_dir.exists() and not state.exists()


def test_without_root_or_sshd_the_check_says_what_to_do(monkeypatch):
    monkeypatch.setattr(lab_cluster.os, "geteuid", lambda: 1000)
    with pytest.raises(CommandFailed, match="needs root"):
        check_machine()
    monkeypatch.setattr(lab_cluster.os, "geteuid", lambda: 0)
    monkeypatch.setattr(lab_cluster.shutil, "which", lambda tool, path=None: tool != "sshd")
    with pytest.raises(CommandFailed, match="sshd not found: apt-get install -y openssh-server"):
        check_machine()


def test_a_failed_ray_up_is_named_by_its_cause():
    output = "\n".join(
        [
            "INFO (3/20) pip install ...",
            "ERROR: No matching distribution found for setuptools>=69",
            "ERR updater.py:177 -- New status: update-failed",
            "ERR updater.py:194 -- !!!",
        ]
    )
    assert failure_line(output) == "ERROR: No matching distribution found for setuptools>=69"


def test_the_transcript_records_each_step_and_a_failure(tmp_path, capsys):
    transcript = Transcript(tmp_path / "transcript.md")
    transcript.step("ray up", lambda: "head set up; 16385|mlflow kept")
    with pytest.raises(CommandFailed):
        transcript.step("sweep", lambda: (_ for _ in ()).throw(CommandFailed("no worker")))
    transcript.write()
    table = (tmp_path / "transcript.md").read_text()
    assert "| ray up |" in table and "| sweep |" in table and "FAILED: no worker" in table
    assert "16385\\|mlflow kept |" in table  # a | in an outcome does not split its cell
    assert "ray up" in capsys.readouterr().out


def test_the_check_refuses_a_bad_worker_count(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--workers", "9"])
    assert stop.value.code == 2 and "--workers" in capsys.readouterr().err


def test_ray_processes_are_told_from_the_nodes_own_and_mlflows():
    ps = "\n".join(
        [
            "sshd            sshd: /usr/sbin/sshd -D -e -f /var/tmp/x/head/sshd_config",
            "postgres        /usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main",
            "mlflow          /root/venv/bin/python /root/venv/bin/mlflow server --port 5000",
            "python          /root/venv/bin/python -m uvicorn --log-config /x/mlflow/server/u.yaml",
            "raylet          /x/site-packages/ray/core/src/ray/raylet/raylet --raylet_socket_name=",
            "ray::Dashboard  ray::DashboardAgent",
            "python          /root/venv/bin/python -u /x/site-packages/ray/_private/log_monitor.py",
        ]
    )

    class Lab:
        def inside(self, node, command, what):
            return ps

    class Check:
        lab = Lab()

    assert ray_processes(Check(), None) == ["log_monitor.py", "ray::Dashboard", "raylet"]
