"""The checks of a sweep's settings that need no data file, no network and no Ray: what
`--dry-run` (sweeps/planning/plan.py) and the sweep itself (sweeps/running/runner.check_sweep,
which adds the files, languages and the model's depth) both refuse, so that a dry run never
plans a sweep the real run refuses (an EAR x NER grid, say)."""

from __future__ import annotations

from typing import Callable

from sweeps.spec.experiment import SweepSpec
from sweeps.spec.paper_cards import RELEASED_PRESET
from sweeps.spec.spaces import BASELINE
from sweeps.spec.strategy import strategy_named
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_aligner, check_supported
from xlt_schema import SELECTION_ON_TEST

# The most trials one sweep may plan: the largest the driver is measured at (docs/benchmarks.md,
# 10,000 trials: 4 GiB of driver memory, its CPU per trial growing 3x from 1,000). Beyond it
# the plan is refused, naming the settings that make the count (issue 53: 60,000 planned
# without a word).
MAX_TRIALS = 10_000


def check_settings(
    spec: SweepSpec, fits: Callable[[TrialConfig], None] = check_supported
) -> list[TrialConfig]:
    """Every trial's configuration validated (each point with each seed, paired across
    configurations), each configuration's method and adaptation supported by its task (and
    an adjusted one by the install: eflomal), and its strategy's own checks (`Strategy.check`:
    for `search` its ranges, a value kept only where `fits` accepts its trial: the dry run
    checks values offline, the sweep against the model too); its one
    baseline (`check_baseline`) and its count of trials (`check_trial_count`). Raises
    ConfigError on the first bad value; returns the trials."""
    check_baseline(spec)
    check_trial_count(spec)
    check_selection_on_test(spec)
    trials = [spec.trial_config(point, seed=seed) for point in spec.points for seed in spec.seeds]
    for config in spec.configs():
        check_supported(config)
        check_aligner(config)
    strategy_named(spec.strategy).check(spec, fits)
    return trials


def check_baseline(spec: SweepSpec) -> None:
    """Refuse a sweep without exactly one baseline configuration (plain fine-tuning of the
    unadapted encoder): the report compares every configuration with it, so without it (or
    with two) no report could be made once every trial had trained."""
    baselines = {
        config.config_key()
        for config in spec.configs()
        if config.method == BASELINE["method"] and not config.adjusted
    }
    if len(baselines) != 1:
        methods = sorted({config.config_label() for config in spec.configs()})
        raise ConfigError(
            "points",
            "; ".join(methods),
            f"exactly one baseline configuration, - method: {BASELINE['method']} (no "
            f"adaptation; this sweep has {len(baselines)}): the report compares every "
            "configuration with it",
        )


def check_selection_on_test(spec: SweepSpec) -> None:
    """Refuse `selection_dev=test` (checkpoints kept on test) but in a `--preset released`
    sweep whose released code keeps its checkpoints so (its card's `test_selection`): there
    the user reproduces those scripts on purpose, and the report claims nothing."""
    if all(config.selection_dev != SELECTION_ON_TEST for config in spec.configs()):
        return
    card = spec.paper_card
    if spec.preset != RELEASED_PRESET or card is None or card.test_selection(spec.preset) is None:
        raise ConfigError(
            "selection_dev",
            SELECTION_ON_TEST,
            f"en or source for {spec.experiment} --preset {spec.preset}: selection on test "
            "keeps the checkpoint with the best test accuracy, which leaks test; only --preset "
            f"{RELEASED_PRESET} of released code that does so (ding2022's EAR scripts) "
            "reproduces it",
        )


def check_trial_count(spec: SweepSpec) -> None:
    """Refuse a plan of more than MAX_TRIALS trials: its strategy's (a grid's configurations x
    seeds; a search's samples x search_seeds, then the baseline and the top_k x seeds), then
    the confirmation phase's two configurations x its seeds."""
    confirm = len(spec.confirmation_seeds())
    count, formula, fewer = strategy_named(spec.strategy).trial_count(spec)
    count += 2 * confirm
    plan = f"{formula} + 2 x {confirm} confirmation seeds: {fewer}"
    if count > MAX_TRIALS:
        raise ConfigError(
            "trials",
            count,
            f"at most {MAX_TRIALS} in one sweep (the most the driver is measured at, "
            f"docs/benchmarks.md); this sweep plans {plan}, or a study split into sweeps of at "
            f"most {MAX_TRIALS} trials",
        )
