"""A tracking URI that leads to no answering MLflow is refused in one line before Ray starts,
within seconds, exit 2, without a traceback or `--resume` advice (issue 53, item 3): an HTTP
server that is not MLflow (200 `{}` to everything: before, Ray started, then exit 3 and a
traceback), a database server that accepts no connection (before, MLflow retried about 2
minutes), a database driver not installed (before, `ModuleNotFoundError`, exit 3), a scheme
MLflow has no store for. A SIGTERM during the probe is honoured at once. Only loopback servers
the tests start themselves."""

import contextlib
import http.server
import importlib.util
import os
import signal
import socket
import threading

import pytest

from sweeps import ear_xnli
from sweeps.cli import EXIT_BAD_INPUT, main
from sweeps.records import uri_probe
from sweeps.records.tracking import check_tracking_uri
from sweeps.running import runner
from sweeps.safety.interruption import StopSignals, SweepInterrupted
from xlt_core.errors import ConfigError

SECRET = "s3cr3t-pw"


class _Answer(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the server's `body`, HTTP 200."""

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _http_server(body: bytes):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.body = body
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


@contextlib.contextmanager
def _full_listener():
    """A loopback listener whose backlog is full: a new connection is never accepted."""
    with socket.create_server(("127.0.0.1", 0), backlog=0) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the backlog
            yield port


def _refused_in_one_line(uri: str, capsys, monkeypatch) -> str:
    """The error line of a sweep given `uri`, which must not reach Ray."""

    def ray_must_not_start(*args, **kwargs):
        raise AssertionError("the sweep went on to Ray")

    monkeypatch.setattr(runner, "run_sweep", ray_must_not_start)
    capsys.readouterr()
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1 and error.startswith("error: "), error
    assert "Traceback" not in error and "--resume" not in error
    return error


def test_an_http_server_that_is_not_mlflow_is_refused(capsys, monkeypatch):
    with _http_server(b"{}") as uri:
        error = _refused_in_one_line(uri, capsys, monkeypatch)
    assert (
        f"error: invalid setting --tracking-uri='{uri}': an MLflow tracking server (mlflow "
        "server), whose GET /version answers its version; this one answered HTTP 200 '{}'"
    ) in error


def test_an_mlflow_servers_version_answer_passes():
    with _http_server(b"3.17.2") as uri:
        check_tracking_uri(uri)


def test_a_database_that_accepts_no_connection_is_refused_without_its_password(capsys, monkeypatch):
    uri = f"postgresql://user:{SECRET}@127.0.0.1:{_closed_port()}/mlflow"
    error = _refused_in_one_line(uri, capsys, monkeypatch)
    assert SECRET not in error
    assert "a database server that accepts a connection: nothing accepted one at 127.0" in error


def test_a_database_that_never_accepts_is_refused_once_the_probe_waited():
    with _full_listener() as port:
        with pytest.raises(ConfigError, match=r"within 0\.5 s \(no answer\)"):
            # The probe's own wait under test (its message names it), not a limit on the test.
            check_tracking_uri(f"postgresql://u@127.0.0.1:{port}/db", 0.5)


@pytest.mark.skipif(importlib.util.find_spec("MySQLdb") is not None, reason="it is installed")
def test_a_database_whose_driver_is_missing_is_refused_naming_it(capsys, monkeypatch):
    error = _refused_in_one_line(f"mysql://u:{SECRET}@127.0.0.1/mlflow", capsys, monkeypatch)
    assert SECRET not in error
    assert "whose Python driver is installed (No module named 'MySQLdb')" in error
    assert "mysql+DRIVER://" in error


def test_a_scheme_mlflow_has_no_store_for_is_refused(capsys, monkeypatch):
    error = _refused_in_one_line("nosuch://host/x", capsys, monkeypatch)
    assert "MLflow has no tracking store for nosuch://" in error


@pytest.mark.parametrize("server", ["http", "database"])
def test_a_sigterm_during_the_probe_is_honoured_at_once(monkeypatch, server):
    # The probe may wait 600 s; the signal comes once it waits, and stops it.
    waiting = threading.Event()
    with contextlib.ExitStack() as stack:
        if server == "http":  # accepts, never answers
            silent = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
            uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
            accepted = []
            stack.callback(lambda: [connection.close() for connection in accepted])

            def wait_for_the_probe():
                accepted.append(silent.accept()[0])  # connected: it waits for the answer
        else:  # never accepts
            uri = f"postgresql://u@127.0.0.1:{stack.enter_context(_full_listener())}/db"
            connect = socket.create_connection

            def noted_connect(*args, **kwargs):
                waiting.set()  # the probe's connection, which waits to be accepted
                return connect(*args, **kwargs)

            monkeypatch.setattr(socket, "create_connection", noted_connect)
            wait_for_the_probe = waiting.wait

        def terminate():
            wait_for_the_probe()
            os.kill(os.getpid(), signal.SIGTERM)

        with StopSignals(), pytest.raises(SweepInterrupted, match="SIGTERM received"):
            threading.Thread(target=terminate, daemon=True).start()
            check_tracking_uri(uri, 600)  # a probe that would wait long: the signal ends it


def test_every_database_engine_mlflow_knows_has_a_port():
    from mlflow.store.db.db_types import DATABASE_ENGINES

    assert set(DATABASE_ENGINES) - {"sqlite"} == set(uri_probe.DATABASE_PORTS)
