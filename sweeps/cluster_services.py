"""The live audit's probes of the head's two servers, as a client on the network would try
them: MLflow (401 without a password, 200 to the admin, 403 to a user granted nothing) and
Ray's GCS (the cluster's token accepted; no token, or a wrong one, refused).

The second MLflow user is made by the audit through the basic-auth app's API, with a random
password it never shows, and deleted before the audit ends. Each Ray call runs in a child
process (sweeps/cluster_gcs_call.py) whose environment holds the token, none, or a random
wrong one: Ray reads its token mode once per process."""

from __future__ import annotations

import base64
import configparser
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from sweeps.cluster_head import Finding, Head

SEARCH = "/api/2.0/mlflow/experiments/search?max_results=1"
TIMEOUT_S = 10
# One GCS call in a child: Ray's import and its connection, bounded.
GCS_CALL_TIMEOUT_S = 90
GCS_CALL = Path(__file__).with_name("cluster_gcs_call.py")
# No proxy between the audit and the head's own addresses.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http(head: Head, path: str, user=None, method="GET", body=None) -> tuple[int, dict]:
    """The status and JSON answer of one request to the head's MLflow server; status 0 when
    it does not answer. `user`: (name, password) for basic auth."""
    request = urllib.request.Request(
        head.mlflow_uri.rstrip("/") + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    if user:
        token = base64.b64encode(":".join(user).encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with OPENER.open(request, timeout=TIMEOUT_S) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}
    except (OSError, ValueError):
        return 0, {}


def admin_credentials(head: Head) -> tuple[str, str] | None:
    """The admin's name and password from ~/.mlflow/credentials (MLflow's client file)."""
    parser = configparser.ConfigParser()
    try:
        parser.read_string((head.home / ".mlflow" / "credentials").read_text())
        section = parser["mlflow"]
        return section["mlflow_tracking_username"], section["mlflow_tracking_password"]
    except (OSError, KeyError, configparser.Error):
        return None


def mlflow_findings(head: Head) -> list[Finding]:
    uri = head.mlflow_uri
    status, _ = http(head, SEARCH)
    findings = [
        Finding(
            status == 401,
            f"MLflow at {uri} answers 401 without a password"
            if status == 401
            else f"MLflow at {uri} answers {status or 'nothing'} without a password (expected "
            "401: start it with --app-name basic-auth, as head_start_ray_commands do)",
        )
    ]
    admin = admin_credentials(head)
    status, answer = http(head, SEARCH, admin) if admin else (0, {})
    findings.append(
        Finding(
            status == 200,
            f"MLflow at {uri} answers {status or 'nothing'} to the admin of "
            f"{head.shown(head.home / '.mlflow' / 'credentials')}"
            + ("" if status == 200 else " (expected 200: are these the server's credentials?)"),
        )
    )
    if status == 200:
        experiments = answer.get("experiments") or [{"experiment_id": "0"}]
        findings.append(second_user_finding(head, admin, experiments[0]["experiment_id"]))
    return findings


def second_user_finding(head: Head, admin: tuple[str, str], experiment: str) -> Finding:
    """A user made now, granted nothing, reads experiment `experiment`: 403 expected."""
    user = (f"xlt-audit-{secrets.token_hex(4)}", secrets.token_urlsafe(24))
    body = {"username": user[0], "password": user[1]}
    created, _ = http(head, "/api/2.0/mlflow/users/create", admin, "POST", body)
    if created != 200:
        return Finding(False, f"MLflow at {head.mlflow_uri} did not make a second user ({created})")
    try:
        status, _ = http(head, f"/api/2.0/mlflow/experiments/get?experiment_id={experiment}", user)
    finally:
        deleted, _ = http(
            head, "/api/2.0/mlflow/users/delete", admin, "DELETE", {"username": user[0]}
        )
    gone = "" if deleted == 200 else f" (NOT deleted: delete user {user[0]} as the admin)"
    if status == 403:
        return Finding(
            deleted == 200,
            f"MLflow refuses experiment {experiment} (403) to a user granted nothing (made by "
            f"the audit, then deleted){gone}",
        )
    return Finding(
        False,
        f"MLflow answers {status or 'nothing'} to a user granted nothing reading experiment "
        f"{experiment} (expected 403: the basic-auth app's default_permission must be "
        f"NO_PERMISSIONS){gone}",
    )


def gcs_call(head: Head, environment: dict[str, str]) -> str:
    """`accepted`, `refused` or `error: ...`: one call to Ray's GCS from a child process with
    this environment (Ray's own variables replaced by these)."""
    base = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    try:
        done = subprocess.run(
            [sys.executable, str(GCS_CALL), head.ray_address],
            env={**base, **environment},
            capture_output=True,
            text=True,
            timeout=GCS_CALL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"error: no answer in {GCS_CALL_TIMEOUT_S} s"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else f"error: the probe exited {done.returncode}"


def ray_findings(head: Head) -> list[Finding]:
    address = head.ray_address
    try:
        socket.create_connection((head.private, head.ray_port), timeout=TIMEOUT_S).close()
    except OSError as error:
        return [Finding(False, f"Ray's GCS at {address} does not answer ({error.strerror})")]
    token = head.home / ".ray" / "auth_token"
    with tempfile.TemporaryDirectory() as empty:
        outcomes = {
            "without a token": gcs_call(head, {"RAY_AUTH_MODE": "disabled", "HOME": empty}),
            "with a wrong token": gcs_call(
                head,
                {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "HOME": empty},
            ),
        }
    findings = [
        Finding(
            outcome == "refused",
            f"Ray at {address} refuses a client {client}"
            if outcome == "refused"
            else f"Ray at {address} {outcome} a client {client} (expected refused: start Ray "
            "with RAY_AUTH_MODE=token)",
        )
        for client, outcome in outcomes.items()
    ]
    if token.is_file():  # the control: the probe reaches Ray, which knows its own token
        own = gcs_call(head, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)})
        findings.append(
            Finding(
                own == "accepted",
                f"Ray at {address} {own} a client with the cluster's token "
                f"({head.shown(token)})" + ("" if own == "accepted" else " (expected accepted)"),
            )
        )
    return findings
