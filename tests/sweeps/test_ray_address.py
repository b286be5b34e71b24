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

from sweeps.running import ray_address
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
