"""The plain records of a sweep that the compute modules take, as the reading layer
(:mod:`analysis.sweep_records`) fills them: :class:`SweepRecords` for a report,
:class:`ComparedSweep` for a comparison, :class:`PilotSweep` for sizing another sweep's
seeds. Frames, plain data and the per-example scores; no MLflow."""

from dataclasses import dataclass

import pandas as pd

from analysis.example_scores import PerExampleScores
from analysis.sanity import TrainingRecords
from analysis.sweep_parent import SweepParent


@dataclass(frozen=True)
class SweepRecords:
    """One sweep as its report reads it."""

    experiment: str
    parent: SweepParent
    trials: pd.DataFrame  # analysis.collect.collect_trials: one row per finished trial
    # The confirmation phase's finished trials (the same columns; empty without one): the
    # selected configuration and the baseline on fresh seeds, where the verdict is decided.
    confirmation: pd.DataFrame
    scores: PerExampleScores  # the trials' per-example artifacts, read when first asked
    departures: dict | None  # a paper preset's departures, as logged (analysis/departures.py)
    training: TrainingRecords  # diverged trials and loss curves (analysis/sanity.py)
    # The trials of the newest complete sweep of this experiment under each other preset that
    # reproduces a paper (paper / released), for the report's reproduction by preset.
    other_presets: dict[str, pd.DataFrame]


@dataclass(frozen=True)
class ComparedSweep:
    """One sweep as a comparison (:mod:`analysis.compare`) reads it."""

    name: str  # the experiment, with the parent's state when the sweep is incomplete
    params: dict  # the parent run's params
    trials: pd.DataFrame  # analysis.collect.collect_trials: one row per finished trial
    scores: PerExampleScores  # the trials' per-example artifacts, read when first asked


@dataclass(frozen=True)
class PilotSweep:
    """A finished sweep whose runs size another's seeds (:func:`analysis.power.pilot_lines`)."""

    experiment: str
    parent: SweepParent
    trials: pd.DataFrame  # analysis.collect.collect_trials: one row per finished trial
    scores: PerExampleScores  # the trials' per-example artifacts, read when first asked
