"""Sanity warnings: signs that a sweep learned nothing, said before any selection is named.

Two signs: every configuration (the baseline included) at chance level on the dev
selection metric, and a training loss that grew by orders of magnitude. A sweep with a
warning registers no champion unless asked (``--register-anyway``).
"""

import math
from collections.abc import Mapping, Sequence

import pandas as pd
from mlflow import MlflowClient

from analysis.collect import AnalysisError, ExampleScores, parse_metric_key

LOSS_CURVE = "train/loss"  # the mean training loss since the previous evaluation, per step
# |last| / |first| of a loss curve from which it counts as blown up (two orders of magnitude).
LOSS_GROWTH_FACTOR = 100.0
# Above chance means more than this many binomial standard errors above it (one-sided ~2.3%).
CHANCE_STANDARD_ERRORS = 2.0


def chance_level(labels: Sequence) -> float:
    """What a model that learned nothing scores in accuracy on these gold labels: 1 / the
    number of labels, or the most frequent label's share when that is higher (a model
    that predicts one class)."""
    counts = pd.Series(list(labels)).value_counts()
    return max(1 / len(counts), counts.iloc[0] / counts.sum())


def at_chance(accuracy: float, chance: float, n_examples: int) -> bool:
    """Whether an accuracy on ``n_examples`` is not clearly above ``chance``: within
    ``CHANCE_STANDARD_ERRORS`` binomial standard errors of it."""
    margin = CHANCE_STANDARD_ERRORS * math.sqrt(chance * (1 - chance) / n_examples)
    return accuracy <= chance + margin


def chance_warning(config_means: Mapping[str, float], metric: str, labels: Sequence) -> str:
    """A warning when every configuration's mean ``metric`` (accuracy) is at chance; ""
    otherwise."""
    chance = chance_level(labels)
    if not config_means or not all(
        at_chance(mean, chance, len(labels)) for mean in config_means.values()
    ):
        return ""
    best = max(config_means.values())
    return (
        f"Every configuration, the baseline included, is at chance level on {metric}: the "
        f"best mean is {100 * best:.1f} % against chance {100 * chance:.1f} % "
        f"({pd.Series(list(labels)).nunique()} labels, {len(labels)} examples; within "
        f"{CHANCE_STANDARD_ERRORS:g} binomial standard errors of chance). The models learned "
        "nothing: check the learning rate, the training budget and the data before reading "
        "the selection."
    )


def loss_blowups(curves: Mapping[str, Sequence[float]]) -> list[tuple[str, float, float]]:
    """(name, first, last) of every loss curve whose last value is at least
    ``LOSS_GROWTH_FACTOR`` times its first in absolute value."""
    return [
        (name, values[0], values[-1])
        for name, values in curves.items()
        if len(values) >= 2 and abs(values[-1]) >= LOSS_GROWTH_FACTOR * max(abs(values[0]), 1e-12)
    ]


def loss_warning(curves: Mapping[str, Sequence[float]]) -> str:
    """A warning naming the runs whose training loss grew by orders of magnitude; ""
    when none did."""
    blown = loss_blowups(curves)
    if not blown:
        return ""
    listed = "; ".join(f"{name}: {first:.3g} -> {last:.3g}" for name, first, last in blown)
    return (
        f"The training loss grew by orders of magnitude (|last| >= {LOSS_GROWTH_FACTOR:g} x "
        f"|first| of {LOSS_CURVE}) in {len(blown)} of {len(curves)} runs: {listed}. "
        "Training diverged there; its numbers are not to be trusted."
    )


def _config_means(trials: pd.DataFrame, metric: str) -> dict[str, float]:
    return trials.groupby("config_label")[metric].mean().dropna().to_dict()


def _dev_labels(scores: ExampleScores, trials: pd.DataFrame, metric: str) -> list | None:
    """The gold labels of the selection metric's examples, when it is a classification
    accuracy whose per-example artifact records them (pair classification does)."""
    split, lang, name = parse_metric_key(metric)
    if name != "accuracy":
        return None
    try:
        return scores.payload(trials["run_id"].iloc[0], split, lang).get("labels")
    except AnalysisError:  # no per-example artifact (an older sweep): nothing to judge on
        return None


def _loss_curves(client: MlflowClient, trials: pd.DataFrame) -> dict[str, list[float]]:
    curves = {}
    for row in trials.itertuples(index=False):
        history = sorted(client.get_metric_history(row.run_id, LOSS_CURVE), key=lambda m: m.step)
        curves[f"{row.config_label} seed {row.seed}"] = [point.value for point in history]
    return curves


def sanity_warnings(
    client: MlflowClient, scores: ExampleScores, trials: pd.DataFrame, metric: str
) -> list[str]:
    """Every warning that applies to the sweep whose finished trials are ``trials``,
    selected on ``metric``."""
    labels = _dev_labels(scores, trials, metric)
    warnings = [
        chance_warning(_config_means(trials, metric), metric, labels) if labels else "",
        loss_warning(_loss_curves(client, trials)),
    ]
    return [warning for warning in warnings if warning]
