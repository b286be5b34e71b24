"""RS-syntax on PAWS-X (Huang et al. 2021, Table 3): randomized smoothing on m copies of
each example with adjacent words swapped (p = 0.1), beside RS-DA's synonym copies and
plain fine-tuning, generalized pairs on.

    python sweeps/rs_syntax.py --preset smoke
    python sweeps/rs_syntax.py --preset paper --dry-run

The paper does not give RS-syntax's m; it draws m = 10 synonym copies for RS-DA on PAWS-X
and builds RS-syntax "following a similar strategy", so both use m = 10 here.
"""

import sys

from sweeps import ear_pawsx, robust_pawsx
from sweeps.cli import main
from sweeps.spaces import BASELINE

SWAP_PROBABILITY = 0.1


def points(m: int) -> list[dict]:
    return [
        BASELINE,
        {"method": "rs_da", "m": m, "rs_da_variant": "released"},
        {"method": "rs_syntax", "m": m, "swap_probability": SWAP_PROBABILITY},
    ]


# Smoke: 2 copies instead of 10 (an epoch grows with m).
POINTS = {"smoke": points(2), "paper": points(robust_pawsx.RS_DA_M)}
SEEDS = robust_pawsx.SEEDS
SIGNIFICANCE_TEST = robust_pawsx.SIGNIFICANCE_TEST
trial_settings = ear_pawsx.trial_settings


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
