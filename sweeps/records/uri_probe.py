"""A tracking server or database probed for what its URI claims, before Ray starts, within
seconds each: an HTTP(S) URI must answer MLflow's `GET /version` with a version (a server that
answers 200 `{}` to everything is no MLflow: before, Ray started and the sweep ended in a
traceback); a database URI's driver must be installed, and its server must accept a TCP
connection within the timeout (before, MLflow's SQLAlchemy store retried a closed port for
about 2 minutes).

Plain sockets and `requests`: a stop signal's handler runs while either waits (PEP 475), so a
SIGTERM during the probe is honoured at once (MLflow's driver connection in C held it 45 s)."""

from __future__ import annotations

import re
import socket

import requests

from xlt_core.errors import ConfigError
from xlt_schema.tracking_store import basic_auth

# MLflow's database engines (its `DATABASE_ENGINES` but SQLite, a file) and their servers'
# default ports; a URI names one as `engine` or `engine+driver`.
DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}
# What `GET /version` of an MLflow server answers: its version, e.g. `3.17.2`, `3.0.0rc1`.
MLFLOW_VERSION = re.compile(r"\d+\.\d+(\.\d+)?[\w.+-]*")
# The most of an answer that is not a version a refusal quotes.
QUOTED_CHARS = 60
FLAG = "--tracking-uri"


def is_database_uri(uri: str) -> bool:
    return uri.partition("://")[0].split("+")[0] in DATABASE_PORTS and "://" in uri


def probe_server(uri: str, timeout_s: float) -> None:
    """Raise ConfigError unless `uri` answers `GET /version` with an MLflow version (with the
    credentials MLflow would send)."""
    try:
        answer = requests.get(uri.rstrip("/") + "/version", timeout=timeout_s, auth=basic_auth())
    except requests.exceptions.RequestException as error:
        raise ConfigError(
            FLAG,
            uri,
            f"an MLflow tracking server that answers (GET /version: {type(error).__name__})",
        ) from None
    text = answer.text.strip()
    if answer.status_code in (401, 403):
        raise ConfigError(
            FLAG,
            uri,
            f"an MLflow tracking server that lets this user in (GET /version: HTTP "
            f"{answer.status_code}): its user and password as user:password@ in the URI, or "
            "in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD",
        )
    if answer.status_code != 200 or not MLFLOW_VERSION.fullmatch(text):
        quoted = text[:QUOTED_CHARS] + ("..." if len(text) > QUOTED_CHARS else "")
        raise ConfigError(
            FLAG,
            uri,
            f"an MLflow tracking server (mlflow server), whose GET /version answers its "
            f"version; this one answered HTTP {answer.status_code} {quoted!r}: another server "
            "listens there",
        )


def probe_database(uri: str, timeout_s: float) -> None:
    """Raise ConfigError unless the driver of database `uri` is installed and its server
    (when the URI names a host) accepts a TCP connection within `timeout_s`."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        url = make_url(uri)
    except ArgumentError as error:
        raise ConfigError(FLAG, uri, f"a database URI SQLAlchemy reads ({error})") from None
    try:
        url.get_dialect().import_dbapi()
    except (NoSuchModuleError, ImportError) as error:
        raise ConfigError(
            FLAG,
            uri,
            f"a database URI whose Python driver is installed ({error}): install it, or name "
            f"an installed driver ({url.get_backend_name()}+DRIVER://...)",
        ) from None
    if not url.host:
        return  # a local socket: the driver's connection decides
    port = url.port or DATABASE_PORTS[url.get_backend_name()]
    try:
        socket.create_connection((url.host, port), timeout=timeout_s).close()
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or error
        raise ConfigError(
            FLAG,
            uri,
            f"a database server that accepts a connection: nothing accepted one at "
            f"{url.host}:{port} within {timeout_s:g} s ({reason})",
        ) from None


def check_scheme(uri: str) -> None:
    """Raise ConfigError unless MLflow has a tracking store for the scheme of `uri` (its own,
    such as Databricks', or a plugin's)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    try:
        _tracking_store_registry.get_store_builder(uri)
    except MlflowException:
        raise ConfigError(
            FLAG,
            uri,
            "sqlite:///path/to/mlflow.db, http(s)://host:port or a database "
            f"({', '.join(f'{engine}://' for engine in DATABASE_PORTS)}); "
            f"MLflow has no tracking store for {uri.partition('://')[0]}://",
        ) from None
