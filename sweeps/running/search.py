"""Strategy `search`, the two phases of a sweep that samples instead of enumerating.

Phase 1 (`phase` tag `search`): Optuna's TPE (`OptunaSearch`) samples the method's ranges
(`spaces.SEARCH_RANGES`, starting from the sweep's own points) with the first seed only,
and ASHA stops weak trials early on English dev (`train/dev_accuracy`, the only metric
model selection may use). Phase 2 (`phase` tag `final`): the top-k configurations and the
baseline re-run over every seed as a grid, a balanced and paired design for the tests;
the report reads phase 2 only (the parent run's `xlt.report_phase` tag).
"""

from __future__ import annotations

import json
import math
from typing import Mapping

from sweeps.planning.search_space import in_range, search_ranges
from sweeps.spec.experiment import SweepSpec
from sweeps.spec.trial_contract import FAILURE, TRIAL_COMPLETE, TrialRequest
from xlt_schema import DEV_CURVE

PHASE_SEARCH = "search"
PHASE_FINAL = "final"
METRIC, MODE = DEV_CURVE, "max"


class DefineByRun:
    """Optuna's define-by-run space over `search_ranges`: a method, then its hyperparameters,
    named `point/<name>` so that Ray hands the trial `point` = one method configuration.
    A class, not a closure: Ray pickles the searcher into its experiment checkpoints."""

    def __init__(self, ranges: Mapping[str, Mapping[str, tuple]]):
        self.ranges = {method: dict(names) for method, names in ranges.items()}

    def __call__(self, trial) -> None:
        method = trial.suggest_categorical("point/method", sorted(self.ranges))
        for name, bounds in self.ranges[method].items():
            if bounds[0] == "choice":
                trial.suggest_categorical(f"point/{name}", list(bounds[1]))
            else:
                _, low, high, step = bounds
                trial.suggest_float(f"point/{name}", low, high, step=step)


def starting_points(spec: SweepSpec, ranges: Mapping[str, Mapping[str, tuple]]) -> list[dict]:
    """The sweep's own configurations (e.g. the papers' settings) that lie in the ranges:
    the search evaluates them first."""
    points = []
    for point, config in zip(spec.points, spec.configs()):  # defaults filled in
        method_ranges = ranges.get(point["method"])
        values = {
            "method": config.method,
            **{name: config.setting_value(name) for name in config.hyperparameter_names()},
        }
        if method_ranges is not None and all(
            in_range(values[name], bounds) for name, bounds in method_ranges.items()
        ):
            points.append({f"point/{key}": value for key, value in values.items()})
    return points


def record_study(
    results, ranges: Mapping[str, Mapping[str, tuple]], storage: str, study_name: str
) -> int:
    """Write phase 1 as an Optuna study in `storage` (e.g. sqlite:///optuna.db) for
    `optuna-dashboard`: finished trials COMPLETE with their dev score, trials ASHA stopped
    PRUNED with their curve, failed ones FAIL. The searcher itself keeps its study in memory,
    inside Tune's experiment checkpoint, so a resumed search restores one consistent state
    (a database updated apart from that checkpoint disagrees with it after a crash).
    Returns the number of trials written."""
    import optuna

    if study_name in optuna.get_all_study_names(storage):
        optuna.delete_study(study_name=study_name, storage=storage)
    study = optuna.create_study(
        study_name=study_name,
        storage=storage,
        direction="maximize" if MODE == "max" else "minimize",
    )
    written = 0
    for result in results:
        metrics, point = result.metrics or {}, TrialRequest.from_space(result.config).point
        curve = (
            result.metrics_dataframe[METRIC].dropna()
            if result.metrics_dataframe is not None and METRIC in result.metrics_dataframe
            else []
        )
        if result.error is not None or metrics.get(FAILURE):
            state, value = optuna.trial.TrialState.FAIL, None
        elif metrics.get(TRIAL_COMPLETE):
            state, value = optuna.trial.TrialState.COMPLETE, metrics[METRIC]
        else:
            state, value = optuna.trial.TrialState.PRUNED, None
        study.add_trial(
            optuna.trial.create_trial(
                params={f"point/{name}": value for name, value in point.items()},
                distributions=_distributions(ranges, point),
                value=value,
                state=state,
                intermediate_values={int(step): float(v) for step, v in enumerate(curve, start=1)},
            )
        )
        written += 1
    return written


def _distributions(ranges: Mapping[str, Mapping[str, tuple]], point: Mapping) -> dict:
    import optuna

    distributions = {"point/method": optuna.distributions.CategoricalDistribution(sorted(ranges))}
    for name, bounds in ranges[point["method"]].items():
        if bounds[0] == "choice":
            distributions[f"point/{name}"] = optuna.distributions.CategoricalDistribution(
                list(bounds[1])
            )
        else:
            distributions[f"point/{name}"] = optuna.distributions.FloatDistribution(
                bounds[1], bounds[2], step=bounds[3]
            )
    return distributions


def top_configurations(results, k: int) -> list[dict]:
    """The k best distinct phase-1 configurations. Trials that ran to the end rank first,
    by their selected model's English dev accuracy (the curve's final value); trials ASHA
    stopped follow by the best dev accuracy they reached. Failed trials never qualify. A
    configuration run with several seeds (`search_seeds`) ranks on its mean over them."""

    ranked = []
    for result in results:
        metrics = result.metrics or {}
        if (
            result.error is not None
            or metrics.get(FAILURE)
            or result.metrics_dataframe is None
            or METRIC not in result.metrics_dataframe
        ):
            continue
        best = result.metrics_dataframe[METRIC].max()
        if math.isfinite(best):
            ranked.append(
                (
                    bool(metrics.get(TRIAL_COMPLETE)),
                    metrics[METRIC] if metrics.get(TRIAL_COMPLETE) else best,
                    TrialRequest.from_space(result.config).point,
                )
            )
    if not ranked:
        raise RuntimeError(
            "no phase-1 trial produced an English dev score; nothing to re-run in phase 2"
        )
    return [point for _, _, point in _mean_over_seeds(ranked)][:k]


def _mean_over_seeds(ranked: list[tuple]) -> list[tuple]:
    """(complete, score, point) of each distinct point, best first: the mean score over its
    trials (its seeds, with `search_seeds`), complete when every one of them is."""
    by_point: dict[str, list[tuple]] = {}
    for item in ranked:
        by_point.setdefault(json.dumps(item[2], sort_keys=True), []).append(item)
    means = [
        (all(i[0] for i in items), sum(i[1] for i in items) / len(items), items[0][2])
        for items in by_point.values()
    ]
    return sorted(means, key=lambda item: (item[0], item[1]), reverse=True)


def asha_max_t(spec: SweepSpec) -> int:
    """An upper bound on the results a full trial reports, so that ASHA never cuts a trial at
    `max_t` just before its final report: evaluations come every steps_per_epoch //
    evals_per_epoch steps, fewer than 2 * evals_per_epoch per epoch, plus the last step's
    evaluation and the final report."""
    config = spec.trial_config({})
    return math.ceil(2 * config.epochs * config.evals_per_epoch) + 2


def phase_one_searcher(spec: SweepSpec, study_name: str):
    """Optuna's TPE over the sweep's ranges (its own points first), with at most
    `spec.search_concurrency` configurations in flight: TPE learns from results only if it
    waits for some (unlimited on a large cluster, most samples would be drawn blind)."""
    from ray.tune.search import ConcurrencyLimiter
    from ray.tune.search.optuna import OptunaSearch

    ranges = search_ranges(spec)
    searcher = OptunaSearch(
        space=DefineByRun(ranges),
        metric=METRIC,
        mode=MODE,
        points_to_evaluate=starting_points(spec, ranges) or None,
        study_name=study_name,
        seed=spec.seeds[0],
    )
    return ConcurrencyLimiter(searcher, max_concurrent=spec.search_concurrency)
