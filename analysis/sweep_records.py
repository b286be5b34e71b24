"""The read step of a report and of a comparison (reading layer: ``analysis.READING_LAYER``):
everything they take from the tracking server about one sweep, read before anything is
computed, into the plain records of :mod:`analysis.sweep_data`. The compute modules
(:mod:`analysis.sweep_analysis` and its sections) read nothing themselves; the per-example
scores reach them as :class:`~analysis.example_scores.PerExampleScores`, whose files
:class:`~analysis.collect.ExampleScores` reads when a computation first asks for them. The
parent run is read once, into plain data (:class:`~analysis.sweep_parent.SweepParent`)."""

import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Run

from analysis.collect import (
    ExampleScores,
    collect_trials,
    confirmation_runs,
    connect,
    find_parent_run,
    finished_trial_runs,
    json_artifact,
    probing_distances,
    sweep_parent,
    trials_table,
)
from analysis.completeness import incomplete_note, is_complete
from analysis.frames import AnalysisError
from analysis.probing_stages import ProbingStages, stage_runs
from analysis.reproduction_presets import COMPARED_PRESETS
from analysis.sanity import LOSS_CURVE, TrainingRecords
from analysis.sweep_data import ComparedSweep, PilotSweep, SweepRecords
from analysis.sweep_parent import SweepParent
from xlt_schema import (
    CONFIG_LABEL_TAG,
    DEPARTURES_ARTIFACT,
    DIVERGED_FAILURE,
    FAILURE_TAG,
    PAPER_TAG,
    PARENT_ROLE,
    PARENT_RUN_TAG,
    PHASE_TAG,
    REPORT_PHASE_TAG,
    ROLE_TAG,
    TRIAL_ROLE,
)


def read_sweep(
    client: MlflowClient, experiment: str, parent_run_id: str | None = None
) -> SweepRecords:
    """The sweep of ``parent_run_id`` (without it: the newest parent run with finished
    trials) in ``experiment``."""
    parent_run = find_parent_run(client, experiment, parent_run_id)
    parent = sweep_parent(parent_run)
    runs = finished_trial_runs(client, parent.run_id)
    trials = trials_table(runs)
    confirming = confirmation_runs(client, parent.run_id)
    # The search's artifact locations: no get_run per trial when its scores are read.
    artifact_uris = {run.info.run_id: run.info.artifact_uri for run in [*runs, *confirming]}
    return SweepRecords(
        experiment=experiment,
        parent=parent,
        trials=trials,
        confirmation=trials_table(confirming) if confirming else pd.DataFrame(),
        scores=ExampleScores(client, artifact_uris),
        departures=read_departures(client, parent_run),
        training=read_training_records(client, trials, parent),
        other_presets=other_preset_trials(client, parent),
    )


def read_departures(client: MlflowClient, parent: Run) -> dict | None:
    """The parent run's departures ({"paper", "citation", "departures": [...]}), or None
    when the sweep was no paper preset's."""
    if PAPER_TAG not in parent.data.tags:
        return None
    return json_artifact(client, parent.info.run_id, DEPARTURES_ARTIFACT)


def other_preset_trials(client: MlflowClient, parent: SweepParent) -> dict[str, pd.DataFrame]:
    """Per other preset of COMPARED_PRESETS than ``parent``'s, the trials of the newest
    complete sweep of its experiment run with it (none for a smoke sweep)."""
    preset = parent.params.get("preset")
    if preset not in COMPARED_PRESETS:
        return {}
    found = {}
    for other in (name for name in COMPARED_PRESETS if name != preset):
        newest = _newest_complete_with_trials(
            client, parent.experiment_id, f"params.preset = '{other}'"
        )
        if newest is not None:
            found[other] = newest[1]
    return found


def _newest_complete_with_trials(
    client: MlflowClient, experiment_id: str, condition: str = ""
) -> tuple[SweepParent, pd.DataFrame] | None:
    """The newest complete parent run in ``experiment_id`` (matching the filter
    ``condition``, if given) that has finished trials, with its trials; None if none has."""
    filter_string = f"tags.`{ROLE_TAG}` = '{PARENT_ROLE}'"
    if condition:
        filter_string += f" and {condition}"
    parents = client.search_runs(
        [experiment_id], filter_string, order_by=["attributes.start_time DESC"], max_results=50000
    )
    for candidate in filter(is_complete, map(sweep_parent, parents)):
        try:
            return candidate, collect_trials(client, candidate.run_id)
        except AnalysisError:  # no finished trial: look further back
            continue
    return None


def diverged_configs(client: MlflowClient, parent: SweepParent) -> dict[str, list[str]]:
    """config label -> the seeds of its trial runs (of the reported phase) that failed
    because their loss diverged."""
    filter_string = (
        f"tags.`{PARENT_RUN_TAG}` = '{parent.run_id}' and tags.`{ROLE_TAG}` = "
        f"'{TRIAL_ROLE}' and attributes.status = 'FAILED'"
    )
    phase = parent.tags.get(REPORT_PHASE_TAG)
    if phase:
        filter_string += f" and tags.`{PHASE_TAG}` = '{phase}'"
    runs = client.search_runs([parent.experiment_id], filter_string, max_results=50000)
    found: dict[str, list[str]] = {}
    for run in runs:
        if run.data.tags.get(FAILURE_TAG, "").startswith(DIVERGED_FAILURE):
            label = run.data.tags.get(CONFIG_LABEL_TAG, run.info.run_id)
            found.setdefault(label, []).append(run.data.params.get("seed", "?"))
    return {label: sorted(seeds) for label, seeds in sorted(found.items())}


def loss_curves(client: MlflowClient, trials: pd.DataFrame) -> dict[str, list[float]]:
    """Each trial's training loss per step, keyed ``"<config label> seed <seed>"``."""
    curves = {}
    for row in trials.itertuples(index=False):
        history = sorted(client.get_metric_history(row.run_id, LOSS_CURVE), key=lambda m: m.step)
        curves[f"{row.config_label} seed {row.seed}"] = [point.value for point in history]
    return curves


def read_training_records(
    client: MlflowClient, trials: pd.DataFrame, parent: SweepParent | None = None
) -> TrainingRecords:
    """The diverged trials of ``parent`` (none without it) and the trials' loss curves."""
    return TrainingRecords(
        diverged=diverged_configs(client, parent) if parent is not None else {},
        loss_curves=loss_curves(client, trials),
    )


def newest_complete_sweep(
    client: MlflowClient, experiment: str
) -> tuple[SweepParent, pd.DataFrame]:
    """The newest complete parent run of ``experiment`` with finished trials, and its trials
    (:func:`analysis.collect.collect_trials`)."""
    newest = sweep_parent(find_parent_run(client, experiment))
    if is_complete(newest):
        return newest, collect_trials(client, newest.run_id)
    found = _newest_complete_with_trials(client, newest.experiment_id)
    if found is not None:
        return found
    raise AnalysisError(
        f"experiment {experiment!r} has no complete sweep with finished trials; its newest, "
        f"parent run {newest.run_id}, is "
        f"{incomplete_note(newest, len(collect_trials(client, newest.run_id)))} "
        "(--include-incomplete compares it)"
    )


def read_compared_sweep(
    client: MlflowClient, experiment: str, include_incomplete: bool = False
) -> ComparedSweep:
    """The newest complete parent run of ``experiment`` with finished trials (with
    ``include_incomplete``: its newest with finished trials) and its trials."""
    if include_incomplete:
        parent = sweep_parent(find_parent_run(client, experiment))
        trials = collect_trials(client, parent.run_id)
    else:
        parent, trials = newest_complete_sweep(client, experiment)
    note = incomplete_note(parent, len(trials))
    name = f"{experiment} ({note.split(' (')[0]})" if note else experiment
    return ComparedSweep(name, parent.params, trials, ExampleScores(client))


def read_probing_stages(client: MlflowClient, trials: pd.DataFrame) -> ProbingStages | None:
    """The probing distances of each model state of an adjustment sweep whose trials logged
    them (:func:`analysis.probing_stages.stage_runs` picks the runs); None for any other
    sweep, or when fewer than two states have distances."""
    if set(trials["adaptation"]) <= {"none"}:
        return None
    try:
        seed, runs = stage_runs(trials)
    except ValueError:
        return None
    distances = {
        state: found
        for state, run_id in runs.items()
        if (found := probing_distances(client, run_id, state)) is not None
    }
    return ProbingStages(seed, distances) if len(distances) >= 2 else None


def read_pilot_sweep(tracking_uri: str, experiment: str) -> PilotSweep:
    """The newest parent run of ``experiment`` with finished trials, and its trials."""
    client = connect(tracking_uri)
    parent = sweep_parent(find_parent_run(client, experiment))
    return PilotSweep(
        experiment, parent, collect_trials(client, parent.run_id), ExampleScores(client)
    )
