"""The read step of a report: everything it takes from the tracking server about one sweep,
read before anything is computed (:mod:`analysis.sweep_analysis` reads nothing itself but
the per-example scores, through :class:`~analysis.collect.ExampleScores`)."""

from dataclasses import dataclass

import pandas as pd
from mlflow import MlflowClient
from mlflow.entities import Run

from analysis.collect import ExampleScores, collect_trials, find_parent_run
from analysis.departures import read_departures
from analysis.sanity import TrainingRecords, read_training_records


@dataclass(frozen=True)
class SweepRecords:
    """One sweep as its report reads it."""

    experiment: str
    parent: Run
    trials: pd.DataFrame  # analysis.collect.collect_trials: one row per finished trial
    scores: ExampleScores  # the trials' per-example artifacts, downloaded when first asked
    departures: dict | None  # a paper preset's departures, as logged (analysis/departures.py)
    training: TrainingRecords  # diverged trials and loss curves (analysis/sanity.py)


def read_sweep(
    client: MlflowClient, experiment: str, parent_run_id: str | None = None
) -> SweepRecords:
    """The sweep of ``parent_run_id`` (without it: the newest parent run with finished
    trials) in ``experiment``."""
    parent = find_parent_run(client, experiment, parent_run_id)
    trials = collect_trials(client, parent.info.run_id)
    return SweepRecords(
        experiment=experiment,
        parent=parent,
        trials=trials,
        scores=ExampleScores(client),
        departures=read_departures(client, parent),
        training=read_training_records(client, trials, parent),
    )
