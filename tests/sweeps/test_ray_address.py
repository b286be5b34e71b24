"""A Ray address where nothing listens (`--address 127.0.0.1:1`, or $RAY_ADDRESS) is refused
before `ray.init`, which would otherwise retry for minutes in silence: exit 2, one line
naming the address, nothing tracked."""

import os
import socket
import subprocess
import sys

import pytest
from conftest import scaled_timeout
from sweep_helpers import SCRIPT

from sweeps.ray_address import check_ray_address
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


def test_a_listening_head_local_and_auto_pass(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with socket.create_server(("127.0.0.1", 0)) as server:
        check_ray_address(f"127.0.0.1:{server.getsockname()[1]}", timeout_s=scaled_timeout(5))
    for address in (None, "auto", "local"):
        check_ray_address(address)


@pytest.mark.parametrize("address", ["10.0.0.5", "http://10.0.0.5:8265", "host:port"])
def test_an_address_without_host_and_port_is_refused(address):
    with pytest.raises(ConfigError, match="host:port of a running Ray head"):
        check_ray_address(address)
