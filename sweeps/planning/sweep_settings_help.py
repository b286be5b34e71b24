"""The sweep scripts' `--help` list of settings: every trial setting `--set` takes and the
sweep's own (xlt_core/settings_help.py does the listing)."""

from __future__ import annotations

import dataclasses

from sweeps.spec.experiment import SweepSpec
from xlt_core.settings_help import settings_epilog

# What the sweep settings allow: the command line checks them, not TrialConfig.
SWEEP_SETTING_RULES = {
    "seeds": "comma-separated integers between 0 and 2**32 - 1, or auto (sequential seeds)",
    "cpus_per_trial": "a finite number > 0, at most the largest node's CPUs",
    "log_models": "true or false",
    "search_trials": "an integer >= 1 (--strategy search: phase 1's sampled trials)",
    "top_k": "an integer >= 1 (--strategy search: configurations phase 2 re-runs)",
    "search_seeds": "an integer >= 1, at most the seeds (phase 1 ranks on their mean)",
    "search_concurrency": "an integer >= 1 (--strategy search: phase 1's configurations "
    "sampled before results return)",
    "confirm_seeds": "an integer >= 0: fresh seeds the selected configuration and the baseline "
    "re-run with, the verdict decided on them (default: as many as seeds; 0: none, the verdict "
    "then Bonferroni-corrected over the candidates)",
    "race_alpha": "a number between 0 and 1, both excluded (--strategy race: the error rate of "
    "dropping the best configuration, split over rounds x opponents)",
    "race_first_seeds": "an integer >= 2, at most the seeds (--strategy race: the first round's "
    "seeds; each later round adds one)",
    "race_test": "pooled or paired (--strategy race: the seed-blocked t-test's variance, pooled "
    "over the configurations racing or each pair's own)",
}
HEADING = (
    "settings (--set KEY=VALUE; the defaults are TrialConfig's and SweepSpec's, a preset may "
    "set its own: --dry-run shows the sweep as it will run):"
)


def sweep_settings_epilog(settable: tuple[str, ...]) -> str:
    return settings_epilog(settable, HEADING, dataclasses.fields(SweepSpec), SWEEP_SETTING_RULES)
