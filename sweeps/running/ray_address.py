"""`--address` (or $RAY_ADDRESS) probed before `ray.init`: a cluster address where nothing
listens would make `ray.init` retry for minutes in silence (`127.0.0.1:1` hung), and one
where something other than Ray listens (an HTTP server) hung it for good, so either is
refused in one line, naming the address, within `PROBE_TIMEOUT_S`.

A Ray head's GCS (and the Ray Client server behind `ray://`) is a gRPC server, so it speaks
HTTP/2: sent HTTP/2's connection preface, it must answer with a SETTINGS frame (RFC 9113,
section 3.4). An HTTP/1 server, a database or a port that never answers does not. A gRPC
server that is not Ray's (or a listener that sends a SETTINGS frame and no more) does, so a
GCS address is then asked `ray.init`'s first call, GetClusterId (sweeps/running/gcs_call.py),
which only a Ray head answers with a reply. (Ray's own `GcsClient` waits 40 s before it gives
up on such a port, and logs as it waits.) With RAY_USE_TLS set the head speaks TLS first, and
only the connection is checked; a `ray://` address (the Ray Client server) is checked to the
SETTINGS frame."""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import urlsplit

from sweeps.running.gcs_call import (
    FRAME_HEADER_BYTES,
    SETTINGS,
    call_get_cluster_id,
    read_exactly,
)
from xlt_core.errors import ConfigError

PROBE_TIMEOUT_S = 10.0
# Addresses that name no endpoint: Ray finds (auto) or starts (local) the cluster itself.
NO_ENDPOINT = ("auto", "local")
ALLOWED = "host:port of a running Ray head (GCS, e.g. 10.0.0.5:6379), ray://host:port, or auto"
# HTTP/2's client preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def check_ray_address(address: str | None, timeout_s: float | None = None) -> None:
    """Raise ConfigError unless the cluster `address` (else $RAY_ADDRESS) accepts a TCP
    connection and answers as a gRPC server does; nothing to check for no address, `auto`
    or `local`."""
    flag = "--address" if address else "RAY_ADDRESS"
    address = address or os.environ.get("RAY_ADDRESS")
    if not address or address in NO_ENDPOINT:
        return
    host, port = _endpoint(flag, address)
    timeout_s = timeout_s or PROBE_TIMEOUT_S
    try:
        connection = socket.create_connection((host, port), timeout=timeout_s)
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or error
        raise ConfigError(
            flag,
            address,
            f"a Ray cluster that answers: nothing accepted a connection to {host}:{port} "
            f"within {timeout_s:g} s ({reason}); {ALLOWED}",
        ) from None
    with connection:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        answer = _first_frame(connection)
        if answer is not None:
            raise ConfigError(
                flag,
                address,
                f"a Ray cluster: {host}:{port} accepted a connection but did not answer as a "
                f"Ray head does (gRPC, HTTP/2) within {timeout_s:g} s ({answer}); {ALLOWED}",
            )
        if not address.startswith("ray://"):  # a GCS: its first call, as ray.init makes it
            answer = call_get_cluster_id(connection, f"{host}:{port}", timeout_s)
    if answer is not None:
        raise ConfigError(
            flag,
            address,
            f"a Ray cluster: {host}:{port} answered as a gRPC server but not as a Ray head's "
            f"GCS within {timeout_s:g} s ({answer}); {ALLOWED}",
        )


def _first_frame(connection: socket.socket) -> str | None:
    """None when the server answers HTTP/2's preface with a SETTINGS frame (read whole), else
    what it did."""
    try:
        connection.sendall(HTTP2_PREFACE)
        header = b""
        while len(header) < FRAME_HEADER_BYTES:
            chunk = connection.recv(FRAME_HEADER_BYTES - len(header))
            if not chunk:
                break
            header += chunk
        if len(header) == FRAME_HEADER_BYTES and header[3] == SETTINGS and header[5:] == bytes(4):
            deadline = time.monotonic() + connection.gettimeout()
            read_exactly(connection, int.from_bytes(header[:3], "big"), deadline)
            return None
    except TimeoutError:
        return "no answer"
    except OSError as error:
        return error.strerror or str(error)
    if not header:
        return "it closed the connection"
    return f"it answered {header.decode('ascii', 'replace')!r}"


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
