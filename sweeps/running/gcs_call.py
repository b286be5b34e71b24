"""The one gRPC call `--address`'s probe makes (sweeps/running/ray_address.py): Ray's
`NodeInfoGcsService/GetClusterId`, the first call `ray.init` makes of a head's GCS, written
by hand on the probe's HTTP/2 connection (RFC 9113; HPACK, RFC 7541, literals only): the
install has no grpcio. A Ray head answers it with a message (a DATA frame); any other gRPC
server answers with an error status alone (UNIMPLEMENTED: HEADERS that end the stream) or
resets the stream, and one that only sent its SETTINGS frame does not answer (`ray.init` then
waited for it over 150 s)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

GET_CLUSTER_ID = "/ray.rpc.NodeInfoGcsService/GetClusterId"
# HTTP/2 frame types and flags (RFC 9113, section 6).
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
STREAM = 1  # the client's first stream
FRAME_HEADER_BYTES = 9  # length (3 bytes), type, flags, stream id (4 bytes)
# Ray's token (RAY_AUTH_MODE=token), looked up as Ray's own client does: the variable, the
# file it names, else ~/.ray/auth_token; sent as Ray sends it.
TOKEN_VARIABLE, TOKEN_PATH_VARIABLE = "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"
DEFAULT_TOKEN_FILE = Path("~/.ray/auth_token")
# An empty GetClusterIdRequest as gRPC frames it: not compressed, 0 bytes long.
EMPTY_MESSAGE = bytes(5)


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """An HTTP/2 frame: length (3 bytes), type, flags, stream id (4 bytes), payload."""
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


def hpack_integer(value: int, prefix_bits: int, first: int) -> bytes:
    """An HPACK integer in a `prefix_bits` prefix, the byte's other bits `first`."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = [first | limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes([*out, value])


def hpack_string(text: str) -> bytes:
    data = text.encode()
    return hpack_integer(len(data), 7, 0) + data  # not Huffman-coded


def request_headers(authority: str, token: str | None) -> bytes:
    """The call's header block: `:method POST` and `:scheme http` (static table 3 and 6),
    `:path`, `:authority` and `content-type` as literals of static names (4, 1 and 31), `te`
    and the token as literals of new names; none enters the server's table."""
    block = bytes([0x83, 0x86])
    for index, value in ((4, GET_CLUSTER_ID), (1, authority), (31, "application/grpc")):
        block += hpack_integer(index, 4, 0x00) + hpack_string(value)
    block += b"\x00" + hpack_string("te") + hpack_string("trailers")
    if token:  # "never indexed" (0x10): a credential
        block += b"\x10" + hpack_string("authorization") + hpack_string(f"Bearer {token}")
    return block


def ray_token() -> str | None:
    """The Ray token this machine holds, or None."""
    if os.environ.get(TOKEN_VARIABLE):
        return os.environ[TOKEN_VARIABLE].strip()
    path = Path(os.environ.get(TOKEN_PATH_VARIABLE) or DEFAULT_TOKEN_FILE).expanduser()
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def call_get_cluster_id(connection: socket.socket, authority: str, timeout_s: float) -> str | None:
    """Make the call on `connection` (the preface and SETTINGS exchanged); None when it is
    answered with a message, else what happened instead."""
    connection.sendall(
        frame(SETTINGS, ACK, 0)
        + frame(HEADERS, END_HEADERS, STREAM, request_headers(authority, ray_token()))
        + frame(DATA, END_STREAM, STREAM, EMPTY_MESSAGE)
    )
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            kind, flags, stream, payload = _read_frame(connection, deadline)
            if kind == DATA and stream == STREAM and payload:
                return None
            if kind == HEADERS and stream == STREAM and flags & END_STREAM:
                return (
                    "it answered GetClusterId with an error status and no reply: another gRPC "
                    "server, or a Ray head whose token this machine lacks (RAY_AUTH_TOKEN, "
                    "~/.ray/auth_token)"
                )
            if kind == RST_STREAM and stream == STREAM or kind == GOAWAY:
                return "it refused the GetClusterId call"
            if kind == SETTINGS and not flags & ACK:
                connection.sendall(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                connection.sendall(frame(PING, ACK, 0, payload))
    except TimeoutError:
        return "no answer to a GetClusterId call"
    except ConnectionError as error:
        return f"the GetClusterId call ended: {error.strerror or error}"


def _read_frame(connection: socket.socket, deadline: float) -> tuple[int, int, int, bytes]:
    header = read_exactly(connection, FRAME_HEADER_BYTES, deadline)
    length = int.from_bytes(header[:3], "big")
    stream = int.from_bytes(header[5:], "big") & 0x7FFFFFFF
    return header[3], header[4], stream, read_exactly(connection, length, deadline)


def read_exactly(connection: socket.socket, size: int, deadline: float) -> bytes:
    """`size` bytes from `connection` by `deadline` (time.monotonic()), else TimeoutError, or
    ConnectionError when it closes first."""
    data = b""
    while len(data) < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        connection.settimeout(remaining)
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data
