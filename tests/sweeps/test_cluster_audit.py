"""The live audit (`python -m sweeps.cluster --live`) fails on each hole opened on purpose,
naming it, and passes the closed case: secrets (missing, 0644), listening ports (a socket
on every interface), the dashboard on the private address (127.0.0.2 here), MLflow (no
password asked; a second user let read; wrong admin credentials) against an MLflow-like
basic-auth server on loopback. Loopback only; no Ray is started (test_cluster_live.py
starts one, in a network namespace of its own)."""

import base64
import json
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import scaled_timeout

from sweeps.cluster import main
from sweeps.cluster_audit import (
    SECRETS,
    dashboard_findings,
    listener_finding,
    secret_findings,
)
from sweeps.cluster_head import Head, head_from
from sweeps.cluster_listeners import Listener, decode_address, listening_sockets
from sweeps.cluster_services import mlflow_findings, ray_findings
from xlt_core.errors import DataError

PRIVATE = "127.0.0.2"  # the head's private address in these tests
ADMIN_PASSWORD = "audit-test-admin-password"


class FakeMLflow(BaseHTTPRequestHandler):
    """The basic-auth app's answers to the audit's requests. `hole`: None (closed), "open"
    (no authentication) or "read" (default_permission READ)."""

    hole = None
    users: dict = {}

    def user(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        name, _, password = base64.b64decode(header[6:]).decode().partition(":")
        return name if self.users.get(name) == password else None

    def answer(self, status, body=None):
        data = json.dumps(body or {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_request(self):
        user, url = self.user(), urlsplit(self.path)
        if self.hole != "open" and user is None:
            return self.answer(401)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if url.path.endswith("/users/create") and user == "admin":
            self.users[body["username"]] = body["password"]
            return self.answer(200, {"user": {"username": body["username"]}})
        if url.path.endswith("/users/delete") and user == "admin":
            self.users.pop(body["username"], None)
            return self.answer(200)
        if url.path.endswith("/experiments/search"):
            return self.answer(200, {"experiments": [{"experiment_id": "7"}]})
        if url.path.endswith("/experiments/get"):
            allowed = user == "admin" or self.hole in ("open", "read")
            experiment = parse_qs(url.query)["experiment_id"][0]
            return self.answer(200 if allowed else 403, {"experiment": {"id": experiment}})
        return self.answer(404)

    do_GET = do_POST = do_DELETE = handle_request

    def log_message(self, *args):
        pass


@contextmanager
def fake_mlflow(hole=None, port=0):
    """An MLflow-like server on 127.0.0.2 (its URI), with `hole` open."""
    handler = type("Handler", (FakeMLflow,), {"hole": hole, "users": {"admin": ADMIN_PASSWORD}})
    server = ThreadingHTTPServer((PRIVATE, port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{PRIVATE}:{server.server_address[1]}", handler.users
    finally:
        server.shutdown()
        server.server_close()


def closed_home(home: Path) -> Path:
    """A home holding every secret, mode 0600, and the admin's MLflow credentials."""
    for relative in SECRETS:
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        path.chmod(0o600)
    (home / ".mlflow" / "credentials").write_text(
        f"[mlflow]\nmlflow_tracking_username = admin\nmlflow_tracking_password = {ADMIN_PASSWORD}\n"
    )
    return home


def head(home: Path, mlflow_uri="http://127.0.0.2:9", dashboard_port=8265) -> Head:
    return Head(home, f"{PRIVATE}:9", mlflow_uri, dashboard_port)


@contextmanager
def listening(host: str, port: int = 0):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as server:
        server.bind((host, port))
        server.listen()
        yield server.getsockname()[1]


def test_secrets_closed_pass_and_each_hole_fails_naming_the_file(tmp_path):
    home = closed_home(tmp_path)
    assert all(finding.passed for finding in secret_findings(head(home)))
    (home / ".ray" / "auth_token").chmod(0o644)
    (home / ".xlt" / "mlflow_secret_key").chmod(0o640)
    (home / ".pgpass").unlink()
    failed = {finding.what for finding in secret_findings(head(home)) if not finding.passed}
    assert failed == {
        "secret ~/.ray/auth_token: mode 0644 lets group or others in (chmod 600 ~/.ray/auth_token)",
        "secret ~/.xlt/mlflow_secret_key: mode 0640 lets group or others in (chmod 600 "
        "~/.xlt/mlflow_secret_key)",
        "secret ~/.pgpass is missing (the head's setup makes it)",
    }


# A listener in a process of its own: this test's process may have loaded Ray (another test
# of the session imported it), which would make its sockets Ray's.
LISTENER = """import socket, sys
server = socket.create_server((sys.argv[1], 0))
print(server.getsockname()[1], flush=True)
sys.stdin.read()
"""


@contextmanager
def listener_process(host: str):
    """(port, pid) of a plain Python process listening on `host`, until the block ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", LISTENER, host], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        yield int(child.stdout.readline()), child.pid
    finally:
        child.stdin.close()
        child.wait(timeout=scaled_timeout(30))


def test_a_port_on_every_interface_fails_naming_port_and_process():
    with listener_process("0.0.0.0") as (port, pid), listener_process("127.0.0.1") as (local, _):
        found = {listener.port: listener for listener in listening_sockets()}
    assert found[port].address == "0.0.0.0" and found[port].pid == pid
    assert not found[port].ray
    finding = listener_finding(found[port], head(Path("/nowhere")))
    assert not finding.passed
    assert f"0.0.0.0:{port} (python" in finding.what and f"pid {pid}) on every interface" in (
        finding.what
    )
    assert listener_finding(found[local], head(Path("/nowhere"))).passed


@pytest.mark.parametrize(
    "listener, passed, words",
    [
        (Listener("127.0.0.1", 8265, 5, "python"), True, "Ray's dashboard, as expected"),
        (Listener(PRIVATE, 8265, 5, "python", True), False, "dashboard must listen on localhost"),
        (Listener("0.0.0.0", 5432), False, "PostgreSQL must listen on localhost only"),
        (Listener("127.0.0.1", 5432), True, "PostgreSQL, as expected"),
        (Listener("::", 5000, 7, "mlflow"), False, "MLflow must listen on the private address"),
        (Listener(PRIVATE, 5000, 7, "mlflow"), True, "MLflow, as expected"),
        (Listener("::", 6379, 9, "gcs_server", True), True, "Ray's own"),
        (Listener(PRIVATE, 41000, 9, "ray::IDLE", True), True, "Ray's own"),
        (Listener("0.0.0.0", 22), True, "SSH"),
        (Listener(PRIVATE, 8080, 3, "python3"), False, "not Ray's, MLflow's, PostgreSQL's"),
        (Listener("10.1.2.3", 8080, 3, "python3"), False, "on another address"),
    ],
)
def test_listening_ports_against_the_rule(listener, passed, words):
    finding = listener_finding(listener, head(Path("/nowhere"), "http://127.0.0.2:5000"))
    assert finding.passed is passed and words in finding.what, finding.what


def test_proc_net_addresses_are_decoded():
    assert decode_address("0100007F") == "127.0.0.1"
    assert decode_address("00000000000000000000000000000000") == "::"
    assert decode_address("0000000000000000FFFF00000200007F") == "127.0.0.2"  # v4-mapped


def test_the_dashboard_on_the_private_address_fails(tmp_path):
    with listening("127.0.0.1") as port:
        (closed,) = dashboard_findings(head(tmp_path, dashboard_port=port))
        assert closed.passed and f"refuses {PRIVATE}:{port}; it listens on 127.0.0.1" in closed.what
        with listening(PRIVATE, port):
            (hole,) = dashboard_findings(head(tmp_path, dashboard_port=port))
    assert not hole.passed
    assert f"answers on the private address {PRIVATE}:{port}" in hole.what


def test_mlflow_closed_passes_and_deletes_its_second_user(tmp_path):
    with fake_mlflow() as (uri, users):
        findings = mlflow_findings(head(closed_home(tmp_path), uri))
        assert set(users) == {"admin"}
    assert [finding.passed for finding in findings] == [True, True, True], findings
    assert "refuses experiment 7 (403) to a user granted nothing" in findings[2].what
    assert ADMIN_PASSWORD not in " ".join(finding.what for finding in findings)


@pytest.mark.parametrize(
    "hole, failed",
    [
        ("open", "answers 200 without a password (expected 401"),
        ("read", "answers 200 to a user granted nothing reading experiment 7 (expected 403"),
        ("wrong admin", "answers 401 to the admin of ~/.mlflow/credentials (expected 200"),
    ],
)
def test_mlflow_holes_fail_naming_them(hole, failed, tmp_path):
    home = closed_home(tmp_path)
    if hole == "wrong admin":
        credentials = home / ".mlflow" / "credentials"
        credentials.write_text(credentials.read_text().replace(ADMIN_PASSWORD, "not-it"))
    with fake_mlflow(None if hole == "wrong admin" else hole) as (uri, users):
        findings = mlflow_findings(head(home, uri))
        assert set(users) == {"admin"}
    assert [f.what for f in findings if not f.passed and failed in f.what], findings


def test_ray_not_answering_fails(tmp_path):
    with listening(PRIVATE) as port:
        pass  # a port nothing listens on any more
    (finding,) = ray_findings(Head(tmp_path, f"{PRIVATE}:{port}", "http://127.0.0.2:9"))
    assert not finding.passed and f"Ray's GCS at {PRIVATE}:{port} does not answer" in finding.what


def test_addresses_come_from_env_sh_and_options_override(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(DataError, match=r"no Ray address .*\.xlt/env\.sh \(RAY_ADDRESS"):
        head_from(tmp_path)
    (tmp_path / ".xlt").mkdir()
    (tmp_path / ".xlt" / "env.sh").write_text(
        "export RAY_ADDRESS=10.0.0.5:6379\nexport MLFLOW_TRACKING_URI=http://10.0.0.5:5000\n"
    )
    found = head_from(tmp_path)
    assert (found.private, found.ray_port, found.mlflow_port) == ("10.0.0.5", 6379, 5000)
    assert head_from(tmp_path, ray_address="127.0.0.2:7").private == PRIVATE


def test_live_command_exits_2_without_addresses_and_1_on_a_hole(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["--live", "--home", str(tmp_path)]) == 2
    assert "error: no Ray address" in capsys.readouterr().err
    home = closed_home(tmp_path)
    with fake_mlflow("open") as (uri, _):
        options = ["--home", str(home), "--ray-address", f"{PRIVATE}:9", "--mlflow-uri", uri]
        code = main(["--live", *options])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL MLflow at" in out and "answers 200 without a password" in out
    assert out.splitlines()[-1].startswith(f"live audit of {PRIVATE}: ")
    assert ADMIN_PASSWORD not in out
