"""Sanity warnings: signs that a sweep learned nothing, said before any selection is named.

For the sweep: every configuration (the baseline included) at chance level on the dev
selection metric, and a training loss that grew by orders of magnitude. Per configuration:
one class predicted for every example of the dev selection split (by any seed), a mean at
chance while the baseline's is not, and trials that ended because their loss diverged. A
sweep with a warning registers no champion unless asked (``--register-anyway``).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.example_scores import PerExampleScores
from analysis.frames import AnalysisError
from xlt_schema import DIVERGED_FAILURE, parse_metric_key

LOSS_CURVE = "train/loss"  # the mean training loss since the previous evaluation, per step
# |last| / |first| of a loss curve from which it counts as blown up (two orders of magnitude).
LOSS_GROWTH_FACTOR = 100.0
# Above chance means more than this many binomial standard errors above it (one-sided ~2.3%).
CHANCE_STANDARD_ERRORS = 2.0
# How a trial run's failure tag starts when its loss stopped being finite.
DIVERGED = DIVERGED_FAILURE


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


def _flat(values: Sequence) -> list:
    """Per-example values as one list: a sequence labeller's tags, one list per example,
    are joined."""
    return [item for value in values for item in (value if isinstance(value, list) else [value])]


def one_class(payload: Mapping) -> str | None:
    """The one value every prediction of a per-example artifact has, shown, when its gold
    labels have more than one; None otherwise (or when it records no predictions)."""
    predictions = {repr(value) for value in _flat(payload.get("predictions") or [])}
    labels = {repr(value) for value in _flat(payload.get("labels") or [])}
    return predictions.pop() if len(predictions) == 1 and len(labels) > 1 else None


def one_class_configs(
    scores: PerExampleScores, trials: pd.DataFrame, metric: str
) -> dict[str, dict[int, str]]:
    """config label -> {seed: the one class it predicted} for every seed of a configuration
    that predicted one class on the split and language of ``metric`` (from the predictions
    its trials logged); runs whose artifacts record no predictions are not judged."""
    split, lang, _ = parse_metric_key(metric)
    found: dict[str, dict[int, str]] = {}
    for row in trials.sort_values(["config_label", "seed"]).itertuples(index=False):
        try:
            value = one_class(scores.payload(row.run_id, split, lang))
        except AnalysisError:  # no per-example artifact (an older sweep): nothing to judge on
            continue
        if value is not None:
            found.setdefault(row.config_label, {})[int(row.seed)] = value
    return found


def one_class_warning(configs: Mapping[str, Mapping[int, str]], metric: str) -> str:
    """A warning naming the configurations (and seeds) that predict one class; "" when
    none does."""
    if not configs:
        return ""
    split, lang, _ = parse_metric_key(metric)
    listed = "; ".join(
        f"{label} ({', '.join(f'seed {seed} always {value}' for seed, value in seeds.items())})"
        for label, seeds in configs.items()
    )
    return (
        f"{len(configs)} configuration(s) predict one class for every {split}/{lang} example "
        f"in some seed: {listed}. Those models learned nothing: check the training budget "
        "and the learning rate before registering any model of this sweep."
    )


def chance_configs(
    config_means: Mapping[str, float], baseline_label: str, labels: Sequence
) -> list[str]:
    """The configurations whose mean accuracy is at chance while the baseline's is not."""
    chance = chance_level(labels)
    baseline = config_means.get(baseline_label)
    if baseline is None or at_chance(baseline, chance, len(labels)):
        return []
    return sorted(
        label
        for label, mean in config_means.items()
        if label != baseline_label and at_chance(mean, chance, len(labels))
    )


def config_chance_warning(
    configs: Sequence[str], config_means: Mapping[str, float], metric: str, labels: Sequence
) -> str:
    """A warning naming the configurations at chance while the baseline is not."""
    if not configs:
        return ""
    listed = "; ".join(f"{label}: {100 * config_means[label]:.1f} %" for label in configs)
    return (
        f"{len(configs)} configuration(s) are at chance level on {metric} (chance "
        f"{100 * chance_level(labels):.1f} %) while the baseline is not: {listed}. They "
        "learned nothing; their models are not to be registered."
    )


def diverged_warning(configs: Mapping[str, list[str]]) -> str:
    """A warning naming the configurations whose trials diverged; "" when none did."""
    if not configs:
        return ""
    listed = "; ".join(f"{label} (seeds {', '.join(seeds)})" for label, seeds in configs.items())
    return (
        f"Trials of {len(configs)} configuration(s) diverged (their loss stopped being "
        f"finite; failure {DIVERGED}) and were left out of the selection: {listed}. "
        "Check the loss weights and the learning rate before reading the selection."
    )


def _config_means(trials: pd.DataFrame, metric: str) -> dict[str, float]:
    return trials.groupby("config_label")[metric].mean().dropna().to_dict()


def _dev_labels(scores: PerExampleScores, trials: pd.DataFrame, metric: str) -> list | None:
    """The gold labels of the selection metric's examples, when it is a classification
    accuracy whose per-example artifact records them (pair classification does)."""
    split, lang, name = parse_metric_key(metric)
    if name != "accuracy":
        return None
    try:
        return scores.payload(trials["run_id"].iloc[0], split, lang).get("labels")
    except AnalysisError:  # no per-example artifact (an older sweep): nothing to judge on
        return None


@dataclass(frozen=True)
class TrainingRecords:
    """What the warnings read from the tracking server besides the trials and their scores
    (read by :func:`analysis.sweep_records.read_training_records`)."""

    diverged: Mapping[str, list[str]]  # of analysis.sweep_records.diverged_configs
    loss_curves: Mapping[str, list[float]]  # "<config label> seed <seed>" -> loss per step


def sanity_warnings(
    records: TrainingRecords,
    scores: PerExampleScores,
    trials: pd.DataFrame,
    metric: str,
    baseline_label: str = "",
) -> list[str]:
    """Every warning that applies to the sweep whose finished trials are ``trials``,
    selected on ``metric``; per configuration against ``baseline_label`` (the baseline's
    config label) when given; on the diverged trials and loss curves of ``records``
    (:func:`analysis.sweep_records.read_training_records`)."""
    labels = _dev_labels(scores, trials, metric)
    means = _config_means(trials, metric)
    at_chance_labels = chance_configs(means, baseline_label, labels) if labels else []
    warnings = [
        chance_warning(means, metric, labels) if labels else "",
        one_class_warning(one_class_configs(scores, trials, metric), metric),
        config_chance_warning(at_chance_labels, means, metric, labels),
        diverged_warning(records.diverged),
        loss_warning(records.loss_curves),
    ]
    return [warning for warning in warnings if warning]
