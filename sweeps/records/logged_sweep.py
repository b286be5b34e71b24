"""The sweep file a parent run logged (`--from-run PARENT_RUN_ID`), read from the tracking
store as text; sweeps/planning/sweep_file.py loads it."""

from __future__ import annotations

from pathlib import Path

from xlt_core.errors import ConfigError
from xlt_schema import SWEEP_FILE_ARTIFACT


def logged_sweep_text(tracking_uri: str, parent_run_id: str) -> str:
    """The sweep file parent run `parent_run_id` logged; ConfigError naming `--from-run` when
    there is no such run or it logged none."""
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    client = MlflowClient(tracking_uri)
    try:
        client.get_run(parent_run_id)
    except MlflowException:
        raise ConfigError("--from-run", parent_run_id, "the id of a sweep's parent run") from None
    try:
        local = client.download_artifacts(parent_run_id, SWEEP_FILE_ARTIFACT)
    except (MlflowException, OSError):
        raise ConfigError(
            "--from-run",
            parent_run_id,
            f"a parent run that logged {SWEEP_FILE_ARTIFACT} (sweeps from version 0.2.0 on)",
        ) from None
    return Path(local).read_text(encoding="utf-8")
