"""Baseline, ADV, RS-RP and RS-DA on XNLI with the same seeds (Huang et al. 2021), with the
generalized pairs and the mixed-language set evaluated.

    python sweeps/robust_xnli.py --preset smoke
    python sweeps/robust_xnli.py --preset paper

The `paper` preset is built from the paper's card, `sweeps/papers/huang2021.yaml` (XTREME's
budget the paper follows, 10 seeds, ADV and RS-RP at Enc(x), m = 3, fp32), with its declared
departures.
`--preset released` runs the authors' released RS-DA scripts (uclanlp/Robust-XLT@0bb3c34):
the baseline and RS-DA on their budget, the card's `released` values.
"""

import sys

from sweeps.cli import main
from sweeps.families import huang2021, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

PAPER = huang2021.PAPER
EXPERIMENT = "robust_xnli"
# The paper's configurations (ADV and RS-RP over its epsilon grid, RS-DA) and one smoke
# point per method: sweeps/families/huang2021.py, which robust_pawsx shares.
# paper: the paper's grid; released: the authors' released RS-DA scripts (the card's code).
PRESETS = ("paper", "released")
POINTS = {
    "smoke": [BASELINE, *huang2021.SMOKE_POINTS],
    **{preset: huang2021.paper_points(EXPERIMENT, preset) for preset in PRESETS},
}
# Smoke: the EAR sweep's seeds, so the two smoke sweeps' runs pair up; paper: the card's 10.
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, EXPERIMENT, PRESETS)}
# The paper tests significance with a bootstrapped paired t-test (Tables 1-2 captions).
SIGNIFICANCE_TEST = huang2021.SIGNIFICANCE_TEST
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """Smoke: the EAR smoke sweep's settings with both extra evaluation sets; paper: the card's."""
    if preset == "smoke":
        return {
            **smoke_tasks.xnli_smoke_settings(data_dir),
            "generalized_pairs": True,
            "mixed_language": True,
        }
    return shared.paper_settings(PAPER, EXPERIMENT, preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
