"""Strategy `search` run on Tune (what its phases are: sweeps/running/search.py): phase 1 is
Optuna's TPE with ASHA, written as an Optuna study when it ends; its top configurations and
the baseline go on the parent run (FINAL_POINTS_TAG, stage `final`), and phase 2 runs them
as a grid over every seed. A resumed sweep whose stage is `final` takes phase 1's results
from its saved state and the points from the parent."""

from __future__ import annotations

import dataclasses
import json
import logging

from sweeps.planning import search_space
from sweeps.records import tracking
from sweeps.running import search
from sweeps.running.tune_phases import TunePhases, count_failed, tune_config
from xlt_schema import RAY_NAME_TAG, STAGE_TAG

logger = logging.getLogger(__name__)

FINAL_POINTS_TAG = "xlt.final_points"
# The search phase's Optuna study: where it is stored and its name.
OPTUNA_STORAGE_TAG = "xlt.optuna_storage"
OPTUNA_STUDY_TAG = "xlt.optuna_study"


class SearchPhases:
    """Phase 1 (search), then phase 2 (final) over the points phase 1 chose."""

    def __init__(self, phases: TunePhases):
        self.phases = phases

    def run(self):
        """Results of phase 2 and the number of failed trials of both phases."""
        tags = self.phases.tags
        if tags[STAGE_TAG] == search.PHASE_SEARCH:
            failed, final_points = self._search()
        else:
            failed = count_failed(self.phases.restored_results(search.PHASE_SEARCH))
            final_points = tags[FINAL_POINTS_TAG]
        # Read back from the tag's text either way: a resumed phase 2 runs the same points.
        points = json.loads(final_points)
        results = self.phases.run_grid(search.PHASE_FINAL, points, self.phases.spec.seeds)
        return results, failed + count_failed(results)

    def _search(self) -> tuple[int, str]:
        """Run phase 1, record it as an Optuna study and its chosen points on the parent run
        (stage `final`); (its failed trials, the points as the tag's JSON)."""
        phases, spec = self.phases, self.phases.spec
        phase1 = phases.fit(search.PHASE_SEARCH, self.search_tuner())
        search.record_study(
            phase1,
            search_space.search_ranges(spec),
            phases.tags[OPTUNA_STORAGE_TAG],
            phases.tags[OPTUNA_STUDY_TAG],
        )
        points = [*spec.baseline_points(), *search.top_configurations(phase1, spec.top_k)]
        final_points = json.dumps(points)
        tracking.set_tags(
            phases.client,
            phases.parent_run_id,
            {FINAL_POINTS_TAG: final_points, STAGE_TAG: search.PHASE_FINAL},
        )
        logger.info(
            "Phase 2 re-runs over every seed: "
            + "; ".join(spec.trial_config(point).config_label() for point in points)
        )
        return count_failed(phase1), final_points

    def search_tuner(self):
        """Phase 1's Tuner, restored when its saved state is there."""
        from ray import tune
        from ray.tune.schedulers import ASHAScheduler

        phases, spec = self.phases, self.phases.spec
        restored = phases.restorable(search.PHASE_SEARCH)
        if restored is not None:
            return restored
        searcher = search.phase_one_searcher(spec, phases.tags[RAY_NAME_TAG])
        scheduler = ASHAScheduler(
            time_attr="training_iteration",
            metric=search.METRIC,
            mode=search.MODE,
            max_t=search.asha_max_t(spec),
            grace_period=1,
            reduction_factor=2,
        )
        request = dataclasses.replace(phases.request, phase=search.PHASE_SEARCH, seed=spec.seeds[0])
        repeat = spec.search_seeds
        if repeat > 1:
            from ray.tune.search import Repeater

            # Each sampled configuration runs with the first `repeat` seeds (its trials'
            # `__trial_index__` picks one: TrialRequest.from_space) and the searcher sees their
            # mean. Ray recommends no early-stopping scheduler with Repeater: no ASHA.
            searcher, scheduler = Repeater(searcher, repeat=repeat, set_index=True), None
            request = dataclasses.replace(request, search_seeds=tuple(spec.seeds[:repeat]))
        return tune.Tuner(
            phases.trainable(),
            param_space=request.to_space(),
            tune_config=tune_config(
                search_alg=searcher, scheduler=scheduler, num_samples=spec.search_trials * repeat
            ),
            run_config=phases.run_config(search.PHASE_SEARCH),
        )
