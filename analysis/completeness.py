"""Whether a sweep ran to its end. A report of a sweep still running or interrupted is read
only (nothing goes to its parent run or the model registry) and says so; a comparison
leaves such sweeps out unless asked (``--include-incomplete``)."""

import pandas as pd
from mlflow import MlflowClient

from analysis.collect import AnalysisError, collect_trials, find_parent_run, sweep_parent
from analysis.sweep_parent import SweepParent
from xlt_schema import COMPLETE_TAG, INTERRUPTED, PARENT_ROLE, ROLE_TAG, RUN_STATUS_TAG

PLANNED_PARAM = "n_trials"  # the parent's param of a grid sweep: configurations x seeds


def is_complete(parent: SweepParent) -> bool:
    """Every trial of the sweep ended: tag ``xlt.complete=true``, or a FINISHED parent
    without it (a sweep older than the tag); never a parent tagged interrupted."""
    tags = parent.tags
    if tags.get(RUN_STATUS_TAG) == INTERRUPTED:
        return False
    return tags.get(COMPLETE_TAG) == "true" or parent.status == "FINISHED"


def incomplete_note(parent: SweepParent, finished: int) -> str:
    """``incomplete: N of M trials`` (M: the trials planned, where the parent records them)
    and the parent's state; "" for a complete sweep."""
    if is_complete(parent):
        return ""
    planned = parent.params.get(PLANNED_PARAM)
    of = f" of {planned}" if planned else " (the number planned is not recorded)"
    state = (
        "interrupted" if parent.tags.get(RUN_STATUS_TAG) == INTERRUPTED else parent.status.lower()
    )
    return f"incomplete: {finished}{of} trials finished (parent run {state})"


def newest_complete_sweep(
    client: MlflowClient, experiment: str
) -> tuple[SweepParent, pd.DataFrame]:
    """The newest complete parent run of ``experiment`` with finished trials, and its trials
    (:func:`analysis.collect.collect_trials`)."""
    newest = sweep_parent(find_parent_run(client, experiment))
    if is_complete(newest):
        return newest, collect_trials(client, newest.run_id)
    parents = client.search_runs(
        [newest.experiment_id],
        f"tags.`{ROLE_TAG}` = '{PARENT_ROLE}'",
        order_by=["attributes.start_time DESC"],
        max_results=50000,
    )
    for parent in filter(is_complete, map(sweep_parent, parents)):
        try:
            return parent, collect_trials(client, parent.run_id)
        except AnalysisError:  # no finished trial: as find_parent_run, look further back
            continue
    raise AnalysisError(
        f"experiment {experiment!r} has no complete sweep with finished trials; its newest, "
        f"parent run {newest.run_id}, is "
        f"{incomplete_note(newest, len(collect_trials(client, newest.run_id)))} "
        "(--include-incomplete compares it)"
    )
