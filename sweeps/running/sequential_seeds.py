"""`--set seeds=auto`: seeds in rounds, each configuration compared with the baseline after
every round by the group-sequential design of `analysis/sequential.py`; a configuration whose
comparison is decided (either sign) or futile gets no more seeds.

Each round is one Tune experiment of its own (phase `grid-round<k>`: its trials carry that
phase tag, and an interrupted round is restored like any phase) over the configurations
still open and the baseline, with the round's seeds. The comparison is on the sweep's
selection metric (English dev unless the script names another), one per configuration, on
the per-example scores the trials logged, paired by seed (the report's reading of the runs).
What was decided goes on the parent run as the `xlt.sequential` tag, which the report shows.
"""

from __future__ import annotations

import dataclasses
import json
import logging

from sweeps.running.tune_phases import count_failed
from sweeps.spec.experiment import SweepSpec
from sweeps.spec.strategy import seed_round_strategies, strategy_named
from xlt_core.errors import ConfigError

logger = logging.getLogger(__name__)


def use_auto_seeds(spec: SweepSpec) -> SweepSpec:
    """A new spec with seeds in the default rounds: the sweep's own seeds in order, then the
    next integers when it has fewer than the rounds need."""
    from analysis.sequential import DEFAULT_ROUNDS

    if not strategy_named(spec.strategy).seed_rounds:
        raise ConfigError(
            "seeds",
            "auto",
            f"strategy {seed_round_strategies()} (sequential seeds are not built for "
            f"{spec.strategy})",
        )
    needed = sum(DEFAULT_ROUNDS)
    seeds = list(spec.seeds[:needed])
    while len(seeds) < needed:
        seeds.append(max(seeds, default=-1) + 1)
    return dataclasses.replace(spec, seeds=seeds, seed_rounds=DEFAULT_ROUNDS)


def round_phase(index: int) -> str:
    return f"grid-round{index + 1}"


def round_statistics(client, parent_run_id: str, spec: SweepSpec, keys) -> tuple[str, dict]:
    """The selection metric and, per config_key in ``keys`` (the baseline's aside) with
    finished runs, its z against the baseline on the seeds both finished and how many those
    are (:func:`analysis.sequential.crossed_z`)."""
    from analysis.collect import ExampleScores, collect_trials, parse_metric_key
    from analysis.select import baseline_config_key, default_selection_metric, paired_run_ids
    from analysis.sequential import crossed_z

    trials = collect_trials(client, parent_run_id)
    metric = spec.selection_metric or default_selection_metric(trials)
    split, lang, _ = parse_metric_key(metric)
    baseline_key = baseline_config_key(trials)
    scores = ExampleScores(client)
    statistics = {}
    for key in keys:
        if key == baseline_key or key not in set(trials["config_key"]):
            continue  # every trial of it failed: nothing to compare
        system_ids, baseline_ids, seeds = paired_run_ids(trials, key, baseline_key)
        if len(seeds) < 2:
            continue
        differences = scores.scores(system_ids, split, lang) - scores.scores(
            baseline_ids, split, lang
        )
        statistics[key] = (float(crossed_z(differences)), len(seeds))
    return metric, statistics


class SeedRoundPhases:
    """Strategy grid with `seeds=auto`: one grid phase per round on `phases` (a
    `sweeps.running.tune_phases.TunePhases`), until no configuration is left open."""

    def __init__(self, phases):
        self.phases = phases

    def run(self) -> tuple[list, int]:
        """The results of every round's trials and how many failed. The decisions go on the
        parent run (SEQUENTIAL_TAG)."""
        # analysis.sequential loads scipy: only for a sweep in rounds (the driver imports this
        # module with every sweep).
        from analysis.sequential import CONTINUE, SequentialDesign, adjusted_p_value, decide

        phases, spec = self.phases, self.phases.spec
        design = SequentialDesign(tuple(spec.seed_rounds))
        configs = spec.configs()
        keyed = {config.config_key(): point for config, point in zip(configs, spec.points)}
        labels = {config.config_key(): config.config_label() for config in configs}
        results, decided, open_keys, metric = [], {}, set(), ""
        start = 0
        for index, count in enumerate(design.round_seeds):
            seeds = spec.seeds[start : start + count]
            start += count
            points = [point for key, point in keyed.items() if key not in decided]
            phase = round_phase(index)
            results += list(phases.run_grid(phase, points, seeds))
            metric, statistics = round_statistics(
                phases.client, phases.parent_run_id, spec, [k for k in keyed if k not in decided]
            )
            open_keys = set(statistics)
            for key, (z, paired) in statistics.items():
                decision = str(decide(design, index, z))
                if decision != CONTINUE:
                    p_value = adjusted_p_value(design, index, z)
                    decided[key] = _outcome(labels[key], index, paired, decision, z, p_value)
            if not open_keys - set(decided):
                break
        self._record(design, metric, len(results), decided)
        return results, count_failed(results)

    def _record(self, design, metric: str, trials: int, decided: dict) -> None:
        from analysis.sequential import SEQUENTIAL_TAG

        record = {
            "design": design.describe(),
            "metric": metric,
            "trials": trials,
            "max_trials": len(self.phases.spec.points) * design.max_seeds,
            "configurations": sorted(decided.values(), key=lambda outcome: outcome["label"]),
        }
        self.phases.client.set_tag(self.phases.parent_run_id, SEQUENTIAL_TAG, json.dumps(record))
        logger.info(
            f"Sequential seeds: {record['trials']} of at most {record['max_trials']} trials; "
            + "; ".join(
                f"{o['label']}: {o['decision']} after {o['seeds']} seeds" for o in decided.values()
            )
        )


def _outcome(label: str, index: int, seeds: int, decision: str, z: float, p_value: float) -> dict:
    return {
        "label": label,
        "rounds": index + 1,
        "seeds": seeds,
        "decision": decision,
        "z": z,
        "p_adjusted": p_value,
    }
