"""What the fake sweeps of the analysis tests share: trial runs tagged as the sweeps layer
tags them (`sweeps.running.trainable.trial_tags`, which needs Ray to import), a trial run scored
per example, and a complete parent run in a fresh experiment."""

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from mlflow import MlflowClient
from mlflow.entities import Metric, Param
from tracking_stores import tracking_store

from analysis.frames import example_artifact
from xlt_schema import (
    ADAPTATION_TAG,
    COMPLETE_TAG,
    CONFIG_KEY_TAG,
    CONFIG_LABEL_TAG,
    HYPERPARAMETERS_TAG,
    METHOD_TAG,
    PARENT_ROLE,
    PARENT_RUN_TAG,
    ROLE_TAG,
    TRIAL_ROLE,
)


def trial_tags(
    parent_id: str,
    label: str,
    method: str,
    adaptation: str = "none",
    hyperparameters: Iterable[str] = (),
    config_key: str | None = None,
) -> dict[str, str]:
    """The tags of a trial of configuration `label` in the sweep `parent_id`; its key is
    `label` with underscores for spaces unless `config_key` is given."""
    return {
        PARENT_RUN_TAG: parent_id,
        ROLE_TAG: TRIAL_ROLE,
        METHOD_TAG: method,
        ADAPTATION_TAG: adaptation,
        HYPERPARAMETERS_TAG: ",".join(hyperparameters),
        CONFIG_KEY_TAG: config_key or label.replace(" ", "_"),
        CONFIG_LABEL_TAG: label,
    }


def log_scored_trial(
    client: MlflowClient,
    experiment_id: str,
    tags: dict[str, str],
    scores: dict[str, Sequence[float]],
    params: dict[str, str],
) -> str:
    """A finished trial run with `tags` and `params` and, per key `<split>/<lang>` of
    `scores`, its examples' 0/1 scores as the scores artifact and their mean as the metric
    `<split>/<lang>/accuracy`, as a trial logs them; its run id."""
    run_id = client.create_run(experiment_id, tags=tags).info.run_id
    metrics = []
    for key, values in scores.items():
        split, lang = key.split("/")
        payload = {"split": split, "lang": lang, "metric": "accuracy", "scores": list(values)}
        client.log_dict(run_id, payload, example_artifact(split, lang))
        metrics.append(Metric(f"{key}/accuracy", sum(values) / len(values), 0, 0))
    client.log_batch(run_id, metrics=metrics, params=[Param(k, v) for k, v in params.items()])
    client.set_terminated(run_id)
    return run_id


def complete_parent(root: Path, experiment: str, params: dict[str, str]):
    """(tracking URI, client, experiment id, parent run id) of a new experiment in the SQLite
    store under ``root`` whose parent run is tagged complete, as the sweeps layer tags a sweep
    that ran to its end (the champion rule), with ``params``."""
    uri = tracking_store(root)
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment(
        experiment, artifact_location=(root / experiment).as_uri()
    )
    parent = client.create_run(
        experiment_id, tags={ROLE_TAG: PARENT_ROLE, COMPLETE_TAG: "true"}
    ).info.run_id
    client.log_batch(parent, params=[Param(name, value) for name, value in params.items()])
    return uri, client, experiment_id, parent


def log_skilled_trials(client, experiment_id: str, tags: dict, params: dict, seeds, draw) -> None:
    """Finished trial runs of one configuration (`tags`, its hyperparameters' `params`), one per
    seed; `draw` = (rng, skill per split, difficulty per `<split>/<lang>`): each example's 0/1
    score is right with chance difficulty + skill[split] - 0.5."""
    rng, skill, difficulties = draw
    identity = {"method": tags[METHOD_TAG], "adaptation": tags[ADAPTATION_TAG]}
    for seed in seeds:
        scores = {}
        for key, difficulty in difficulties.items():
            chance = np.clip(difficulty + skill[key.split("/")[0]] - 0.5, 0, 1)
            scores[key] = (rng.uniform(size=len(difficulty)) < chance).astype(float).tolist()
        log_scored_trial(
            client, experiment_id, tags, scores, {**identity, "seed": str(seed), **params}
        )
