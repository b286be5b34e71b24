"""Tune's saved state of a phase, verified before `Tuner.restore` continues from it.

Tune writes its experiment state in place (`open(..., "w")` + `json.dump`), so a full disk
or a killed driver can leave a file cut short (a full disk: at exactly 4,096 bytes), and a
restore from it once ran a trial with an empty configuration. Here every state file must
load, every saved trial's space must be a whole `TrialRequest`, and a grid phase must hold
all its trials; otherwise the sweep is refused in one line (DataError) before any trial.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from sweeps.storage_checks import DISK_FULL_TEXTS
from sweeps.trial_request import TrialRequest
from xlt_core.errors import DataError


def check_saved_state(path: str, planned: int | None):
    """Tune's trials saved at `path` (its `ExperimentAnalysis`), or DataError when they
    cannot be restored. `planned`: how many trials the phase has, when it is fixed."""
    from ray.tune import ExperimentAnalysis

    if "://" not in path:
        check_state_files(Path(path))
    try:
        trials = ExperimentAnalysis(path).trials
        for trial in trials:
            TrialRequest.from_space(trial.config)
    except Exception as error:  # whatever a damaged file raises while it is read
        raise unrestorable(path, f"{type(error).__name__}: {error}") from None
    if planned is not None and len(trials) != planned:
        raise unrestorable(path, f"it holds {len(trials)} of the phase's {planned} trials")
    return trials


def check_state_files(folder: Path) -> None:
    """Every state file Tune keeps at the top of an experiment folder loads: the experiment
    state (JSON), the grid's and the searcher's states (pickles, the grid's named .json).
    `tuner.pkl` is left to `Tuner.restore`: it holds Ray object references."""
    for path in sorted(folder.glob("*state-*")):
        try:
            if path.name.startswith("experiment_state-"):
                json.loads(path.read_text())
            else:
                pickle.loads(path.read_bytes())
        except Exception as error:
            raise unrestorable(
                str(folder), f"{path.name} does not load ({type(error).__name__}: {error})"
            ) from None


def unrestorable(path: str, why: str) -> DataError:
    return DataError(
        f"the sweep's saved Tune state at {path} cannot be restored: {why}; it cannot be "
        "continued: start the sweep again without --resume"
    )


def errored_by_full_disk(trial) -> bool:
    """Whether a trial Tune saved as ERROR failed because the disk was full: its error
    file under the storage path says so (a remote storage path's is not read)."""
    name = trial.run_metadata.error_filename
    return error_file_says_disk_full(str(Path(trial.path, name)) if name else None)


def error_file_says_disk_full(path: str | None) -> bool:
    """Whether a trial's error file (Tune's `error.txt`) holds a full disk's error."""
    try:
        text = Path(path).read_text() if path else ""
    except OSError:
        return False
    return any(marker in text for marker in DISK_FULL_TEXTS)
