"""Tracking stores of paper-sized sweeps for the `scale` case, written as a real sweep writes
them: a SQLite MLflow store with local artifacts, the parent run of the sweep script's paper
preset (`sweeps.spec.experiment.experiment_spec`, `sweeps.records.tracking.start_parent_run`,
its paper card's departures), one child run per trial tagged by
`sweeps.running.trainable.trial_tags`, its curve points, final metrics and per-example
artifacts written and logged by `sweeps.records.tracking.write_trial_results` /
`log_trial_results`, the payloads made by the task's own scorer
(`pair_encoding_and_scoring.score_predictions`). Only the numbers are drawn at random
(accuracies around a per-configuration mean), so the statistics have work to do.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlflow.entities import Metric, Param

from xlt_schema import COMPLETE_TAG, DEV_CURVE, PARENT_RUN_TAG, ROLE_TAG, TRIAL_ID_TAG, TRIAL_ROLE

# Curve points a trial logs before its final metrics (train/loss and the dev curve): a few
# epochs at the paper presets' evaluations per epoch.
CURVE_POINTS = 8
# Accuracy of fine-tuning and the spread of the other configurations around it.
BASE_ACCURACY, SPREAD = 0.70, 0.03


@dataclass(frozen=True)
class StorePlan:
    """One store: `trials` trial runs of `script`'s paper preset (configurations x seeds;
    the preset's points, then EAR points at new alphas when more are needed), each
    evaluated on `examples` examples per evaluation set; `seeds` and `languages` (None:
    the preset's) cut a store down for --quick."""

    script: str  # "ear_xnli" or "robust_xnli"
    trials: int
    examples: int
    seeds: int | None = None
    languages: int | None = None


def sweep_spec(plan: StorePlan):
    """The preset's SweepSpec with its points extended (or cut) to the plan's trials."""
    import dataclasses
    import importlib

    from sweeps.spec.experiment import experiment_spec

    spec = experiment_spec(importlib.import_module(f"sweeps.{plan.script}"), "paper", None)
    seeds = spec.seeds[: plan.seeds or len(spec.seeds)]
    base = dict(spec.base)
    if plan.languages:
        base["target_langs"] = base["target_langs"][: plan.languages]
    configurations = math.ceil(plan.trials / len(seeds))
    extra = [
        {"method": "ear", "alpha": round(2.0 + 0.1 * k, 1), "beta": 0.1, "layer": 6}
        for k in range(max(0, configurations - len(spec.points)))
    ]
    points = (spec.points + extra)[:configurations]
    return dataclasses.replace(spec, seeds=seeds, base=base, points=points)


def parent_params(spec) -> dict:
    """What the report reads from a sweep's parent run (sweeps.running.runner logs these and
    more)."""
    trials = len(spec.points) * len(spec.seeds)
    return {
        "preset": spec.preset,
        "strategy": spec.strategy,
        "significance_test": spec.significance_test,
        "seeds": ",".join(map(str, spec.seeds)),
        "n_configurations": len(spec.points),
        "n_trials": trials,
        **{f"base.{key}": value for key, value in spec.base.items()},
    }


def evaluation_keys(config) -> list[tuple[str, str]]:
    """The (split, lang) sets a trial of `config` is evaluated on, as
    `xlt_core.tasks.pair_evaluation_sets.evaluation_sets` keys them (without loading data)."""
    from xlt_core.tasks.pair_evaluation_sets import REFERENCE_LANG, pair_language

    langs = list(config.test_langs)
    keys = [("dev", REFERENCE_LANG), *(("test", lang) for lang in langs)]
    if config.generalized_pairs:
        keys += [("test", pair_language(a, b)) for a in langs for b in langs if a != b]
    if config.mixed_language:
        keys += [("mixed", lang) for lang in config.target_langs if lang != REFERENCE_LANG]
    return keys


class ScoreMaker:
    """Per-example payloads: one fixed label list per evaluation set, and per trial
    predictions right with its configuration's accuracy on that set."""

    def __init__(self, examples: int, seed: int = 0):
        self.examples, self.rng, self.labels = examples, np.random.default_rng(seed), {}

    def payload(self, key: tuple[str, str], accuracy: float) -> dict:
        from xlt_core.tasks.pair_encoding_and_scoring import score_predictions

        if key not in self.labels:
            self.labels[key] = self.rng.integers(0, 3, self.examples)
        labels = self.labels[key]
        right = self.rng.random(self.examples) < accuracy
        predictions = np.where(right, labels, (labels + 1) % 3)
        return score_predictions(predictions, labels.tolist())

    def accuracies(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """A configuration's mean accuracy per set: near the baseline's, lower off English."""
        shift = self.rng.normal(0, SPREAD)
        return {key: BASE_ACCURACY + shift - 0.05 * (key[1] != "en") for key in keys}


def log_trial(client, experiment_id: str, parent_id: str, config, scores, means) -> None:
    """One finished trial run, logged as a sweep's trial logs it (its params and curve in
    one batch rather than one call per point, to build large stores quickly: the same rows)."""
    from sweeps.records import tracking
    from sweeps.running.trainable import flat_params, trial_tags

    trial_id = f"{config.config_key()}_{config.seed}"  # Ray's trial id in a real sweep
    tags = {PARENT_RUN_TAG: parent_id, ROLE_TAG: TRIAL_ROLE, TRIAL_ID_TAG: trial_id}
    run_id = client.create_run(
        experiment_id, tags={**tags, **trial_tags(config, "grid")}
    ).info.run_id
    payloads = {key: scores.payload(key, means[key]) for key in means}
    metrics = {f"{split}/{lang}/accuracy": p["value"] for (split, lang), p in payloads.items()}
    curve = [
        Metric(key, value, 0, step)
        for step in range(CURVE_POINTS)
        for key, value in {"train/loss": 1.1 / (1 + step), DEV_CURVE: 0.7}.items()
    ]
    params = [Param(key, str(value)) for key, value in flat_params(config).items()]
    client.log_batch(run_id, metrics=curve, params=params)
    with tempfile.TemporaryDirectory(prefix="xlt-scale-trial-") as directory:
        example_scores = {f"{split}-{lang}": p for (split, lang), p in payloads.items()}
        tracking.write_trial_results(Path(directory), metrics, CURVE_POINTS, example_scores, [])
        tracking.log_trial_results(client, run_id, directory)


def build_store(plan: StorePlan, root: Path) -> tuple[str, str]:
    """Write the plan's sweep into a new store under `root`: (tracking URI, experiment)."""
    from sweeps.records import tracking

    spec = sweep_spec(plan)
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client, experiment_id = tracking.open_experiment(uri, spec.experiment)
    tags = {"mlflow.runName": f"{spec.experiment}-scale-{plan.trials}"}
    parent_id = tracking.start_parent_run(client, experiment_id, parent_params(spec), tags)
    if spec.paper_card is not None:
        tracking.log_departures(client, parent_id, spec.paper_card, spec.departures())
    scores = ScoreMaker(plan.examples)
    for point in spec.points:
        config = spec.trial_config(point)
        means = scores.accuracies(evaluation_keys(config))
        for seed in spec.seeds:
            seeded = spec.trial_config(point, seed)
            log_trial(client, experiment_id, parent_id, seeded, scores, means)
    tracking.set_tags(client, parent_id, {COMPLETE_TAG: "true"})
    client.set_terminated(parent_id, status="FINISHED")
    return uri, spec.experiment
