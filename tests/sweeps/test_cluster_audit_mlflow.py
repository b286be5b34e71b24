"""The live audit's MLflow probes against a real `mlflow server --app-name basic-auth` on
loopback (a SQLite store in a temporary directory), as the head runs it: closed
(default_permission NO_PERMISSIONS) every probe passes and the audit's second user is gone
afterwards; with default_permission READ the second user reads the experiment and the audit
fails naming it. Slow: each starts an MLflow server (about 15 s). The basic-auth app needs
Flask-WTF, which the `cluster` extra installs (mlflow[auth])."""

import configparser
import secrets
from pathlib import Path

import pytest

from benchmarks.tracking_servers import mlflow_server
from sweeps.cluster_head import Head
from sweeps.cluster_services import http, mlflow_findings

pytestmark = pytest.mark.slow

AUTH_CONFIG = """[mlflow]
default_permission = {permission}
database_uri = sqlite:///{database}
admin_username = admin
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
"""


def audit_mlflow(tmp_path: Path, permission: str) -> tuple[list, list[str]]:
    """The MLflow findings against a basic-auth server with `default_permission`, and the
    server's users after the audit."""
    password = secrets.token_hex(16)
    auth_config = tmp_path / "mlflow_auth.ini"
    auth_config.write_text(AUTH_CONFIG.format(permission=permission, database=tmp_path / "auth.db"))
    home = tmp_path / "home"
    (home / ".mlflow").mkdir(parents=True)
    credentials = configparser.ConfigParser()
    credentials["mlflow"] = {
        "mlflow_tracking_username": "admin",
        "mlflow_tracking_password": password,
    }
    with open(home / ".mlflow" / "credentials", "w") as file:
        credentials.write(file)
    env = {
        "MLFLOW_AUTH_CONFIG_PATH": str(auth_config),
        "MLFLOW_AUTH_ADMIN_PASSWORD": password,
        "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_hex(16),
    }
    backend = f"sqlite:///{tmp_path / 'mlflow.db'}"
    options = ("--app-name", "basic-auth")
    with mlflow_server(backend, tmp_path, env, workers=1, options=options) as uri:
        head = Head(home, "127.0.0.1:9", uri)
        findings = mlflow_findings(head)
        _, answer = http(head, "/api/2.0/mlflow/users/list", ("admin", password))
    users = [user["username"] for user in answer.get("users", [])]
    assert password not in " ".join(finding.what for finding in findings)
    return findings, users


@pytest.mark.slow
def test_a_closed_basic_auth_server_passes_and_keeps_no_audit_user(tmp_path):
    findings, users = audit_mlflow(tmp_path, "NO_PERMISSIONS")
    assert all(finding.passed for finding in findings), findings
    assert len(findings) == 3 and "(403) to a user granted nothing" in findings[2].what
    assert users == ["admin"]


@pytest.mark.slow
def test_default_permission_read_fails_the_second_user_probe(tmp_path):
    findings, users = audit_mlflow(tmp_path, "READ")
    assert [finding.passed for finding in findings] == [True, True, False], findings
    assert "answers 200 to a user granted nothing" in findings[2].what
    assert "default_permission must be NO_PERMISSIONS" in findings[2].what
    assert users == ["admin"]
