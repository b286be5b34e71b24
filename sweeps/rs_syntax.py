"""RS-syntax on PAWS-X (Huang et al. 2021, Table 3): randomized smoothing on m copies of
each example with adjacent words swapped (p = 0.1), beside RS-DA's synonym copies and
plain fine-tuning, generalized pairs on.

    python sweeps/rs_syntax.py --preset smoke
    python sweeps/rs_syntax.py --preset paper --dry-run

The paper does not give RS-syntax's m; it draws m = 10 synonym copies for RS-DA on PAWS-X
and builds RS-syntax "following a similar strategy", so both use m = 10 in `paper` (a
declared departure of `sweeps/papers/huang2021.yaml`, which the preset is built from).
"""

import sys

from sweeps.cli import main
from sweeps.families import huang2021, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

PAPER = huang2021.PAPER
EXPERIMENT = "rs_syntax"
# Smoke: 2 copies instead of 10 (an epoch grows with m), the paper's swap probability.
SMOKE_POINTS = [
    BASELINE,
    {"method": "rs_da", "m": 2, "rs_da_variant": "released"},
    {"method": "rs_syntax", "m": 2, "swap_probability": 0.1},
]
POINTS = {
    "smoke": SMOKE_POINTS,
    "paper": shared.paper_points(
        PAPER, EXPERIMENT, "paper", [BASELINE, {"method": "rs_da"}, {"method": "rs_syntax"}]
    ),
}
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, EXPERIMENT, ("paper",))}
SIGNIFICANCE_TEST = huang2021.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return smoke_tasks.pawsx_smoke_settings(data_dir)
    return shared.paper_settings(PAPER, EXPERIMENT, preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
