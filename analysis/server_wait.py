"""A tracking server that does not answer, said at once and waited for a bounded time.

MLflow's own client retries a refused connection for about four minutes (7 retries, backoff
factor 2) without a word; `python -m analysis` against a dead server sat silent for 252 s.
Before any MLflow call, a server's `GET /health` is tried: when it fails, one line says
which server (no password) is waited for and for how long at most, and after that wait the
command is refused in one line.
"""

from __future__ import annotations

import logging
import time

import requests

from analysis.frames import AnalysisError
from xlt_schema.tracking_store import basic_auth, redact

logger = logging.getLogger(__name__)

DEFAULT_WAIT_S = 60.0
RETRY_EVERY_S = 2.0


def wait_for_server(tracking_uri: str, wait_s: float = DEFAULT_WAIT_S) -> None:
    """Return once the tracking server answers `GET /health` (at once for a SQLite store);
    AnalysisError when it has not within `wait_s` seconds."""
    if not tracking_uri.startswith(("http://", "https://")):
        return
    health, shown = tracking_uri.rstrip("/") + "/health", redact(tracking_uri)
    deadline = time.monotonic() + wait_s
    problem = _health_problem(health, wait_s)
    if problem is None:
        return
    logger.warning(
        "Waiting for the tracking server %s (%s): at most %g s (--server-wait)",
        shown,
        problem,
        wait_s,
    )
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(RETRY_EVERY_S, left))
        problem = _health_problem(health, max(deadline - time.monotonic(), 0.1))
        if problem is None:
            return
    raise AnalysisError(
        f"the tracking server {shown} did not answer within {wait_s:g} s (GET /health: "
        f"{problem}); start it, or wait longer with --server-wait SECONDS"
    )


def _health_problem(health: str, timeout_s: float) -> str | None:
    """None when the server answers; else what went wrong, in a few words."""
    try:
        requests.get(health, timeout=min(timeout_s, 10.0), auth=basic_auth()).raise_for_status()
    except requests.exceptions.RequestException as error:
        response = getattr(error, "response", None)
        return f"HTTP {response.status_code}" if response is not None else type(error).__name__
    return None
