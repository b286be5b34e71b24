"""`--resume` whose settings are not those of the unfinished sweep in the store: refused in
one line that names the settings that differ and how to continue that sweep as it was started
(`--from-run PARENT --resume`: its own sweep file). Run without `--resume`, the command would
start a new sweep beside the unfinished one, which is not what a resume asks for."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml

from sweeps.records import tracking
from sweeps.spec.experiment import setting_defaults
from xlt_core.errors import ConfigError
from xlt_schema import SWEEP_FILE_ARTIFACT
from xlt_schema.tracking_store import redact

# At most this many points named on each side of a changed grid.
POINTS_SHOWN = 3


def no_sweep_to_resume(client, experiment, spec_text: str, fields: tuple[str, ...], uri: str):
    """The ConfigError of a `--resume` that found no unfinished sweep of its settings in
    `experiment` (an MLflow Experiment, or None) at `uri`: naming the newest unfinished sweep
    there and the `fields` (the sweep key's) in which its sweep file differs from `spec_text`
    (this command's), when there is one."""
    name = experiment.name if experiment else None
    where = f"experiment {name} at {redact(uri)}"
    other = None
    if experiment is not None:
        other = tracking.find_resumable_parent(client, experiment.experiment_id, None)
    if other is None:
        return ConfigError(
            "--resume",
            True,
            f"an interrupted sweep with these settings in {where}; there is none (run "
            "without --resume to start it)",
        )
    run_id = other.info.run_id
    differences = setting_differences(_logged_text(client, run_id), spec_text, fields)
    return ConfigError(
        "--resume",
        True,
        f"an interrupted sweep with these settings in {where}; the unfinished sweep there, "
        f"parent run {run_id} (started {tracking.started_at(other)}), has other settings: "
        f"{differences}. Continue it as it was started: this command with --from-run {run_id} "
        "--resume in place of its sweep settings (--preset, --config, --set; without --resume "
        "a new sweep would start beside it)",
    )


def _logged_text(client, run_id: str) -> str | None:
    """The sweep file a parent run logged, or None (one that cannot be read)."""
    from mlflow.environment_variables import MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR
    from mlflow.exceptions import MlflowException

    # Not MLflow's progress bar: the refusal is one line.
    os.environ.setdefault(MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR.name, "false")
    with tempfile.TemporaryDirectory(prefix="xlt-sweep-file-") as scratch:
        try:
            path = client.download_artifacts(run_id, SWEEP_FILE_ARTIFACT, scratch)
            return Path(path).read_text(encoding="utf-8")
        except (MlflowException, OSError):
            return None


def setting_differences(logged: str | None, spec_text: str, fields: tuple[str, ...]) -> str:
    """`base.epochs=1.0 there, 2.0 here; seeds=...`: the values of `fields` (a mapping's by
    key) that differ between the sweep files `logged` (the unfinished sweep's) and
    `spec_text` (this command's)."""
    if logged is None:
        return f"its sweep file ({SWEEP_FILE_ARTIFACT}) cannot be read to say which"
    there = yaml.safe_load(logged) or {}
    here = yaml.safe_load(spec_text)
    # A setting newer than the logged file: that sweep ran with its default.
    defaults = setting_defaults()
    changes = []
    for field in fields:
        old, new = there.get(field, defaults.get(field)), here.get(field)
        if field == "points":
            changes += _points_change(old or [], new or [])
        elif isinstance(old, dict) and isinstance(new, dict):
            keys = sorted(set(old) | set(new), key=list({**old, **new}).index)
            changes += [
                _change(f"{field}.{key}", old.get(key), new.get(key))
                for key in keys
                if old.get(key) != new.get(key)
            ]
        elif old != new:
            changes.append(_change(field, old, new))
    return "; ".join(changes) or "none of its sweep file's (it was started by another version)"


def _change(name: str, old, new) -> str:
    return f"{name}={_shown(old)} there, {_shown(new)} here"


def _shown(value) -> str:
    return "(unset)" if value is None else str(value)


def _points_change(old: list, new: list) -> list[str]:
    """The configurations only one side runs, a few of each."""
    labels_old, labels_new = [_label(point) for point in old], [_label(point) for point in new]
    gone = [label for label in labels_old if label not in labels_new]
    added = [label for label in labels_new if label not in labels_old]
    if not gone and not added:
        return []

    def few(labels: list[str]) -> str:
        more = f" and {len(labels) - POINTS_SHOWN} more" if len(labels) > POINTS_SHOWN else ""
        return ", ".join(labels[:POINTS_SHOWN]) + more if labels else "none"

    return [f"points: only there {few(gone)}; only here {few(added)}"]


def _label(point) -> str:
    """`ear alpha=1.0 beta=0.1 layer=6` of a sweep file's point."""
    if not isinstance(point, dict):
        return str(point)
    rest = " ".join(f"{key}={value}" for key, value in point.items() if key != "method")
    return f"{point.get('method')} {rest}".strip()
