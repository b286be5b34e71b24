"""The tracking store as every layer opens it: a SQLite file checked whole before anything
reads or writes it (as SQLite's, then as MLflow's: its schema version and tables), and a
server's credentials kept out of every URI the project prints, logs, hands to Ray Tune or
writes into a report.

Standard library only, like the rest of `xlt_schema` (the sweep driver, the Ray workers and
`analysis` import it), but for `mlflow_schema`, which asks the installed MLflow what its
store holds: MLflow is imported there, by the driver and the report that open a store.
"""

from __future__ import annotations

import configparser
import contextlib
import functools
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

# MLflow's own variables for a tracking server's HTTP basic authentication: its REST client
# reads them at each request, so a URI without `user:password@` still authenticates.
USERNAME_ENV = "MLFLOW_TRACKING_USERNAME"
PASSWORD_ENV = "MLFLOW_TRACKING_PASSWORD"
TOKEN_ENV = "MLFLOW_TRACKING_TOKEN"
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"
CREDENTIAL_ENVS = (USERNAME_ENV, PASSWORD_ENV, TOKEN_ENV)
# The `user:password@` of any URI in a text: after a scheme's `//`, up to its last `@`
# before a `/`, a space or a quote (a password may hold an `@`).
_USERINFO = re.compile(r"(?<=://)[^/\s'\"]+@")
REDACTED = "***@"
# A query parameter whose name holds one of these words (any case) is a credential:
# `?password=` (libpq, JDBC), `sslpassword`, `?token=` / `access_token`, `client_secret`,
# `api_key`, `X-Amz-Signature` / `X-Amz-Credential` (S3's presigned URLs), `sig` (Azure's
# SAS), `auth`. Its value runs to the next `&`, `;`, `#`, space or quote.
SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "sig", "credential", "auth")
_SECRET_QUERY = re.compile(
    rf"(?i)(?<=[?&;])([\w.~-]*(?:{'|'.join(SECRET_WORDS)})[\w.~-]*=)[^&;#\s'\"]*"
)


def redact(text: str) -> str:
    """`text` with the credentials of every URI in it replaced: its `user:password@`
    (`http://***@host:5000`) and its secret query values (`?password=***`)."""
    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub(REDACTED, text))


def strip_credentials(uri: str) -> str:
    """`uri` without its `user:password@` (an address a browser asks the password for)."""
    parts = urlsplit(uri)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))


def take_credentials(uri: str) -> str:
    """`uri` without its `user:password@`, which move to MLflow's USERNAME_ENV and
    PASSWORD_ENV in this process (and so in the Ray workers it starts, and the trials:
    `credentials_env`). $MLFLOW_TRACKING_URI, if it is this URI, loses them too. Any other
    URI (no credentials; a database's, whose driver needs them in it) is returned as it is."""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return uri
    username, _, password = parts.netloc.rsplit("@", 1)[0].partition(":")
    os.environ[USERNAME_ENV] = unquote(username)
    os.environ[PASSWORD_ENV] = unquote(password)
    bare = strip_credentials(uri)
    if os.environ.get(TRACKING_URI_ENV) == uri:
        os.environ[TRACKING_URI_ENV] = bare
    return bare


def credentials_env() -> dict[str, str]:
    """The tracking credentials this process holds (MLflow's variables that are set), to
    hand to trials on other nodes without writing them anywhere."""
    return {name: os.environ[name] for name in CREDENTIAL_ENVS if name in os.environ}


def basic_auth() -> tuple[str, str] | None:
    """(user, password) for a request of our own to the tracking server, as MLflow sends them:
    each from its environment variable, else from ~/.mlflow/credentials (MLflow's
    `read_mlflow_creds`; a cluster's nodes log with that file, ray_cluster.yaml)."""
    stored = configparser.ConfigParser()
    stored.read(os.path.expanduser("~/.mlflow/credentials"))
    user, password = (
        os.environ.get(name) or stored.get("mlflow", name.lower(), fallback=None)
        for name in (USERNAME_ENV, PASSWORD_ENV)
    )
    return (user, password) if user and password else None


@dataclass(frozen=True)
class StoreSchema:
    """What the installed MLflow needs of a SQLite store: its version, its schema's newest
    migration (the store's `alembic_version`), every migration it knows and its tables."""

    mlflow_version: str
    head: str
    revisions: frozenset[str]
    tables: frozenset[str]


@functools.cache
def mlflow_schema() -> StoreSchema:
    """The installed MLflow's store schema, read from its migrations (Alembic's script
    folder) and its tables' models, as MLflow checks a store it opens."""
    import mlflow
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401 (its tables' models)
    from alembic.script import ScriptDirectory
    from mlflow.store.db.base_sql_model import Base

    migrations = ScriptDirectory(str(Path(mlflow.__file__).parent / "store" / "db_migrations"))
    (head,) = migrations.get_heads()
    revisions = frozenset(script.revision for script in migrations.walk_revisions())
    return StoreSchema(mlflow.__version__, head, revisions, frozenset(Base.metadata.tables))


def sqlite_problem(path: str | Path) -> str | None:
    """What is wrong with the existing file `path` as an MLflow SQLite store, in a few words
    after its name and what to do, or None: not a SQLite database, damaged (`PRAGMA
    quick_check` reads every page and record once), without MLflow's tables, or of another
    MLflow's schema (`schema_problem`). A store another writer holds locked is not damaged:
    None."""
    address = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(address, uri=True, timeout=30)) as connection:
            # Damaged text need not be UTF-8.
            connection.text_factory = lambda data: data.decode("utf-8", "replace")
            problems = [row[0] for row in connection.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                first = " ".join(problems[0].split())
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                return f"is damaged: PRAGMA quick_check reports {first}{more}"
            connection.execute("select count(*) from experiments").fetchone()
            return schema_problem(connection, path)
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            return None
        return f"is not an MLflow store ({error})"
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            return f"is not a SQLite database ({error})"
        return f"is damaged ({error})"  # "database disk image is malformed"


def schema_problem(connection: sqlite3.Connection, path: str | Path) -> str | None:
    """What keeps the installed MLflow from using the store on `connection` (`path`): a schema
    version it does not know (a newer MLflow's) or an older one, or a table missing (its
    schema version MLflow's own); None when it is MLflow's as this MLflow makes it."""
    schema = mlflow_schema()
    row = connection.execute("select version_num from alembic_version").fetchone()
    version = row[0] if row else None
    tables = {row[0] for row in connection.execute("select name from sqlite_master")}
    this = f"this install's MLflow {schema.mlflow_version}"
    if version not in schema.revisions:
        return (
            f"has a schema {this} does not know (version {version}, from a newer MLflow): open "
            "it with the MLflow that wrote it, or give another store"
        )
    if version != schema.head:
        return (
            f"has the schema of an older MLflow (version {version}; {this} needs "
            f"{schema.head}): back it up, then upgrade it: mlflow db upgrade "
            f"sqlite:///{Path(path).resolve()}"
        )
    missing = sorted(schema.tables - tables)
    if missing:
        which = f"tables {', '.join(missing)} are" if len(missing) > 1 else f"table {missing[0]} is"
        return (
            f"is not a whole MLflow store: {which} missing, though its schema version is "
            f"{this}'s: restore it from a backup, or give another store"
        )
    return None


def sqlite_write_problem(path: str | Path) -> str | None:
    """Why this user cannot write the existing SQLite file `path` (a read-only file, folder or
    file system), in SQLite's words, or None: a write that is rolled back is refused at once.
    A store another writer holds locked can be written once it lets go: None."""
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as connection:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("CREATE TABLE xlt_write_check (x)")
            connection.rollback()
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            return None
        return str(error)
    return None
