"""Tune's saved state of a phase, verified before `Tuner.restore` continues from it.

Tune writes its experiment state in place (`open(..., "w")` + `json.dump`), so a full disk
or a killed driver can leave a file cut short (a full disk: at exactly 4,096 bytes), and a
restore from it once ran a trial with an empty configuration. Here every state file must
load, every saved trial's space must be a whole `TrialRequest`, and a grid phase must hold
all its trials; otherwise the sweep is refused in one line (DataError) before any trial.

Tune writes the state in the driver's staging folder under Ray's temporary directory first,
then copies it to the storage path in a thread: a driver killed during that copy leaves the
stored file empty or cut short beside a whole staging copy (met on CI, 2026-12-03). When that
copy is still on this machine the stored file is replaced by it (`check_state_files`).

A killed driver can also leave a state that names a checkpoint Tune has already deleted
(`recover_deleted_checkpoints`): the trial then continues from the newer one that replaced it.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
from pathlib import Path

from sweeps.safety.storage_checks import DISK_FULL_TEXTS
from sweeps.spec.trial_contract import TrialRequest
from xlt_core.errors import DataError

logger = logging.getLogger(__name__)
CHECKPOINT_PREFIX = "checkpoint_"  # Tune's checkpoint_000003: zero-padded, so names sort
ERROR_PICKLE = "error.pkl"  # a failed trial's error as Tune pickles it, in the trial's folder


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


def recover_deleted_checkpoints(path: str, trials) -> None:
    """Let each unfinished trial whose saved state names a deleted checkpoint continue from
    the one that replaced it.

    With `CheckpointConfig(num_to_keep=1)` Tune deletes a trial's checkpoint as soon as it
    registers the next one, and only then saves its experiment state (and uploads it in the
    background). A driver killed in between leaves a state naming `checkpoint_k`, which is
    gone, beside `checkpoint_k+1`: `Tuner.restore` then fails that trial on every attempt
    ("does not exist on storage anymore"). Tune deleted k only because k+1 was complete (a
    trial reports a checkpoint after writing it), so k+1 is renamed k and the trial continues
    from it; Tune's own iteration count for that trial then runs one evaluation behind its
    model (ASHA's rungs read it; the trial's MLflow steps are the model's own). A newer
    folder still (written by the trial after the driver died) was never registered, and Tune
    writes over it. `path`: the phase's experiment; on remote storage (a URI) the
    checkpoints are left to Tune (a trial's `path` there is a bucket path, without a scheme)."""
    if "://" in path:
        return
    for trial in trials:
        checkpoint = trial.checkpoint
        if trial.status == "TERMINATED" or checkpoint is None:
            continue
        named = Path(trial.path, Path(checkpoint.path).name)
        if named.exists():
            continue
        newer = sorted(
            folder
            for folder in named.parent.glob(f"{CHECKPOINT_PREFIX}*")
            if folder.is_dir() and folder.name > named.name
        )
        if not newer:
            continue  # nothing to continue from: Tune's own error says which checkpoint is gone
        newer[0].rename(named)
        logger.warning(
            f"Trial {trial.trial_id}: its saved state names {named.name}, which Tune deleted "
            f"when {newer[0].name} replaced it, just before the driver stopped; continuing "
            f"from {newer[0].name}"
        )


def check_state_files(folder: Path) -> None:
    """Every state file Tune keeps at the top of an experiment folder loads: the experiment
    state (JSON), the grid's and the searcher's states (pickles, the grid's named .json).
    One that does not is replaced by the driver's whole staging copy when this machine still
    has it (`staging_copy`), else refused. `tuner.pkl` is left to `Tuner.restore`: it holds
    Ray object references."""
    for path in sorted(folder.glob("*state-*")):
        error = load_error(path)
        if error is None:
            continue
        copy = staging_copy(folder.name, path.name)
        if copy is None:
            raise unrestorable(str(folder), f"{path.name} does not load ({error})")
        replacement = path.with_name(f".{path.name}.restoring")
        replacement.write_bytes(copy.read_bytes())
        os.replace(replacement, path)
        logger.warning(
            f"{path} does not load ({error}), as a driver stopped while Tune copied it "
            f"leaves it; continuing from Tune's whole copy in the driver's staging folder, {copy}"
        )


def load_error(path: Path) -> str | None:
    """Why the state file at `path` does not load ("JSONDecodeError: ..."), or None."""
    try:
        if path.name.startswith("experiment_state-"):
            json.loads(path.read_text())
        else:
            pickle.loads(path.read_bytes())
    except Exception as error:  # whatever a file cut short raises
        return f"{type(error).__name__}: {error}"
    return None


def staging_copy(experiment: str, name: str) -> Path | None:
    """The newest copy of state file `name` of experiment folder `experiment` that loads in
    the driver's staging folders on this machine (Ray's temporary directory: $RAY_TMPDIR,
    else $TMPDIR, else /tmp, then ray/session_*/artifacts/<start>/<experiment>/
    driver_artifacts), or None. Its name carries the Tune session's start time, so only the
    driver that wrote the damaged file has one."""
    from ray._common.utils import get_default_ray_temp_dir

    pattern = f"session_*/artifacts/*/{experiment}/driver_artifacts/{name}"
    copies = [path for path in Path(get_default_ray_temp_dir()).glob(pattern) if path.is_file()]
    whole = [path for path in copies if load_error(path) is None]
    return max(whole, key=lambda path: path.stat().st_mtime, default=None)


def unrestorable(path: str, why: str) -> DataError:
    return DataError(
        f"the sweep's saved Tune state at {path} cannot be restored: {why}; it cannot be "
        "continued: start the sweep again without --resume"
    )


def errored_by_full_disk(trial) -> bool:
    """Whether a trial Tune saved as ERROR failed because the disk was full: its error
    files under the storage path say so, or were cut short (`error_files_say_disk_full`; a
    remote storage path's are not read)."""
    name = trial.run_metadata.error_filename
    if not name or "://" in str(trial.path):
        return False
    pickled = trial.run_metadata.pickled_error_filename
    return error_files_say_disk_full(
        Path(trial.path, name), Path(trial.path, pickled) if pickled else None
    )


def error_files_say_disk_full(text_file: Path, pickle_file: Path | None) -> bool:
    """Whether a failed trial's error files (Tune's `error.txt`, and `error.pkl` when it
    wrote one) hold a full disk's error, or were cut short: Tune writes both as the trial
    fails, so an empty `error.txt` or an `error.pkl` that does not load means the disk was
    full at that moment (met on a filesystem filled mid-sweep: both files empty)."""
    try:
        text = text_file.read_text()
    except OSError:
        return False
    if any(marker in text for marker in DISK_FULL_TEXTS) or not text.strip():
        return True
    return pickle_file is not None and pickle_file.exists() and load_error(pickle_file) is not None


def drop_damaged_error_pickles(path: str) -> int:
    """Delete each trial's `error.pkl` in the experiment at `path` that does not load (a full
    disk cut it short): Tune unpickles it whenever it builds the phase's results, so one such
    file failed the sweep there on every `--resume` (EOFError, UnpicklingError); without it
    Tune reads the trial's `error.txt`. Remote storage paths are left to Tune. Returns how
    many were deleted."""
    if "://" in path:
        return 0
    return sum(drop_if_damaged(file) for file in Path(path).glob(f"*/{ERROR_PICKLE}"))


def drop_if_damaged(pickle_file: Path) -> bool:
    """Delete the error pickle at `pickle_file` when it exists and does not load."""
    if not pickle_file.is_file() or load_error(pickle_file) is None:
        return False
    pickle_file.unlink()
    logger.warning(f"{pickle_file} was cut short by a full disk: removed")
    return True
