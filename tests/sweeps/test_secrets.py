"""Credentials in the tracking URI (`http://user:password@host`) stay out of everything the
project prints, logs, hands to Ray Tune or writes: each writer on its own, then one sweep
through a stand-in server on 127.0.0.1 that demands them, with every file it leaves grepped."""

import base64
import http.server
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest
import requests
from conftest import scaled_timeout
from mlflow.tracking import MlflowClient
from sweep_helpers import TINY, start_script

from xlt_schema import COMPLETE_TAG, PARENT_ROLE, PARENT_RUN_TAG, ROLE_TAG
from xlt_schema.tracking_store import (
    PASSWORD_ENV,
    TRACKING_URI_ENV,
    USERNAME_ENV,
    redact,
    strip_credentials,
    take_credentials,
)

PLANTED = "pl4nted-S3cret"
USER = "xlt"


@pytest.fixture
def clean_env():
    """MLflow's variables unset, and whatever the test moves into them undone after it."""
    names = (USERNAME_ENV, PASSWORD_ENV, TRACKING_URI_ENV)
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    yield
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(saved)


def test_redact_hides_the_userinfo_of_every_uri_in_a_text():
    text = "MLflow http://xlt:p@ss@host:5000/api and postgresql://u:pw@db/x, sqlite:////a@b/m.db"
    assert redact(text) == (
        "MLflow http://***@host:5000/api and postgresql://***@db/x, sqlite:////a@b/m.db"
    )
    assert redact("http://127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert strip_credentials("https://u:p@h:1/x?y=1") == "https://h:1/x?y=1"


def test_take_credentials_moves_a_servers_credentials_to_mlflows_variables(clean_env):
    uri = f"http://{USER}:{PLANTED.replace('-', '%2D')}@127.0.0.1:5000"
    os.environ[TRACKING_URI_ENV] = uri
    assert take_credentials(uri) == "http://127.0.0.1:5000"
    assert os.environ[USERNAME_ENV] == USER and os.environ[PASSWORD_ENV] == PLANTED
    assert os.environ[TRACKING_URI_ENV] == "http://127.0.0.1:5000"
    # A database's driver needs its password in the URI: left as it is.
    assert take_credentials("postgresql://u:pw@db/x") == "postgresql://u:pw@db/x"


def test_the_sweeps_uri_has_no_password_and_the_health_check_still_authenticates(clean_env):
    from sweeps.records.tracking import check_tracking_uri, resolve_tracking_uri

    with _server(_AuthOnly) as port:
        os.environ[TRACKING_URI_ENV] = f"http://{USER}:{PLANTED}@127.0.0.1:{port}"
        uri = resolve_tracking_uri(None)
        assert uri == f"http://127.0.0.1:{port}"
        check_tracking_uri(uri)  # a 401 would be refused


def test_the_health_check_authenticates_with_mlflows_credentials_file(
    clean_env, tmp_path, monkeypatch
):
    """A cluster's head logs with ~/.mlflow/credentials (ray_cluster.yaml), which MLflow's
    client reads: the check before Ray sends it too (before: 401, the sweep refused on the
    cluster, found by `make cluster-check`)."""
    from sweeps.records.tracking import check_tracking_uri

    (tmp_path / ".mlflow").mkdir()
    credentials = f"[mlflow]\nmlflow_tracking_username = {USER}\nmlflow_tracking_password = "
    (tmp_path / ".mlflow" / "credentials").write_text(credentials + PLANTED + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    with _server(_AuthOnly) as port:
        check_tracking_uri(f"http://127.0.0.1:{port}")  # a 401 would be refused


def test_the_resume_command_and_the_reports_address_hold_no_password():
    from analysis.mlflow_ui import ui_address
    from sweeps import ear_xnli
    from sweeps.cli import _resume_command

    uri = f"http://{USER}:{PLANTED}@10.0.0.1:5000"
    command = _resume_command(ear_xnli, ["--tracking-uri", uri])
    assert PLANTED not in command and "http://***@10.0.0.1:5000" in command
    assert ui_address(uri, "7").startswith("http://10.0.0.1:5000/#/experiments/7/")


def test_the_trials_config_holds_no_tracking_uri():
    """Tune writes the config to disk (params.json, result.json, the experiment state): the
    URI, which may be a database's with its password, goes to the trials apart."""
    from sweeps.running.runner import SweepOptions
    from sweeps.running.tune_phases import TunePhases
    from sweeps.spec.strategy import DEFAULT_STRATEGY

    uri = f"postgresql://{USER}:{PLANTED}@db/mlflow"
    spec = type("Spec", (), {"base": {}, "log_models": False, "strategy": DEFAULT_STRATEGY})()
    phases = TunePhases(spec, SweepOptions(tracking_uri=uri), None, "1", "p", {}, {"cpu": 1}, None)
    assert PLANTED not in repr(phases.request.to_space(points=[{}], seeds=[0]))


def test_analysis_keeps_the_password_out_of_its_client_uri(clean_env):
    from analysis.collect import connect

    client = connect(f"http://{USER}:{PLANTED}@127.0.0.1:9")
    assert PLANTED not in client.tracking_uri and os.environ[PASSWORD_ENV] == PLANTED


class _AuthOnly(http.server.BaseHTTPRequestHandler):
    """A GET answers 200 and MLflow's version (as `GET /version` does) with the planted
    credentials, 401 without."""

    def do_GET(self):
        self.send_response(200 if _authorized(self.headers) else 401)
        self.end_headers()
        self.wfile.write(b"3.17.2")

    def log_message(self, *args):
        pass


def _authorized(headers) -> bool:
    token = base64.b64encode(f"{USER}:{PLANTED}".encode()).decode()
    return headers.get("Authorization") == f"Basic {token}"


class _server:
    """A stand-in HTTP server on 127.0.0.1 in a thread; yields its port."""

    def __init__(self, handler):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.httpd.server_address[1]

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _proxy_to(backend_port: int, refused: list):
    """A handler that demands the planted credentials (401 without, counted in `refused`)
    and forwards every request to the MLflow server on `backend_port`, as a reverse proxy
    with basic authentication in front of a tracking server does."""

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not _authorized(self.headers):
                refused.append(self.path)
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            skip = {"host", "authorization", "content-length", "connection"}
            answer = requests.request(
                self.command,
                f"http://127.0.0.1:{backend_port}{self.path}",
                headers={k: v for k, v in self.headers.items() if k.lower() not in skip},
                data=body,
                timeout=scaled_timeout(60),
            )
            self.send_response(answer.status_code)
            for key, value in answer.headers.items():
                # requests decoded the body: no content-encoding, a length of its own.
                if key.lower() not in {
                    "content-length",
                    "content-encoding",
                    "transfer-encoding",
                    "connection",
                }:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        def log_message(self, *args):
            pass

    return Proxy


def _files_holding(text: str, *roots: Path) -> list[str]:
    found = []
    for root in roots:
        for path in Path(root).rglob("*"):
            if path.is_file() and not path.is_symlink():
                try:
                    if text.encode() in path.read_bytes():
                        found.append(str(path))
                except OSError:
                    continue
    return found


@pytest.mark.slow
def test_a_planted_password_appears_in_no_file_a_sweep_leaves(tmp_path):
    """The password, planted in MLFLOW_TRACKING_URI, authenticates the driver's and every
    trial's requests (the stand-in refuses any without it) and is found in no file under the
    working directory (Tune's storage path, the report, the driver's output), the temporary
    directory (Ray's session logs) or the server's artifacts."""
    from test_sweep_faults import _free_port, _start_mlflow_server, _stop

    backend = _start_mlflow_server(tmp_path, _free_port())
    workdir, temp = tmp_path / "work", Path(tempfile.mkdtemp(prefix="xs", dir="/tmp"))
    workdir.mkdir()
    refused = []
    backend_port = int(backend.args[backend.args.index("--port") + 1])
    try:
        with _server(_proxy_to(backend_port, refused)) as port:
            env = {
                **os.environ,
                TRACKING_URI_ENV: f"http://{USER}:{PLANTED}@127.0.0.1:{port}",
                "TMPDIR": str(temp),
                "RAY_TMPDIR": str(temp),
            }
            for name in (USERNAME_ENV, PASSWORD_ENV):
                env.pop(name, None)
            driver = start_script(workdir, *TINY, "--set", "seeds=0", env=env)
            code = driver.wait(timeout=scaled_timeout(600))
            log = (workdir / "driver.log").read_text()
            assert code == 0, log[-3000:]
            assert not refused, refused[:5]
            client = MlflowClient(f"http://127.0.0.1:{backend_port}")
            experiment = client.get_experiment_by_name("ear_xnli")
            runs = client.search_runs([experiment.experiment_id])
            (parent,) = [run for run in runs if run.data.tags.get(ROLE_TAG) == PARENT_ROLE]
            trials = [run for run in runs if run is not parent]
            assert parent.data.tags.get(COMPLETE_TAG) == "true"
            assert len(trials) == 3 and all(
                run.info.status == "FINISHED"
                and run.data.tags[PARENT_RUN_TAG] == parent.info.run_id
                for run in trials
            )
    finally:
        _stop(backend)
    assert (workdir / "ray_results").is_dir() and list(workdir.glob("reports/*/*/report.md"))
    assert list(temp.glob("**/session_*/logs/*")), "Ray's session logs are not where expected"
    assert _files_holding(PLANTED, workdir, temp, tmp_path / "artifacts") == []
    shutil.rmtree(temp, ignore_errors=True)  # kept for a look when the test fails


def test_redact_hides_a_secret_in_a_uris_query():
    """Issue 53, item 12: `?password=` was echoed in the error line."""
    text = (
        f"postgresql://db/x?sslmode=require&password={PLANTED} and "
        f"http://h:1/?api_key={PLANTED};user=a, s3://b/k?X-Amz-Signature={PLANTED}&x=1 "
        f"http://h/?token={PLANTED}#top 'http://h/?client_secret={PLANTED}'"
    )
    assert redact(text) == (
        "postgresql://db/x?sslmode=require&password=*** and "
        "http://h:1/?api_key=***;user=a, s3://b/k?X-Amz-Signature=***&x=1 "
        "http://h/?token=***#top 'http://h/?client_secret=***'"
    )
    assert redact("http://h:1/?page=2&q=pass") == "http://h:1/?page=2&q=pass"


def test_a_refused_tracking_uri_is_printed_without_the_password_in_its_query(tmp_path, capsys):
    from sweeps import ear_xnli
    from sweeps.cli import EXIT_BAD_INPUT, main

    with _server(_AuthOnly) as port:  # answers 401: refused
        uri = f"http://127.0.0.1:{port}/?password={PLANTED}"
        assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert PLANTED not in error and f"127.0.0.1:{port}/?password=***" in error, error
