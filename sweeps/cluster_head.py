"""What the live audit probes (`python -m sweeps.cluster --live`, on the head): the head's
addresses and home, and a finding's shape.

The addresses are those the head's setup exports in ~/.xlt/env.sh (RAY_ADDRESS: the head's
private address and Ray's GCS port; MLFLOW_TRACKING_URI), then this shell's environment
(`ray exec` sources env.sh from ~/.bashrc); options override either, so that tests can point
the audit at loopback fixtures."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from xlt_core.errors import DataError

# Ray's default dashboard port (`ray start --dashboard-port`), PostgreSQL's.
DASHBOARD_PORT = 8265
POSTGRES_PORT = 5432


@dataclass(frozen=True)
class Finding:
    passed: bool
    what: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.what}"


@dataclass(frozen=True)
class Head:
    home: Path
    ray_address: str
    mlflow_uri: str
    dashboard_port: int = DASHBOARD_PORT

    @property
    def private(self) -> str:
        """The head's private address: the host of RAY_ADDRESS."""
        return self.ray_address.rsplit(":", 1)[0].strip("[]")

    @property
    def ray_port(self) -> int:
        return int(self.ray_address.rsplit(":", 1)[1])

    @property
    def mlflow_port(self) -> int | None:
        return urlsplit(self.mlflow_uri).port

    def shown(self, path: Path) -> str:
        """`path` as ~/... when under the home."""
        try:
            return f"~/{path.relative_to(self.home)}"
        except ValueError:
            return str(path)


def exported(path: Path) -> dict[str, str]:
    """The `export NAME=VALUE` lines of a shell file, quotes removed; {} when it is absent."""
    if not path.is_file():
        return {}
    found = re.findall(r"^\s*export\s+(\w+)=(.*?)\s*$", path.read_text(), flags=re.M)
    return {name: value.strip("'\"") for name, value in found}


def head_from(
    home: Path | None = None,
    ray_address: str | None = None,
    mlflow_uri: str | None = None,
    dashboard_port: int = DASHBOARD_PORT,
) -> Head:
    """The head to audit: options first, then ~/.xlt/env.sh, then the environment; a
    DataError naming what is missing."""
    home = Path(home or Path.home()).expanduser()
    env_file = exported(home / ".xlt" / "env.sh")
    ray_address = ray_address or env_file.get("RAY_ADDRESS") or os.environ.get("RAY_ADDRESS")
    mlflow_uri = (
        mlflow_uri or env_file.get("MLFLOW_TRACKING_URI") or os.environ.get("MLFLOW_TRACKING_URI")
    )
    if not ray_address or not re.fullmatch(r"\[?[\w.:-]+\]?:\d+", ray_address):
        raise DataError(
            f"no Ray address (HOST:PORT, the head's private address) in {home}/.xlt/env.sh "
            f"(RAY_ADDRESS, written by the head's setup), the environment or --ray-address: "
            f"{ray_address!r}"
        )
    if not mlflow_uri or urlsplit(mlflow_uri).scheme not in ("http", "https"):
        raise DataError(
            f"no MLflow server (http://HOST:PORT) in {home}/.xlt/env.sh (MLFLOW_TRACKING_URI, "
            f"written by the head's setup), the environment or --mlflow-uri: {mlflow_uri!r}"
        )
    return Head(home, ray_address, mlflow_uri, dashboard_port)
