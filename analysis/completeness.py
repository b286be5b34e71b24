"""Whether a sweep ran to its end. A report of a sweep still running or interrupted is read
only (nothing goes to its parent run or the model registry) and says so; a comparison
leaves such sweeps out unless asked (``--include-incomplete``)."""

from analysis.sweep_parent import SweepParent
from xlt_schema import COMPLETE_TAG, INTERRUPTED, RUN_STATUS_TAG

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
