"""Real tracking servers on loopback, for the load test: a throwaway PostgreSQL cluster
(Debian's server binaries, initdb + pg_ctl in a temporary directory) and `mlflow server` over
it or over a SQLite file. Each is a context manager that stops what it started.

The PostgreSQL side mirrors the cluster head (ray_cluster.yaml): a role `xlt` with a
generated password, a database `mlflow`, and the password given to the MLflow server through
a libpq password file (PGPASSFILE), never in the backend URI or on a command line.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import requests

BACKENDS = ("postgresql", "sqlite")
DEBIAN_POSTGRES = Path("/usr/lib/postgresql")
# initdb and the server refuse to run as root; as root they run as Debian's service user.
POSTGRES_USER = "postgres"
ROLE, DATABASE = "xlt", "mlflow"
# MLflow's server also starts consumers for its own jobs (GenAI evaluation and the like),
# eight more Python processes per server here (15 against 7); the project runs no such job.
JOBS_OFF = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
# Uvicorn workers of `mlflow server`: its default, as the cluster head runs it.
SERVER_WORKERS = 4
START_TIMEOUT_S = 180  # four workers importing MLflow on two busy cores
STOP_TIMEOUT_S = 10  # then killed: nothing of a throwaway server needs a clean shutdown


def postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are: the newest of Debian's /usr/lib/postgresql/<v>/bin,
    else the PATH's."""
    versions = sorted(
        DEBIAN_POSTGRES.glob("*/bin/initdb"),
        key=lambda initdb: int(initdb.parts[-3]) if initdb.parts[-3].isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def postgres_unavailable() -> str | None:
    """Why a PostgreSQL-backed server cannot run here, or None when it can."""
    if postgres_bindir() is None:
        return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401  (SQLAlchemy 2.1's driver for postgresql:// URIs)
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(POSTGRES_USER)
        except KeyError:
            return f"running as root and there is no '{POSTGRES_USER}' user to run PostgreSQL"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_postgres_user() -> dict:
    """subprocess arguments that drop root to the PostgreSQL service user (none otherwise)."""
    if os.geteuid() != 0:
        return {}
    return {"user": POSTGRES_USER, "group": POSTGRES_USER, "extra_groups": []}


def _run(command: list, **kwargs) -> None:
    completed = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kwargs
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, command))} failed ({completed.returncode}):\n"
            f"{completed.stdout}{completed.stderr}"
        )


def write_password_file(path: Path, port: int, password: str) -> Path:
    """A libpq password file (https://www.postgresql.org/docs/current/libpq-pgpass.html);
    libpq ignores it unless only its owner can read it."""
    path.touch(mode=0o600)
    path.write_text(f"127.0.0.1:{port}:{DATABASE}:{ROLE}:{password}\n")
    return path


@contextlib.contextmanager
def postgres(password_file: Path) -> Iterator[str]:
    """A fresh PostgreSQL cluster on 127.0.0.1 (password authentication) with database
    `mlflow` owned by role `xlt`; yields its URI, which holds no password: the password is
    written to `password_file` for libpq. Stopped and deleted on exit."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError(postgres_unavailable())
    as_postgres = _as_postgres_user()
    # Not under the caller's directory: as root, pytest's 0700 tmp dirs would shut out the
    # PostgreSQL user.
    home = Path(tempfile.mkdtemp(prefix="xlt-postgres-"))
    try:
        if as_postgres:
            shutil.chown(home, POSTGRES_USER, POSTGRES_USER)
        password = secrets.token_hex(16)
        initdb_password = home / "initdb-password"
        initdb_password.write_text(password)
        if as_postgres:
            shutil.chown(initdb_password, POSTGRES_USER, POSTGRES_USER)
        data, port = home / "data", free_port()
        _run(
            [bindir / "initdb", "-D", data, "-U", ROLE, "--pwfile", initdb_password]
            + ["--auth=scram-sha-256", "--no-locale", "-E", "UTF8"],
            **as_postgres,
        )
        initdb_password.unlink()
        server_options = f"-c listen_addresses=127.0.0.1 -p {port} -k {home}"
        _run(
            [bindir / "pg_ctl", "-D", data, "-l", home / "server.log", "-w", "-t", "60"]
            + ["-o", server_options, "start"],
            **as_postgres,
        )
        try:
            write_password_file(password_file, port, password)
            # createdb connects to the maintenance database, which the password file leaves
            # out; -w: fail rather than prompt.
            createdb = [bindir / "createdb", "-w", "-h", "127.0.0.1", "-p", str(port), "-U", ROLE]
            _run(createdb + [DATABASE], env={**os.environ, "PGPASSWORD": password})
            yield f"postgresql://{ROLE}@127.0.0.1:{port}/{DATABASE}"
        finally:
            _run([bindir / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop"], **as_postgres)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def mlflow_server(
    backend_uri: str,
    workdir: Path,
    env: dict | None = None,
    workers: int = SERVER_WORKERS,
    options: tuple[str, ...] = (),
) -> Iterator[str]:
    """`mlflow server` on 127.0.0.1 over `backend_uri`, artifacts under `workdir`, with more
    `options` (`--app-name basic-auth`); yields its URL once /health answers. Its output goes
    to workdir/mlflow-server.log."""
    port = free_port()
    command = [sys.executable, "-m", "mlflow", "server", *options, "--host", "127.0.0.1"]
    command += ["--port", str(port), "--workers", str(workers)]
    command += ["--backend-store-uri", backend_uri]
    command += ["--artifacts-destination", str(workdir / "artifacts")]
    log_path = workdir / "mlflow-server.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        # Its own session, so that stopping it reaches the workers it forks.
        server = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **JOBS_OFF, **(env or {})},
            start_new_session=True,
        )
    try:
        _wait_until_healthy(url, server, log_path)
        yield url
    finally:
        _stop(server)


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _wait_until_healthy(url: str, server: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"mlflow server exited ({server.returncode}):\n{_tail(log_path)}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{url}/health", timeout=2).ok:
                return
        time.sleep(0.5)
    raise RuntimeError(f"mlflow server not healthy after {START_TIMEOUT_S} s:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def tracking_server(backend: str, workdir: Path, workers: int = SERVER_WORKERS) -> Iterator[str]:
    """An MLflow server on loopback backed by a fresh `backend` store (one of BACKENDS) under
    `workdir`; yields its URL."""
    if backend == "sqlite":
        with mlflow_server(f"sqlite:///{workdir / 'mlflow.db'}", workdir, workers=workers) as url:
            yield url
    elif backend == "postgresql":
        password_file = workdir / "pgpass"
        with postgres(password_file) as database_uri:
            environment = {"PGPASSFILE": str(password_file)}
            with mlflow_server(database_uri, workdir, environment, workers) as url:
                yield url
    else:
        raise ValueError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
