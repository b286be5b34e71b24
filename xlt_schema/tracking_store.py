"""The tracking store as every layer opens it: a SQLite file checked whole before anything
reads or writes it, and a server's credentials kept out of every URI the project prints,
logs, hands to Ray Tune or writes into a report.

Standard library only, like the rest of `xlt_schema`: the sweep driver, the Ray workers and
`analysis` import it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
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


def redact(text: str) -> str:
    """`text` with the credentials of every URI in it replaced: `http://***@host:5000`."""
    return _USERINFO.sub(REDACTED, text)


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
    """(user, password) for a request of our own to the tracking server, as MLflow sends them."""
    if os.environ.get(USERNAME_ENV) and os.environ.get(PASSWORD_ENV):
        return os.environ[USERNAME_ENV], os.environ[PASSWORD_ENV]
    return None


def sqlite_problem(path: str | Path) -> str | None:
    """What is wrong with the existing file `path` as an MLflow SQLite store, in a few words
    after its name, or None: not a SQLite database, damaged (`PRAGMA quick_check` reads
    every page and record once), or without MLflow's tables. A store
    another writer holds locked is not damaged: None."""
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
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            return None
        return f"is not an MLflow store ({error})"
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            return f"is not a SQLite database ({error})"
        return f"is damaged ({error})"  # "database disk image is malformed"
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
