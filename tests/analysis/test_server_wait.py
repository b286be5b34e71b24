"""`python -m analysis` against a tracking server that does not answer says at once which
server it waits for (no password) and for how long at most, then refuses in one line;
MLflow's own retries would sit silent for about four minutes."""

import http.server
import threading

import pytest

from analysis import server_wait
from analysis.__main__ import main
from analysis.frames import AnalysisError
from xlt_schema.log import configure


def test_a_dead_server_is_said_at_once_and_refused_after_the_wait(capsys):
    uri = "http://reader:s3cret@127.0.0.1:1"
    code = main(["report", "--experiment", "x", "--tracking-uri", uri, "--server-wait", "1"])
    out, err = capsys.readouterr()
    assert code == 2
    (waiting,) = out.splitlines()  # a warning: logged, on stdout (xlt_schema/log.py)
    (refused,) = err.splitlines()
    assert waiting == (
        "Waiting for the tracking server http://127.0.0.1:1 (ConnectionError): at most 1 s "
        "(--server-wait)"
    )
    assert refused.startswith(
        "error: the tracking server http://127.0.0.1:1 did not answer within 1 s"
    )
    assert "s3cret" not in out + err


def test_a_server_that_comes_back_within_the_wait_is_used(monkeypatch, capsys):
    answers = iter(["ConnectionError", "HTTP 503", None])
    monkeypatch.setattr(server_wait, "_health_problem", lambda health, timeout: next(answers))
    monkeypatch.setattr(server_wait.time, "sleep", lambda seconds: None)
    configure(0)
    server_wait.wait_for_server("http://127.0.0.1:5000", wait_s=30)
    assert capsys.readouterr().out.count("Waiting for the tracking server") == 1


def test_the_wait_is_bounded_by_its_clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(server_wait.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(
        server_wait.time, "sleep", lambda seconds: now.__setitem__(0, now[0] + seconds)
    )
    monkeypatch.setattr(server_wait, "_health_problem", lambda health, timeout: "ConnectTimeout")
    with pytest.raises(AnalysisError, match="did not answer within 7 s"):
        server_wait.wait_for_server("http://10.0.0.9:5000", wait_s=7)
    assert now[0] == 7.0


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_that_answers_is_not_waited_for(capsys):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        server_wait.wait_for_server(f"http://127.0.0.1:{server.server_port}", wait_s=5)
    finally:
        server.shutdown()
    assert capsys.readouterr() == ("", "")


def test_sqlite_stores_are_not_probed(monkeypatch):
    monkeypatch.setattr(server_wait, "_health_problem", pytest.fail)
    server_wait.wait_for_server("sqlite:////tmp/mlflow.db")
