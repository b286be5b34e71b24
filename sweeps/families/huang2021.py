"""What the robust-training scripts share (Huang et al. 2021; card
`sweeps/papers/huang2021.yaml`): `robust_xnli` and `robust_pawsx` take the paper's
configurations and smoke points here; `rs_syntax` and `rs_da_m_curve` its card and test."""

from sweeps.spec import experiment as shared
from sweeps.spec.paper_cards import RELEASED_PRESET
from sweeps.spec.spaces import BASELINE

PAPER = "huang2021"
# The paper tests significance with a bootstrapped paired t-test (Tables 1-2 captions).
SIGNIFICANCE_TEST = "bootstrap"
# The paper's L-inf radius grid of ADV and RS-RP (huang2021.txt L166: "The size of robust
# regions is searched from {0.001,0.01,0.1,1.0}", and the same for RS-RP's ball).
EPSILONS = (0.001, 0.01, 0.1, 1.0)


def paper_points(experiment: str, preset: str = shared.PAPER_PRESET) -> list[dict]:
    """The baseline, ADV and RS-RP at every epsilon of the grid, and RS-DA, with the card's
    hyperparameters of the experiment (m = 3 on XNLI, 10 on PAWS-X; the ADV solver; the
    RS-DA variant). The released preset: the baseline and RS-DA, the only method of the
    released code (the card's `ADV and RS-RP` departure)."""
    points = [
        {"method": method, "epsilon": epsilon}
        for method in ("adv", "rs_rp")
        for epsilon in EPSILONS
    ]
    if preset == RELEASED_PRESET:
        points = []
    return shared.paper_points(PAPER, experiment, preset, [BASELINE, *points, {"method": "rs_da"}])


# One point per method for CPU minutes, at the paper's site (TrialConfig's default) as the
# paper preset runs: the grid's smallest radius (on the tiny model's Enc(x), ADV at 0.1 stays
# at chance, 0.001 and 0.01 learn: docs/design.md) and 2 copies instead of 3 (RS-DA's epochs
# grow with m).
SMOKE_POINTS = [
    {"method": "adv", "epsilon": 0.001},
    {"method": "rs_rp", "epsilon": 0.001},
    {"method": "rs_da", "m": 2, "rs_da_variant": "released"},
]
