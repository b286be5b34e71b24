"""The confirmation phase every strategy ends with: the configuration the report will select
and the baseline, re-run on fresh seeds (phase `confirm`), so that the verdict is decided on
runs that took no part in choosing the winner (Bouthillier et al. 2021; Cawley & Talbot
2010). Without it, seed luck that won the selection on dev is still in the test scores of the
same runs, and "beats the baseline" comes out too often (docs/statistics.md#selection).

The selection is the report's own (`analysis.select.select_best` on the reported phase's runs,
with the sweep's selection metric and the default baseline), made once: its two points go on
the parent run (CONFIRM_POINTS_TAG, stage `confirm`), and a resumed sweep confirms those.
Nothing is confirmed when the baseline itself is selected, or when the sweep's seeds for it
are set to 0 (`--set confirm_seeds=0`: the verdict then corrects for the selection instead).
"""

from __future__ import annotations

import json
import logging

from sweeps.records import tracking
from sweeps.running.tune_phases import TunePhases
from sweeps.safety.dead_baseline import dead_baseline
from xlt_schema import CONFIRM_PHASE, CONFIRM_POINTS_TAG, STAGE_TAG

logger = logging.getLogger(__name__)


def confirmation_points(phases: TunePhases, results) -> list[dict]:
    """The baseline's and the selected configuration's points (in that order) from the
    reported phase's Tune `results`; [] when there is nothing to confirm (the baseline
    selected, or no selection possible: the report then says why)."""
    from analysis.collect import AnalysisError, collect_trials
    from analysis.select import baseline_config_key, default_selection_metric, select_best

    spec = phases.spec
    try:
        trials = collect_trials(phases.client, phases.parent_run_id)
        metric = spec.selection_metric or default_selection_metric(trials)
        selected = select_best(trials, metric).config_key
        baseline = baseline_config_key(trials)
    except AnalysisError as error:
        logger.warning(f"No confirmation phase: {error}")
        return []
    if selected == baseline:
        logger.info("The baseline is selected: no confirmation phase (nothing to confirm)")
        return []
    by_key = {}
    for result in results:
        point = (result.config or {}).get("point")
        if point is not None:
            by_key.setdefault(spec.trial_config(point).config_key(), point)
    if baseline not in by_key or selected not in by_key:  # not among this run's trials
        logger.warning("No confirmation phase: the selection is not among the phase's trials")
        return []
    return [by_key[baseline], by_key[selected]]


def run_confirmation(phases: TunePhases, results) -> list:
    """Run (or restore and finish) the confirmation phase after the strategy's phases, whose
    reported `results` it selects from; its Tune results ([] when nothing is confirmed)."""
    spec = phases.spec
    seeds = spec.confirmation_seeds()
    if not seeds or dead_baseline(spec, results) is not None:  # that says why it stops
        return []
    saved = phases.tags.get(CONFIRM_POINTS_TAG)
    if saved is not None:  # resumed: confirm the selection made before the interruption
        points = json.loads(saved)
    else:
        points = confirmation_points(phases, results)
        if not points:
            return []
        tags = {CONFIRM_POINTS_TAG: json.dumps(points), STAGE_TAG: CONFIRM_PHASE}
        tracking.set_tags(phases.client, phases.parent_run_id, tags)
        phases.tags.update(tags)
    labels = [spec.trial_config(point).config_label() for point in points]
    logger.info(
        f"Confirmation: {labels[1]} (selected on dev) and {labels[0]} (baseline) on "
        f"{len(seeds)} fresh seed{'s' if len(seeds) > 1 else ''} "
        f"({', '.join(map(str, seeds))}); the verdict is decided on these runs"
    )
    return list(phases.run_grid(CONFIRM_PHASE, points, seeds))
