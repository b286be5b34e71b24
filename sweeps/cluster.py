"""Check a Ray cluster file offline: `python -m sweeps.cluster ray_cluster.yaml`.

Ray's own validation first: `prepare_config` merges the provider's defaults (as `ray up`
does), `validate_config` checks the result against Ray's JSON schema and its node-type rules.
Then what this project needs of the head node (`head_problems`): the MLflow server on the
head's private address over PostgreSQL, no password written in the file, and `RAY_ADDRESS` /
`MLFLOW_TRACKING_URI` exported there so that a sweep started on the head joins the cluster;
and a closed cluster (`closed_cluster_problems`): the MLflow server behind its basic-auth app
and Ray with token authentication, their secrets generated on the head and copied to the
workers by the head, never written in the file, and no MLflow user but the admin given any
permission (`default_permission`). Then every command of every command list, one by one
(sweeps/cluster_rules.py), and the AWS security group (sweeps/cluster_groups.py): the holes
one edit can open. No cloud call is made.

`python -m sweeps.cluster --live`, run on the head, probes the running cluster instead
(sweeps/cluster_audit.py).
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import yaml

from sweeps.cluster_groups import security_group_problems
from sweeps.cluster_rules import PRIVATE_ADDRESS as PRIVATE_ADDRESS_COMMAND
from sweeps.cluster_rules import command_problems
from xlt_core.errors import DataError


def validate_cluster_file(path: str | Path) -> dict:
    """The prepared (defaults merged) configuration of a valid cluster file; DataError naming
    the file and the offending field otherwise."""
    import jsonschema
    from ray.autoscaler._private.util import prepare_config, validate_config

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such cluster file")
    text = path.read_text()
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise DataError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(config, dict) or not isinstance(config.get("provider"), dict):
        raise DataError(
            f"{path}: a cluster file is a mapping with a 'provider' section (type, region)"
        )
    # Ray logs each default it fills in (a head's max_workers) at INFO on the terminal.
    logging.getLogger("ray.autoscaler").setLevel(logging.WARNING)
    try:
        prepared = prepare_config(config)
        validate_config(prepared)
    except jsonschema.ValidationError as error:
        field = "/".join(map(str, error.absolute_path)) or "(top level)"
        raise DataError(f"{path}: field {field}: {error.message}") from None
    except (ValueError, KeyError, RuntimeError) as error:
        raise DataError(f"{path}: {error}") from None
    problems = head_problems(config, text) + closed_cluster_problems(config, text)
    problems += command_problems(config, text) + security_group_problems(config, text)
    if problems:
        raise DataError(f"{path}: " + "; ".join(problems))
    return prepared


# The head's private address as its shell commands compute it.
PRIVATE_ADDRESS = re.escape(PRIVATE_ADDRESS_COMMAND)
# What the head's setup (head_setup_commands and setup_commands) must do, and how it reads.
HEAD_SETUP = {
    r"apt-get install .*\bpostgresql\b": "install PostgreSQL",
    r"pip install .*\bpsycopg": "install psycopg (SQLAlchemy's PostgreSQL driver)",
    r"umask 077 .*openssl rand .*> ?~/\.xlt/pg_password": (
        "generate the database password on the head (openssl rand) into ~/.xlt/pg_password, "
        "readable by its user only (umask 077)"
    ),
    r"umask 077 .*> ?~/\.pgpass": "give libpq the password in ~/.pgpass (umask 077)",
    r"~/\.xlt/env\.sh.* ~/\.bashrc": "source ~/.xlt/env.sh from ~/.bashrc",
    r"pip install .*\bmlflow\[auth\]": "install MLflow's basic-auth app (mlflow[auth])",
    **{
        rf"umask 077 .*openssl rand .*> ?~/{re.escape(path)}": (
            f"generate the {what} on the head (openssl rand) into ~/{path}, readable by its "
            "user only (umask 077)"
        )
        for path, what in (
            (".ray/auth_token", "Ray token"),
            (".xlt/mlflow_admin_password", "MLflow admin password"),
            (".xlt/mlflow_secret_key", "MLflow server's secret key"),
        )
    },
    r"umask 077 .*> ?~/\.xlt/mlflow_auth\.ini": (
        "write the basic-auth app's configuration to ~/.xlt/mlflow_auth.ini (umask 077)"
    ),
    r"umask 077 .*mlflow_tracking_password.*> ?~/\.mlflow/credentials": (
        "give sweeps the MLflow credentials in ~/.mlflow/credentials, readable by its user "
        "only (umask 077)"
    ),
    r"export RAY_AUTH_MODE=token.*~/\.xlt/env\.sh": (
        "export RAY_AUTH_MODE=token in ~/.xlt/env.sh (a sweep on the head joins with the token)"
    ),
}
MLFLOW_PASSWORDS = "MLFLOW_TRACKING_PASSWORD|MLFLOW_AUTH_ADMIN_PASSWORD|admin_password"
# Never in the file: a password in a connection URI, a literal password in SQL, a server
# listening on every interface.
FORBIDDEN = {
    r"postgres(?:ql)?(?:\+\w+)?://[^/\s@:]*:[^/\s@]*@": "a password in a PostgreSQL URI",
    r"PASSWORD\s+'(?!\$\(cat )": "a password literal (PASSWORD '...')",
    # (a security group's 0.0.0.0/0 is security_group_problems')
    r"0\.0\.0\.0(?!/)": "a server listening on every interface (0.0.0.0)",
    r"RAY_AUTH_TOKEN\s*[=:]": "a Ray token (RAY_AUTH_TOKEN)",
    r"RAY_AUTH_MODE=(?!token\b)": "Ray's authentication off (RAY_AUTH_MODE other than token)",
    # A password is read from the head's file (`$(cat ...)`, printf's `%s`), never written.
    rf"(?i)(?:{MLFLOW_PASSWORDS})\s*[=:](?!\s*(?:\$\(cat |%s))": "an MLflow password",
    r"password1234": "MLflow's former default admin password",
}
# What every MLflow user but the admin may do with an experiment: nothing.
DEFAULT_PERMISSION = "NO_PERMISSIONS"
# What the secrets each worker needs are: the head copies them to it (cluster_synced_files).
WORKER_SECRETS = {
    "~/.ray/auth_token": "the Ray token",
    "~/.mlflow/credentials": "MLflow credentials",
}


def head_problems(config: dict, text: str) -> list[str]:
    """What the cluster file (`config`, parsed from `text`) lacks of this project's head setup
    (see the module's docstring), each as a phrase; [] when nothing."""
    setup = "\n".join(config.get("setup_commands", []) + config.get("head_setup_commands", []))
    start = "\n".join(config.get("head_start_ray_commands", []))
    problems = [
        f"the head's setup does not {what}"
        for pattern, what in HEAD_SETUP.items()
        if not re.search(pattern, setup)
    ]
    server = re.search(r"mlflow server .*", start)
    server_command = server.group() if server else ""
    if not server:
        problems.append("head_start_ray_commands start no `mlflow server`")
    elif not re.search(rf"--host {PRIVATE_ADDRESS}", server_command):
        problems.append("the MLflow server does not bind the head's private address")
    if server and not re.search(r"--backend-store-uri postgresql(\+\w+)?://", server_command):
        problems.append("the MLflow server's --backend-store-uri is not postgresql://")
    served_ports = {
        "RAY_ADDRESS": re.search(r"ray start --head .*--port=(\d+)", start),
        "MLFLOW_TRACKING_URI": re.search(r"--port (\d+)", server_command),
    }
    for variable, port in served_ports.items():
        scheme = re.escape("http://") if variable == "MLFLOW_TRACKING_URI" else ""
        exported = re.search(rf"export {variable}={scheme}{PRIVATE_ADDRESS}:(\d+)", setup)
        if not (exported and port and exported.group(1) == port.group(1)):
            problems.append(
                f"the head's setup does not export {variable} as the head's private address "
                f"and the port it serves ({port.group(1) if port else 'none found'})"
            )
    problems += [
        f"the file holds {what}" for pattern, what in FORBIDDEN.items() if re.search(pattern, text)
    ]
    return problems


def closed_cluster_problems(config: dict, text: str) -> list[str]:
    """What the cluster file lacks of a closed cluster (see the module's docstring), each as a
    phrase; [] when nothing."""
    start = config.get("head_start_ray_commands", [])
    server = next((command for command in start if re.search("mlflow server ", command)), "")
    problems = []
    # The SSH user's home: ubuntu's on AWS, the lab's user's on premises (provider: local).
    user = config.get("auth", {}).get("ssh_user", "ubuntu")
    home = "/root" if user == "root" else f"/home/{user}"
    for variable, path in (
        ("MLFLOW_AUTH_CONFIG_PATH", f"{home}/.xlt/mlflow_auth.ini"),
        ("MLFLOW_AUTH_ADMIN_PASSWORD", "$(cat ~/.xlt/mlflow_admin_password)"),
        ("MLFLOW_FLASK_SERVER_SECRET_KEY", "$(cat ~/.xlt/mlflow_secret_key)"),
    ):
        if server and f"{variable}={path}" not in server:
            problems.append(f"the MLflow server is not started with {variable}={path}")
    for key, command in (
        ("head_start_ray_commands", "ray start --head"),
        ("worker_start_ray_commands", "ray start --address"),
    ):
        if not re.search(rf"RAY_AUTH_MODE=token {command}", "\n".join(config.get(key, []))):
            problems.append(
                f"{key} start Ray without token authentication (RAY_AUTH_MODE=token {command})"
            )
    problems += _default_permission_problems(config)
    synced = config.get("cluster_synced_files", [])
    problems += [
        f"the workers are not given {what} (cluster_synced_files: {path})"
        for path, what in WORKER_SECRETS.items()
        if path not in synced
    ]
    return problems


def _default_permission_problems(config: dict) -> list[str]:
    """The basic-auth app's `default_permission` (what every MLflow user, not only the admin,
    may do with every experiment) must be NO_PERMISSIONS: MLflow's default READ shows every
    run to anyone with an account, EDIT or USE let them change runs, MANAGE also delete them
    and grant permissions."""
    setup = "\n".join(config.get("setup_commands", []) + config.get("head_setup_commands", []))
    given = re.findall(r"default_permission\s*=\s*(\w+)", setup)
    if given == [DEFAULT_PERMISSION]:
        return []
    what = f"is {' and '.join(given)}" if given else "is not set (MLflow's default: READ)"
    return [
        f"the basic-auth app's default_permission {what}: allowed is {DEFAULT_PERMISSION} "
        "(only the admin, as whom sweeps log, reads or changes the runs; READ, USE, EDIT and "
        "MANAGE give every MLflow user access to every experiment)"
    ]


def main(argv: list[str] | None = None) -> int:
    paths = argv if argv is not None else sys.argv[1:]
    if "--live" in paths:  # the running head, probed (sweeps/cluster_audit.py)
        from sweeps.cluster_audit import live_main

        return live_main([arg for arg in paths if arg != "--live"])
    try:
        for path in paths or ["ray_cluster.yaml"]:
            prepared = validate_cluster_file(path)
            node_types = ", ".join(prepared["available_node_types"])
            print(f"{path}: valid ({prepared['provider']['type']}, node types {node_types})")
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
