"""A sweep's parent run as the analysis reads it: plain data, read once from the tracking
server by the reading layer (:func:`analysis.collect.sweep_parent`), so that the modules
that compute on it need neither MLflow nor its entities."""

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SweepParent:
    """The fields of a sweep's parent run that the analysis uses."""

    run_id: str
    experiment_id: str
    status: str  # MLflow's run status: RUNNING, FINISHED, FAILED or KILLED
    end_time: int | None  # milliseconds since the epoch; None while the run is open
    params: Mapping[str, str]
    tags: Mapping[str, str]
