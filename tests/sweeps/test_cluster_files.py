"""The AWS and the on-premises cluster files are made from one template (sweeps.cluster_files):
the committed files are what it makes, an edit of one alone fails, both run the same setup and
start commands, and an on-premises file for a lab's addresses passes the offline checker."""

import shutil

import pytest
import yaml

from sweeps.cluster import validate_cluster_file
from sweeps.cluster_files import (
    AWS_FILE,
    ONPREM_FILE,
    REPO,
    Lab,
    main,
    onprem_file,
    stale_files,
)
from xlt_core.errors import DataError

NODE_COMMANDS = (
    "setup_commands",
    "head_setup_commands",
    "worker_setup_commands",
    "head_start_ray_commands",
    "worker_start_ray_commands",
)


def test_the_committed_cluster_files_are_what_the_templates_make():
    assert stale_files() == []
    assert main(["--check"]) == 0


@pytest.mark.parametrize("edited", [AWS_FILE, ONPREM_FILE])
def test_a_cluster_file_edited_alone_fails_the_check(edited, tmp_path):
    for name in (AWS_FILE, ONPREM_FILE):
        shutil.copy(REPO / name, tmp_path / name)
    text = (tmp_path / edited).read_text()
    changed = text.replace("chmod 600 ~/.ray/auth_token", "chmod 644 ~/.ray/auth_token")
    assert changed != text
    (tmp_path / edited).write_text(changed)
    assert stale_files(tmp_path) == [edited]


def test_both_files_run_the_same_node_commands_but_for_the_home_and_the_heads_cpus():
    aws = yaml.safe_load((REPO / AWS_FILE).read_text())
    onprem = yaml.safe_load((REPO / ONPREM_FILE).read_text())
    for key in NODE_COMMANDS:
        expected = [
            command.replace("/home/ubuntu", "/home/xlt").replace(
                "--dashboard-host=127.0.0.1", "--dashboard-host=127.0.0.1 --num-cpus=0"
            )
            for command in aws[key]
        ]
        assert onprem[key] == expected, key
    assert aws["cluster_synced_files"] == onprem["cluster_synced_files"]
    assert list(onprem["file_mounts"]) == ["/home/xlt/xlt-sweeps"]


def test_the_onprem_file_passes_the_offline_checker():
    prepared = validate_cluster_file(REPO / ONPREM_FILE)
    assert prepared["provider"]["type"] == "local"
    assert prepared["provider"]["worker_ips"] == ["192.0.2.11", "192.0.2.12"]
    assert prepared["auth"]["ssh_user"] == "xlt"


def test_an_onprem_file_for_a_labs_addresses_is_valid(tmp_path, capsys):
    output = tmp_path / "lab.yaml"
    argv = ["--head-ip", "10.77.0.1", "--worker-ip", "10.77.0.2", "--ssh-user", "root"]
    argv += ["--ssh-key", str(tmp_path / "key"), "--output", str(output)]
    assert main(argv) == 0
    assert "lab.yaml: written (10.77.0.1, workers 10.77.0.2)" in capsys.readouterr().out
    prepared = validate_cluster_file(output)
    assert prepared["provider"] == {
        "type": "local",
        "head_ip": "10.77.0.1",
        "worker_ips": ["10.77.0.2"],
    }
    assert prepared["file_mounts"] == {"/root/xlt-sweeps": "."}


@pytest.mark.parametrize(
    "lab, words",
    [
        ({"head_ip": "head.local"}, "'head.local': not an IP address"),
        ({"worker_ips": ()}, "worker_ips: at least one"),
        ({"ssh_user": "Bad User"}, "ssh_user 'Bad User'"),
        ({"ssh_private_key": "~/my key"}, "ssh_private_key '~/my key'"),
        ({"cluster_name": "a b"}, "cluster_name 'a b'"),
    ],
)
def test_a_bad_lab_is_refused_naming_the_field(lab, words):
    with pytest.raises(DataError, match=words):
        onprem_file(Lab(**lab))


def test_an_incomplete_lab_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--head-ip", "10.77.0.1", "--output", str(tmp_path / "lab.yaml")])
    assert "needs --head-ip, --worker-ip and --output" in capsys.readouterr().err
