"""A Ray address where nothing listens (`--address 127.0.0.1:1`, or $RAY_ADDRESS), or where
something other than Ray listens (an HTTP server), is refused before `ray.init`, which would
otherwise retry for minutes in silence or hang: exit 2, one line naming the address, nothing
tracked; a running Ray head passes."""

import http.server
import os
import socket
import subprocess
import sys
import threading

import pytest
from conftest import scaled_timeout
from sweep_helpers import SCRIPT

from sweeps.running import gcs_call, ray_address
from sweeps.running.ray_address import check_ray_address
from xlt_core.errors import ConfigError


def test_a_dead_address_exits_2_in_one_line_before_ray_starts(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--preset", "smoke", "--address", "127.0.0.1:1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),  # a hang (ray.init retrying) fails here
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith(
        "error: invalid setting --address='127.0.0.1:1': a Ray cluster that answers: nothing "
        "accepted a connection to 127.0.0.1:1"
    )
    assert completed.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no store, no Ray results


def test_ray_address_from_the_environment_is_probed_too(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "ray://127.0.0.1:1")
    with pytest.raises(ConfigError, match=r"^invalid setting RAY_ADDRESS='ray://127.0.0.1:1'"):
        check_ray_address(None, timeout_s=scaled_timeout(5))


@pytest.fixture
def http_server():
    """A plain HTTP server on a free local port: it accepts TCP, but is no Ray head."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # not on the test's stderr
        pass


def test_a_port_that_is_not_ray_is_refused_naming_what_answered(http_server, monkeypatch):
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    with pytest.raises(ConfigError) as refused:
        check_ray_address(http_server, timeout_s=scaled_timeout(5))
    assert str(refused.value).startswith(
        f"invalid setting --address='{http_server}': a Ray cluster: {http_server} accepted a "
        "connection but did not answer as a Ray head does (gRPC, HTTP/2)"
    )
    assert "it answered" in str(refused.value)


def test_a_port_that_accepts_and_never_answers_is_refused(monkeypatch):
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    # A short probe: no load makes a silent server answer, so the outcome does not depend on it.
    monkeypatch.setattr(ray_address, "PROBE_TIMEOUT_S", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (backlog), never replies
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(ConfigError, match=r"did not answer as a Ray head.*\(no answer\)"):
            check_ray_address(address)


@pytest.mark.slow
def test_a_running_ray_head_passes_and_local_and_auto_need_no_probe(monkeypatch):
    import ray

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for address in (None, "auto", "local"):
        check_ray_address(address)
    # "local": a plain ray.init() would attach to a cluster a `ray start` recorded.
    ray.init(address="local", num_cpus=1, include_dashboard=False)
    try:
        check_ray_address(ray.get_runtime_context().gcs_address, timeout_s=scaled_timeout(10))
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_a_sweep_given_a_port_that_is_not_ray_exits_2_in_one_line(http_server, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_USE_TLS")}
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--preset", "smoke", "--address", http_server],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(60),  # before, ray.init hung here for good
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith(f"error: invalid setting --address='{http_server}'")
    assert completed.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no store, no Ray results


@pytest.mark.parametrize("address", ["10.0.0.5", "http://10.0.0.5:8265", "host:port"])
def test_an_address_without_host_and_port_is_refused(address):
    with pytest.raises(ConfigError, match="host:port of a running Ray head"):
        check_ray_address(address)


class _Http2Listener:
    """A loopback listener that answers HTTP/2's preface with a SETTINGS frame, then sends
    `reply` once the client's next bytes come (nothing when it is empty) and keeps the
    connection open: a gRPC server that is not Ray's GCS (issue 53, item 5)."""

    def __init__(self, reply: bytes = b""):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.reply = reply
        self.connections = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.getsockname()[1]}"

    def _serve(self):
        connection, _ = self.server.accept()
        self.connections.append(connection)
        connection.recv(len(ray_address.HTTP2_PREFACE))
        connection.sendall(gcs_call.frame(gcs_call.SETTINGS, 0, 0))
        if self.reply:
            connection.recv(4096)  # the call
            connection.sendall(self.reply)

    def close(self):
        for connection in self.connections:
            connection.close()
        self.server.close()


@pytest.mark.parametrize("answers", ["nothing", "an error status"])
def test_a_grpc_server_that_is_not_rays_gcs_is_refused(monkeypatch, answers):
    # Before, a listener that sent a SETTINGS frame passed the probe and `ray.init` hung on
    # it (over 150 s, "Failed to get cluster ID from GCS server").
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    # A short probe: no load makes a silent server answer, so the outcome does not depend on it.
    monkeypatch.setattr(ray_address, "PROBE_TIMEOUT_S", 0.5)
    # UNIMPLEMENTED as a gRPC server sends it: HEADERS (`:status 200`) that end the stream.
    trailers = gcs_call.frame(gcs_call.HEADERS, gcs_call.END_STREAM | gcs_call.END_HEADERS, 1)
    listener = _Http2Listener(b"" if answers == "nothing" else trailers + b"\x88")
    address = listener.address
    try:
        with pytest.raises(ConfigError) as refused:
            check_ray_address(address)
    finally:
        listener.close()
    message = str(refused.value)
    assert message.startswith(
        f"invalid setting --address='{address}': a Ray cluster: {address} "
        "answered as a gRPC server but not as a Ray head's GCS within 0.5 s"
    ), message
    what = "no answer to a GetClusterId call" if answers == "nothing" else "an error status"
    assert what in message and "\n" not in message


def test_the_gcs_call_is_framed_as_http2_and_hpack_write_it():
    # RFC 7541, C.1: 10 in a 5-bit prefix is one byte; 1337 is 31, 154, 10.
    assert gcs_call.hpack_integer(10, 5, 0) == bytes([10])
    assert gcs_call.hpack_integer(1337, 5, 0) == bytes([31, 154, 10])
    block = gcs_call.request_headers("h:1", token="t0k")
    assert block.startswith(bytes([0x83, 0x86, 0x04, len(gcs_call.GET_CLUSTER_ID)]))
    assert block.endswith(b"\x10\x0dauthorization\x0aBearer t0k")
    assert gcs_call.frame(gcs_call.DATA, gcs_call.END_STREAM, 1, bytes(5)) == (
        bytes([0, 0, 5, 0, 1, 0, 0, 0, 1]) + bytes(5)
    )
