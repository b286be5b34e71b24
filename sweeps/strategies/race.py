"""Strategy `race`: every configuration but the baseline races over rounds of seeds
(analysis/seed_race.py): `race_first_seeds` seeds first (2), then one more per round up to the
sweep's seeds; after each round but the last, a configuration worse on the selection split than
the current leader by a one-sided seed-blocked t-test (`race_test`: pooled or paired;
Bonferroni over rounds x candidates, `race_alpha` in all) gets no more seeds.
The race ends with one configuration left or at the last seed; its leader is the winner the
report selects (the parent's WINNER_TAG) and the one the confirmation phase re-runs
with the baseline on fresh seeds (the parent's CONFIRM_POINTS_TAG), where the verdict is
decided.

Each round is one grid phase (`race-round<k>`) over the configurations still in it and the
baseline, with the round's new seeds, restored like any phase when the sweep resumes; the
eliminations are recomputed from the finished runs after each round, so a resumed race
drops the same configurations. The parent run carries the race as JSON (RACE_TAG: design,
rounds, eliminations); each dropped configuration's runs carry their own elimination
(DROPPED_TAG). The report reads every round."""

from __future__ import annotations

import json
import logging

from sweeps.planning.plan import Entry, Phase
from sweeps.planning.sweep_values import sweep_value
from sweeps.spec.experiment import RACE_SETTINGS
from xlt_core.errors import ConfigError

logger = logging.getLogger(__name__)

NAME = "race"
DROPPED_TAG = "xlt.race_dropped"  # on each run of a dropped configuration (JSON)
# The dry run's expected cost assumes every tested round keeps this share of its candidates:
# over benchmarks/race.py's landscapes the race ran 1/1.48 of a 5-seed grid's trials, what
# keeping about 2/3 a round gives ((2 + s + s^2 + s^3) / 5 = 0.68 at s = 0.66).
EXPECTED_KEPT_SHARE = 2 / 3


def round_phase(index: int) -> str:
    return f"{NAME}-round{index + 1}"


def round_seeds(seeds: int, first: int = 2) -> tuple[int, ...]:
    """Seeds per round for a budget of `seeds`: `first` first, then one per round."""
    return (first,) + (1,) * (seeds - first)


def race_design(spec):
    """The race of `spec`'s settings (`race_alpha`, `race_first_seeds`, `race_test`); RaceDesign
    checks them."""
    from analysis.seed_race import RaceDesign

    candidates = [point for point in spec.points if point not in spec.baseline_points()]
    return RaceDesign(
        candidates=len(candidates),
        round_seeds=round_seeds(len(spec.seeds), spec.race_first_seeds),
        alpha=spec.race_alpha,
        test=spec.race_test,
    )


def race_scores(client, parent_run_id: str, spec, configs, seeds) -> tuple[str, object, dict]:
    """The selection metric, its (configs, seeds) matrix of the finished runs (NaN where
    none) and each config_key's run ids, read as the report reads the runs."""
    import numpy as np

    from analysis.collect import AnalysisError, collect_trials
    from analysis.select import default_selection_metric

    keys = [config.config_key() for config in configs]
    try:
        trials = collect_trials(client, parent_run_id)
        metric = spec.selection_metric or default_selection_metric(trials)
    except AnalysisError as error:  # every trial so far failed: nothing to race on yet
        logger.warning(f"Race: no scores to compare ({error})")
        return spec.selection_metric or "", np.full((len(keys), len(seeds)), np.nan), {}
    table = trials.pivot_table(index="config_key", columns="seed", values=metric, aggfunc="mean")
    matrix = table.reindex(index=keys, columns=list(seeds)).to_numpy(dtype=float)
    run_ids = trials.groupby("config_key")["run_id"].apply(list).to_dict()
    return metric, matrix, run_ids


class RacePhases:
    """The rounds on `phases` (a `sweeps.running.tune_phases.TunePhases`), each restored where
    it stopped, until one configuration is left or the seeds are spent."""

    def __init__(self, phases):
        self.phases = phases

    def run(self) -> tuple[list, int]:
        """Every round's Tune results and how many of them failed."""
        import numpy as np

        from analysis.seed_race import race_round
        from sweeps.running.tune_phases import count_failed

        phases, spec = self.phases, self.phases.spec
        design, baseline = race_design(spec), spec.baseline_points()
        points = [point for point in spec.points if point not in baseline]
        configs = [spec.trial_config(point) for point in points]
        labels = [config.config_label() for config in configs]
        alive = np.ones(len(points), dtype=bool)
        results, rounds = [], []
        for index, seen in enumerate(design.cumulative_seeds):
            seeds = spec.seeds[seen - design.round_seeds[index] : seen]
            running = [label for label, kept in zip(labels, alive) if kept]
            racing = [point for point, kept in zip(points, alive) if kept]
            results += list(phases.run_grid(round_phase(index), [*baseline, *racing], seeds))
            metric, scores, run_ids = race_scores(
                phases.client, phases.parent_run_id, spec, configs, spec.seeds[:seen]
            )
            best, dropped = race_round(design, index, scores, alive)
            records = {labels[e.candidate]: {**e.record(), "leader": labels[best]} for e in dropped}
            for elimination in dropped:
                alive[elimination.candidate] = False
                self._tag_runs(run_ids.get(configs[elimination.candidate].config_key(), []),
                               records[labels[elimination.candidate]])  # fmt: skip
            rounds.append(
                {"round": index + 1, "seeds": list(seeds), "running": running,
                 "leader": labels[best], "dropped": records}
            )  # fmt: skip
            self._record(design, metric, rounds, len(results))
            if alive.sum() == 1:
                break
        self._confirm(baseline, points[best])
        return results, count_failed(results)

    def _tag_runs(self, run_ids: list, record: dict) -> None:
        from sweeps.records import tracking

        for run_id in run_ids:
            tracking.set_tags(self.phases.client, run_id, {DROPPED_TAG: json.dumps(record)})

    def _record(self, design, metric: str, rounds: list, trials: int) -> None:
        """The race so far on the parent run (RACE_TAG), and its progress line."""
        from analysis.seed_race import RACE_TAG

        record = {
            "design": design.describe(),
            "metric": metric,
            "trials": trials,
            "max_trials": len(self.phases.spec.points) * design.max_seeds,
            "rounds": rounds,
        }
        self.phases.client.set_tag(self.phases.parent_run_id, RACE_TAG, json.dumps(record))
        last = rounds[-1]
        dropped = "; ".join(
            f"dropped {label} (t {r['t']:+.2f}, p {r['p']:.2g} vs {r['leader']} on {r['seeds']} "
            "seeds)"
            for label, r in last["dropped"].items()
        )
        logger.info(
            f"Race round {last['round']} (seeds {', '.join(map(str, last['seeds']))}): "
            f"{len(last['running'])} racing, leader {last['leader']}"
            + (f"; {dropped}" if dropped else "")
            + f"; {trials} of at most {record['max_trials']} trials so far"
        )

    def _confirm(self, baseline: list, winner: dict) -> None:
        """The race's winner is the one the report selects (WINNER_TAG) and the
        confirmation phase re-runs with the baseline (a resumed sweep finds the same points
        there)."""
        from sweeps.records import tracking
        from xlt_schema import CONFIRM_POINTS_TAG, WINNER_TAG

        config = self.phases.spec.trial_config(winner)
        tags = {
            CONFIRM_POINTS_TAG: json.dumps([baseline[0], winner]),
            WINNER_TAG: config.config_key(),
        }
        if any(self.phases.tags.get(key) != value for key, value in tags.items()):
            tracking.set_tags(self.phases.client, self.phases.parent_run_id, tags)
            self.phases.tags.update(tags)
        logger.info(f"Race won by {config.config_label()}")


class Race:
    name = NAME
    help = (
        "race: every configuration starts with 2 seeds (race_first_seeds) paired with the "
        "baseline's, each round adds a seed to those not yet worse than the leader (a "
        "seed-blocked t-test, race_test; Bonferroni, race_alpha), up to the sweep's seeds"
    )
    samples_points = False
    seed_rounds = False

    def check(self, spec, fits) -> None:
        """A baseline, another configuration to race, 2 seeds or more, and a first round of
        at most the sweep's seeds."""
        baseline = spec.baseline_points()
        if not baseline or len(spec.points) - len(baseline) < 1:
            raise ConfigError(
                "--strategy", NAME, "a sweep with a baseline and a configuration to race"
            )
        if len(spec.seeds) < 2:
            raise ConfigError("seeds", len(spec.seeds), "at least 2 seeds to race over")
        for name in RACE_SETTINGS:  # as `--set` checks them, for a script's own values too
            sweep_value(name, getattr(spec, name))
        if spec.race_first_seeds > len(spec.seeds):
            raise ConfigError(
                "race_first_seeds",
                spec.race_first_seeds,
                f"an integer >= 2, at most the sweep's {len(spec.seeds)} seeds",
            )

    def trial_count(self, spec) -> tuple[int, str, str]:
        seeds = len(spec.seeds)
        formula = f"{len(spec.points)} configurations x {seeds} seeds at most (no eliminations)"
        return (
            len(spec.points) * seeds,
            formula,
            "fewer seeds (--set seeds=0,1,2) or configurations",
        )

    def plan(self, spec) -> list[Phase]:
        """One phase per round at its worst case: every configuration still racing."""
        design, configs = race_design(spec), spec.configs()
        phases = []
        for index, seeds in enumerate(design.round_seeds):
            plural = "s" if seeds > 1 else ""
            summary = (
                f"Round {index + 1} ({round_phase(index)}): {len(configs)} configurations "
                f"(at most) x {seeds} seed{plural} = {len(configs) * seeds} trials"
            )
            phases.append(Phase(summary, [Entry(c.config_label(), c, seeds) for c in configs]))
        return phases

    def plan_note(self, spec) -> str:
        from analysis.seed_race import race_trials, survivors_by_round

        design = race_design(spec)
        baseline = len(spec.points) - design.candidates
        expected = race_trials(design, EXPECTED_KEPT_SHARE)
        rounds = len(survivors_by_round(design, EXPECTED_KEPT_SHARE))
        seeds = design.cumulative_seeds[rounds - 1]  # the baseline runs every round
        worst = len(spec.points) * design.max_seeds
        return (
            f" at most; the race's own {worst} at most (no eliminations), about "
            f"{expected + baseline * seeds} expected if each round drops a third of the "
            f"configurations racing ({design.describe()})"
        )

    def describe(self, spec) -> str:
        return (
            f"a race of {race_design(spec).candidates} configurations over rounds of seeds "
            f"(at most {len(spec.seeds)}), plus the baseline"
        )

    def parent_tags(self, spec, run_name: str) -> dict:
        return {}

    def parent_params(self, spec) -> dict:
        rounds = len(race_design(spec).round_seeds)
        return {"n_trials": len(spec.points) * len(spec.seeds), "race_rounds": rounds}

    def phases(self, phases):
        return RacePhases(phases)


STRATEGY = Race()
