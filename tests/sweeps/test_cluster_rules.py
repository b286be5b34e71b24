"""The static checker refuses the seven edits of ray_cluster.yaml that opened the cluster and
passed it before (issue 50), and their natural variants, each naming the command list, the
line and the offending command; the shipped files (AWS and on premises) pass. Offline: no
Ray is started."""

import re
from pathlib import Path

import pytest
import yaml

from sweeps.cluster import validate_cluster_file
from sweeps.cluster_rules import COMMAND_LISTS, Command, opens_mode, secret_mode_problems
from xlt_core.errors import DataError

REPO = Path(__file__).resolve().parents[2]
CLUSTER_FILE = REPO / "ray_cluster.yaml"
PRIVATE_IP = "$(hostname -I | awk '{print $1}')"
SERVER_HOST = f"--host {PRIVATE_IP} --port 5000"
DASHBOARD = "--dashboard-host=127.0.0.1"
SECURITY_GROUP = """  cache_stopped_nodes: true
  security_group:
    GroupName: xlt-sweeps
    IpPermissions:
      - {IpProtocol: tcp, FromPort: 22, ToPort: 22, IpRanges: [{CidrIp: 0.0.0.0/0}]}
"""


def _refused(text: str, tmp_path: Path) -> str:
    """The checker's message for a cluster file holding `text`."""
    changed = tmp_path / "ray_cluster.yaml"
    changed.write_text(text)
    with pytest.raises(DataError) as refused:
        validate_cluster_file(changed)
    return str(refused.value)


def _line_of(text: str, fragment: str) -> int:
    """The line (from 1) of the first line of `text` holding `fragment`."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


def _appended(key: str, command: str) -> str:
    """ray_cluster.yaml with `command` added at the end of the command list `key`."""
    text = CLUSTER_FILE.read_text()
    lines = text.splitlines(keepends=True)
    start = lines.index(f"{key}:\n")
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip() and lines[i][0] != " "),
        len(lines),
    )
    while not lines[end - 1].strip():
        end -= 1
    lines.insert(end, f"  - {command}\n")
    return "".join(lines)


def _replaced(old: str, new: str) -> str:
    text = CLUSTER_FILE.read_text()
    assert old in text
    return text.replace(old, new)


def test_the_shipped_cluster_files_pass():
    assert validate_cluster_file(CLUSTER_FILE)["provider"]["type"] == "aws"
    onprem = REPO / "ray_cluster_onprem.yaml"
    if onprem.is_file():  # written by the on-premises work (issue 50)
        assert validate_cluster_file(onprem)["provider"]["type"] == "local"


# Each bypass: (the file, edited; the command list, or the path of the rule; the command's
# fragment the line and the index are found by; what the message says).
BYPASSES = {
    "second mlflow server without basic-auth": (
        lambda: _appended(
            "head_start_ray_commands",
            f"nohup mlflow server --host {PRIVATE_IP} --port 5001 > /dev/null 2>&1 &",
        ),
        "head_start_ray_commands",
        "--port 5001",
        "the MLflow server runs without authentication (--app-name basic-auth): allowed is",
    ),
    "second ray start --head without the token": (
        lambda: _appended("head_start_ray_commands", "ray start --head --port=6380"),
        "head_start_ray_commands",
        "--port=6380",
        "starts Ray without token authentication: allowed is `RAY_AUTH_MODE=token ray start",
    ),
    "mlflow --host 0": (
        lambda: _replaced(SERVER_HOST, "--host 0 --port 5000"),
        "head_start_ray_commands",
        "nohup mlflow server",
        "the MLflow server binds 0: allowed is the head's private address",
    ),
    "dashboard on ::": (
        lambda: _replaced(DASHBOARD, "--dashboard-host='::'"),
        "head_start_ray_commands",
        "--dashboard-host",
        "Ray's dashboard listens on ::: allowed is --dashboard-host=127.0.0.1",
    ),
    "security group open to ::/0": (
        lambda: _replaced(
            "  cache_stopped_nodes: true\n",
            SECURITY_GROUP.replace(
                "FromPort: 22, ToPort: 22, IpRanges: [{CidrIp: 0.0.0.0/0}]",
                'FromPort: 0, ToPort: 65535, Ipv6Ranges: [{CidrIpv6: "::/0"}]',
            ),
        ),
        "provider.security_group.IpPermissions[0]",
        "CidrIpv6",
        "opens tcp 0-65535 to ::/0: allowed beyond the private ranges",
    ),
    "sed rewrites default_permission": (
        lambda: _appended(
            "head_setup_commands", "sed -i 's/NO_PERMISSIONS/MANAGE/' ~/.xlt/mlflow_auth.ini"
        ),
        "head_setup_commands",
        "s/NO_PERMISSIONS/MANAGE/",
        "changes the basic-auth app's configuration (~/.xlt/mlflow_auth.ini",
    ),
    "token file made world-readable": (
        lambda: _appended("head_setup_commands", "chmod 644 ~/.ray/auth_token"),
        "head_setup_commands",
        "chmod 644",
        "makes ~/.ray/auth_token readable beyond its owner (chmod 644): allowed is",
    ),
}


@pytest.mark.parametrize("bypass", BYPASSES)
def test_each_bypass_is_refused_naming_its_line(bypass, tmp_path):
    edit, where, fragment, what = BYPASSES[bypass]
    text = edit()
    message = _refused(text, tmp_path)
    if where in COMMAND_LISTS:  # the command list and the index of the command edited
        listed = yaml.safe_load(text)[where]
        where += f"[{next(i for i, c in enumerate(listed) if fragment in c)}]"
    line = _line_of(text, fragment)
    assert f"{where} (line {line})" in message, message
    assert what in message, message


@pytest.mark.parametrize(
    "old, new, what",
    [
        # another spelling of every interface, or a name
        (SERVER_HOST, "--host=0.0.0.0 --port 5000", "binds 0.0.0.0"),
        (SERVER_HOST, "-h '[::]' --port 5000", "binds [::]"),
        (SERVER_HOST, '--host "::" --port 5000', "binds ::"),
        (SERVER_HOST, "--host $(hostname) --port 5000", "binds $(hostname)"),
        (SERVER_HOST, f"{SERVER_HOST} --host 0", "binds 0:"),  # the last --host wins
        ("nohup mlflow server", "MLFLOW_HOST=:: nohup mlflow server", "binds ::"),
        (SERVER_HOST, f"{SERVER_HOST} --uvicorn-opts '--host 0.0.0.0'", "given an address"),
        ("--app-name basic-auth", "--app-name basic-auth --app-name other", "without auth"),
        (DASHBOARD, "--dashboard-host 0.0.0.0", "dashboard listens on 0.0.0.0"),
        (DASHBOARD, '--dashboard-host="::"', "dashboard listens on ::"),
        (  # a secret written with a looser umask
            'umask 077 && echo "localhost',
            'umask 022 && echo "localhost',
            "writes ~/.pgpass without `umask 077` first",
        ),
        ("chmod 600 ~/.ray/auth_token", "chmod 640 ~/.ray/auth_token", "(chmod 640)"),
        ("chmod 600 ~/.ray/auth_token", "chmod g+r ~/.ray/auth_token", "(chmod g+r)"),
    ],
)
def test_variants_of_the_bypasses_are_refused(old, new, what, tmp_path):
    assert what in _refused(_replaced(old, new), tmp_path)


@pytest.mark.parametrize(
    "key, command, what",
    [
        ("head_start_ray_commands", "python -m mlflow ui --port 5002", "without authentication"),
        (  # a folded scalar: the server's words on two lines
            "head_start_ray_commands",
            ">-\n    nohup mlflow\n    server --app-name basic-auth --host 0.0.0.0 --port 5003",
            "binds 0.0.0.0",
        ),
        (  # basic-auth, on MLflow's own configuration (default_permission READ)
            "head_start_ray_commands",
            f"mlflow server --app-name basic-auth --host {PRIVATE_IP} --port 5004",
            "does not read the basic-auth configuration the setup writes",
        ),
        (
            "head_start_ray_commands",
            "MLFLOW_AUTH_CONFIG_PATH=/tmp/open.ini mlflow server --app-name basic-auth",
            "does not read the basic-auth configuration the setup writes",
        ),
        ("setup_commands", "echo RAY_AUTH_MODE=token; ray start --head", "without token"),
        ("worker_start_ray_commands", "ray start --address=$RAY_HEAD_IP:6379", "without token"),
        (
            "head_setup_commands",
            "sed -i -e 's/= NO_PERMISSIONS/= READ/' /home/ubuntu/.xlt/*.ini",
            "changes the basic-auth app's configuration",
        ),
        (
            "head_start_ray_commands",
            "perl -pi -e 's/NO_PERMISSIONS/EDIT/' ~/.xlt/mlflow_auth.ini",
            "changes the basic-auth app's configuration",
        ),
        (
            "head_setup_commands",
            "echo 'default_permission = MANAGE' >> ~/.xlt/mlflow_auth.ini",
            "changes the basic-auth app's configuration",
        ),
        ("head_setup_commands", "chmod o+r ~/.mlflow/credentials", "(chmod o+r)"),
        ("head_setup_commands", "chmod -R 755 ~/.xlt", "makes ~/.xlt readable"),
        ("head_setup_commands", "chmod a+r ~/.xlt/*", "(chmod a+r)"),
        ("head_setup_commands", "chmod -R go+rX ~", "makes ~ readable"),
        ("head_setup_commands", "openssl rand -hex 32 > ~/.ray/auth_token", "without `umask"),
        ("head_setup_commands", "cat ~/.xlt/pg_password | tee ~/.pgpass", "without `umask"),
    ],
)
def test_added_commands_that_open_the_cluster_are_refused(key, command, what, tmp_path):
    assert what in _refused(_appended(key, command), tmp_path)


@pytest.mark.parametrize(
    "permission, refused",
    [
        ("{IpProtocol: tcp, FromPort: 22, ToPort: 22, IpRanges: [{CidrIp: 0.0.0.0/0}]}", None),
        ('{IpProtocol: tcp, FromPort: 22, ToPort: 22, Ipv6Ranges: [{CidrIpv6: "::/0"}]}', None),
        ("{IpProtocol: '-1', IpRanges: [{CidrIp: 10.0.0.0/16}]}", None),  # inside the VPC
        (
            "{IpProtocol: tcp, FromPort: 5000, ToPort: 5000, IpRanges: [{CidrIp: 0.0.0.0/0}]}",
            "opens tcp 5000-5000 to 0.0.0.0/0",
        ),
        ("{IpProtocol: '-1', IpRanges: [{CidrIp: 0.0.0.0/1}]}", "opens IpProtocol -1 to 0.0.0.0/1"),
        (
            "{IpProtocol: tcp, FromPort: 22, ToPort: 22, IpRanges: [{CidrIp: nowhere}]}",
            "not a CIDR",
        ),
    ],
)
def test_security_group_rules_beyond_ssh_are_refused(permission, refused, tmp_path):
    text = _replaced(
        "  cache_stopped_nodes: true\n",
        SECURITY_GROUP.replace(
            "{IpProtocol: tcp, FromPort: 22, ToPort: 22, IpRanges: [{CidrIp: 0.0.0.0/0}]}",
            permission,
        ),
    )
    changed = tmp_path / "ray_cluster.yaml"
    changed.write_text(text)
    if refused is None:
        validate_cluster_file(changed)
    else:
        message = _refused(text, tmp_path)
        assert refused in message and "provider.security_group.IpPermissions[0] (line" in message


def test_security_groups_named_by_id_are_refused(tmp_path):
    text = _replaced(
        "      InstanceType: g5.xlarge\n",
        "      InstanceType: g5.xlarge\n      SecurityGroupIds: [sg-0123456789abcdef0]\n",
    )
    message = _refused(text, tmp_path)
    line = _line_of(text, "SecurityGroupIds")
    assert f"available_node_types.gpu_worker.node_config.SecurityGroupIds (line {line})" in message
    assert "whose rules this file does not show" in message


@pytest.mark.parametrize(
    "mode, opens",
    [
        ("600", False),
        ("0700", False),
        ("go-rwx", False),
        ("u=rw,go=", False),
        ("u+x", False),
        ("644", True),
        ("0640", True),
        ("+r", True),
        ("o+r", True),
        ("u=rw,g=u", True),
        ("--reference=x", True),
    ],
)
def test_chmod_modes_that_reach_group_or_others(mode, opens):
    assert opens_mode(mode) is opens


def test_a_refusal_quotes_the_command_shortened():
    command = Command(
        "head_setup_commands[0]", 9, "x " * 100 + "chmod 644 ~/.pgpass", ("  - x",) * 9
    )
    (problem,) = secret_mode_problems(command)
    assert re.match(
        r'head_setup_commands\[0\] \(line 9\) "\.\.\.(x )+chmod 644 ~/\.pgpass":', problem
    )
    assert len(problem.split('"')[1]) < 110
