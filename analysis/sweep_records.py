"""The read step of a report: everything it takes from the tracking server about one sweep,
read before anything is computed (:mod:`analysis.sweep_analysis` reads nothing itself but
the per-example scores, through :class:`~analysis.collect.ExampleScores`)."""

from dataclasses import dataclass

import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Run

from analysis.collect import ExampleScores, find_parent_run, finished_trial_runs, trials_table
from analysis.departures import read_departures
from analysis.sanity import TrainingRecords, read_training_records


@dataclass(frozen=True)
class SweepRecords:
    """One sweep as its report reads it."""

    experiment: str
    parent: Run
    trials: pd.DataFrame  # analysis.collect.collect_trials: one row per finished trial
    scores: ExampleScores  # the trials' per-example artifacts, read when first asked
    departures: dict | None  # a paper preset's departures, as logged (analysis/departures.py)
    training: TrainingRecords  # diverged trials and loss curves (analysis/sanity.py)


def read_sweep(
    client: MlflowClient, experiment: str, parent_run_id: str | None = None
) -> SweepRecords:
    """The sweep of ``parent_run_id`` (without it: the newest parent run with finished
    trials) in ``experiment``."""
    parent = find_parent_run(client, experiment, parent_run_id)
    runs = finished_trial_runs(client, parent.info.run_id)
    trials = trials_table(runs)
    # The search's artifact locations: no get_run per trial when its scores are read.
    artifact_uris = {run.info.run_id: run.info.artifact_uri for run in runs}
    return SweepRecords(
        experiment=experiment,
        parent=parent,
        trials=trials,
        scores=ExampleScores(client, artifact_uris),
        departures=read_departures(client, parent),
        training=read_training_records(client, trials, parent),
    )
