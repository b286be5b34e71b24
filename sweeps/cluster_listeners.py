"""The TCP sockets listening on this node, read from /proc (the network namespace of the
reader): each one's address, port and process, and whether the process is Ray's.

A socket's process is found through /proc/PID/fd, which only the process's own user (or
root) may read: another user's listener (PostgreSQL's, sshd's) has no process, and the audit
names it by its port alone. Ray's processes are its daemons (gcs_server, raylet), its workers
(named `ray::...`) and every process that runs Ray's core library (_raylet.so: its agents,
the dashboard, a sweep's driver)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

LISTEN = "0A"  # the kernel's TCP_LISTEN state in /proc/net/tcp
RAY_DAEMONS = ("gcs_server", "raylet")


@dataclass(frozen=True)
class Listener:
    address: str
    port: int
    pid: int | None = None
    process: str = ""
    ray: bool = False

    def name(self) -> str:
        """`0.0.0.0:8080 (python3, pid 12)`, or the port's owner unknown."""
        owner = f"{self.process}, pid {self.pid}" if self.pid else "another user's process"
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port} ({owner})"


def decode_address(hex_address: str) -> str:
    """An address as /proc/net/tcp{,6} writes it (32-bit words in host order, little-endian
    here); an IPv4 address mapped into IPv6 as IPv4."""
    words = bytes.fromhex(hex_address)
    packed = b"".join(words[i : i + 4][::-1] for i in range(0, len(words), 4))
    address = ipaddress.ip_address(packed)
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def listening_sockets(proc: Path = Path("/proc")) -> list[Listener]:
    """Every listening TCP socket of this network namespace, by port and address."""
    found = {}
    for table in ("tcp", "tcp6"):
        path = proc / "net" / table
        if not path.is_file():
            continue
        for row in path.read_text().splitlines()[1:]:
            fields = row.split()
            if len(fields) > 9 and fields[3] == LISTEN:
                hex_address, hex_port = fields[1].split(":")
                found[fields[9]] = (decode_address(hex_address), int(hex_port, 16))
    owners = socket_owners(proc)
    listeners = [
        process_listener(address, port, owners.get(inode), proc)
        for inode, (address, port) in found.items()
    ]
    return sorted(listeners, key=lambda listener: (listener.port, listener.address))


def socket_owners(proc: Path) -> dict[str, int]:
    """Socket inode -> the pid holding it, for the processes this user may read."""
    owners = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    owners.setdefault(target[8:-1], int(entry.name))
        except OSError:  # another user's process, or one that ended meanwhile
            continue
    return owners


def process_listener(address: str, port: int, pid: int | None, proc: Path) -> Listener:
    if pid is None:
        return Listener(address, port)
    try:
        name = (proc / str(pid) / "comm").read_text().strip()
        maps = (proc / str(pid) / "maps").read_text()
    except OSError:
        return Listener(address, port)
    ray = name.startswith("ray::") or name in RAY_DAEMONS or "_raylet.so" in maps
    return Listener(address, port, pid, name, ray)
