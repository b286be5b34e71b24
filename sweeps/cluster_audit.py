"""The live audit of a running head: `python -m sweeps.cluster --live`, run on the head (see
docs/cluster.md, "Audit the running cluster"). One line per finding, PASS or FAIL; exit 1 on
any FAIL, 0 when all pass, 2 when the head's addresses are not found. No secret is printed.

- the secrets: each of SECRETS exists, is a file, readable by its owner only (no bit for
  group or others), owned by this user;
- every listening TCP port of the node (sweeps/cluster_listeners.py): on localhost is local
  only; the Ray dashboard on localhost only, PostgreSQL on localhost only, MLflow on the
  private address only; Ray's own processes on the private address or every interface (their
  gRPC servers check the token); SSH on port 22; anything else beyond localhost fails;
- the dashboard refuses a connection on the private address;
- MLflow and Ray as a client on the network tries them (sweeps/cluster_services.py).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import stat
import sys
from pathlib import Path

from sweeps.cluster_head import DASHBOARD_PORT, POSTGRES_PORT, Finding, Head, head_from
from sweeps.cluster_listeners import Listener, listening_sockets
from sweeps.cluster_services import mlflow_findings, ray_findings
from xlt_core.errors import DataError

SECRETS = (
    ".ray/auth_token",
    ".mlflow/credentials",
    ".xlt/pg_password",
    ".xlt/mlflow_admin_password",
    ".xlt/mlflow_secret_key",
    ".xlt/mlflow_auth.ini",
    ".pgpass",
)
SSH_PORT = 22
CONNECT_TIMEOUT_S = 3


def secret_findings(head: Head) -> list[Finding]:
    findings = []
    for relative in SECRETS:
        path = head.home / relative
        shown = head.shown(path)
        try:
            status = path.lstat()
        except OSError:
            findings.append(
                Finding(False, f"secret {shown} is missing (the head's setup makes it)")
            )
            continue
        mode = stat.S_IMODE(status.st_mode)
        problems = []
        if not stat.S_ISREG(status.st_mode):
            problems.append("not a plain file")
        if mode & 0o077:
            problems.append(f"mode {mode:04o} lets group or others in (chmod 600 {shown})")
        if status.st_uid != os.geteuid():
            problems.append(f"owned by uid {status.st_uid}, not this user ({os.geteuid()})")
        findings.append(
            Finding(
                not problems,
                f"secret {shown}: " + ("; ".join(problems) or f"mode {mode:04o}, this user's"),
            )
        )
    return findings


def scope(address: str, head: Head) -> str:
    """`localhost`, `the private address`, `every interface` or `another address`."""
    ip = ipaddress.ip_address(address)
    if address == head.private:
        return "the private address"
    if ip.is_loopback:
        return "localhost"
    return "every interface" if ip.is_unspecified else "another address"


def listener_finding(listener: Listener, head: Head) -> Finding:
    """One listening port against the rule (see the module's docstring)."""
    where = scope(listener.address, head)
    name = f"port {listener.name()} on {where}"
    expected = {
        head.dashboard_port: ("Ray's dashboard", ("localhost",)),
        POSTGRES_PORT: ("PostgreSQL", ("localhost",)),
        head.mlflow_port: ("MLflow", ("the private address",)),
    }
    if listener.port in expected:
        service, allowed = expected[listener.port]
        if where in allowed:
            return Finding(True, f"{name}: {service}, as expected")
        return Finding(False, f"{name}: {service} must listen on {' or '.join(allowed)} only")
    if where == "localhost":
        return Finding(True, f"{name}: local only")
    if listener.ray and where in ("the private address", "every interface"):
        return Finding(True, f"{name}: Ray's own (the Ray probes below try its token)")
    if listener.port == SSH_PORT:
        return Finding(True, f"{name}: SSH (how the launcher reaches the node)")
    return Finding(
        False,
        f"{name}: not Ray's, MLflow's, PostgreSQL's or SSH, reachable beyond this node: stop "
        "it or bind it to 127.0.0.1",
    )


def reachable(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError:
        return False
    return True


def dashboard_findings(head: Head) -> list[Finding]:
    port = head.dashboard_port
    if reachable(head.private, port):
        return [
            Finding(
                False,
                f"Ray's dashboard port answers on the private address {head.private}:{port}: "
                "start Ray with --dashboard-host=127.0.0.1",
            )
        ]
    local = (
        f"it listens on 127.0.0.1:{port}"
        if reachable("127.0.0.1", port)
        else f"nothing listens on 127.0.0.1:{port} either (Ray without its dashboard)"
    )
    return [Finding(True, f"Ray's dashboard refuses {head.private}:{port}; {local}")]


def audit(head: Head) -> list[Finding]:
    return [
        *secret_findings(head),
        *(listener_finding(listener, head) for listener in listening_sockets()),
        *dashboard_findings(head),
        *mlflow_findings(head),
        *ray_findings(head),
    ]


def live_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sweeps.cluster --live",
        description="Audit the running head (run on it): ports, MLflow, Ray, secrets.",
    )
    parser.add_argument("--home", type=Path, help="the cluster user's home (default: ~)")
    parser.add_argument("--ray-address", help="HOST:PORT (default: ~/.xlt/env.sh's)")
    parser.add_argument("--mlflow-uri", help="http://HOST:PORT (default: ~/.xlt/env.sh's)")
    parser.add_argument("--dashboard-port", type=int, default=DASHBOARD_PORT)
    options = parser.parse_args(argv)
    try:
        head = head_from(
            options.home, options.ray_address, options.mlflow_uri, options.dashboard_port
        )
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    findings = audit(head)
    for finding in findings:
        print(finding.line(), flush=True)
    failed = sum(not finding.passed for finding in findings)
    print(f"live audit of {head.private}: {len(findings) - failed} passed, {failed} failed")
    return 1 if failed else 0
