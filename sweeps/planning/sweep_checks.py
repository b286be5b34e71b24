"""The checks of a sweep's settings that need no data file, no network and no Ray: what
`--dry-run` (sweeps/planning/plan.py) and the sweep itself (sweeps/running/runner.check_sweep,
which adds the files, languages and the model's depth) both refuse, so that a dry run never
plans a sweep the real run refuses (an EAR x NER grid, say)."""

from __future__ import annotations

from typing import Callable

from sweeps.experiment import SweepSpec
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_aligner, check_supported

SEARCH = "search"  # sweeps/running/search.py's PHASE_SEARCH (that module loads torch)


def check_settings(
    spec: SweepSpec, fits: Callable[[TrialConfig], None] = check_supported
) -> list[TrialConfig]:
    """Every trial's configuration validated (each point with each seed, paired across
    configurations), each configuration's method and adaptation supported by its task (and
    an adjusted one by the install: eflomal), and
    for `search` its ranges (a value kept only where `fits` accepts its trial: the dry run
    checks values offline, the sweep against the model too), baseline and seeds. Raises
    ConfigError on the first bad value; returns the trials."""
    trials = [spec.trial_config(point, seed=seed) for point in spec.points for seed in spec.seeds]
    for config in spec.configs():
        check_supported(config)
        check_aligner(config)
    if spec.strategy == SEARCH:
        from sweeps.running import search

        search.search_ranges(spec, fits)
        if not search.baseline_points(spec):
            raise ConfigError(
                "--strategy", "search", "a sweep with a baseline configuration to re-run in phase 2"
            )
        if spec.search_seeds > len(spec.seeds):
            raise ConfigError(
                "search_seeds", spec.search_seeds, f"at most the sweep's {len(spec.seeds)} seeds"
            )
    return trials
