"""`--address` (or $RAY_ADDRESS) probed before `ray.init`: a cluster address where nothing
listens would make `ray.init` retry for minutes in silence (`127.0.0.1:1` hung), so it is
refused in one line, naming the address, within `PROBE_TIMEOUT_S`."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

from xlt_core.errors import ConfigError

PROBE_TIMEOUT_S = 10.0
# Addresses that name no endpoint: Ray finds (auto) or starts (local) the cluster itself.
NO_ENDPOINT = ("auto", "local")
ALLOWED = "host:port of a running Ray head (GCS, e.g. 10.0.0.5:6379), ray://host:port, or auto"


def check_ray_address(address: str | None, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Raise ConfigError unless the cluster `address` (else $RAY_ADDRESS) accepts a TCP
    connection; nothing to check for no address, `auto` or `local`."""
    flag = "--address" if address else "RAY_ADDRESS"
    address = address or os.environ.get("RAY_ADDRESS")
    if not address or address in NO_ENDPOINT:
        return
    host, port = _endpoint(flag, address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or error
        raise ConfigError(
            flag,
            address,
            f"a Ray cluster that answers: nothing accepted a connection to {host}:{port} "
            f"within {timeout_s:g} s ({reason}); {ALLOWED}",
        ) from None


def _endpoint(flag: str, address: str) -> tuple[str, int]:
    scheme, _, rest = address.rpartition("://")
    try:
        parts = urlsplit(f"//{rest}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if scheme not in ("", "ray") or not host or port is None:
        raise ConfigError(flag, address, ALLOWED)
    return host, port
