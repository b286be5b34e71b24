"""Each paper's search space as data: a list of method configurations ("points").

The EAR paper's grid is not a cross product but three one-factor sweeps around its
chosen setting, so a space is a list of points, not a dict of axes.
"""

from __future__ import annotations

from xlt_core.config import METHOD_HYPERPARAMETERS
from xlt_core.errors import ConfigError

BASELINE = {"method": "finetune"}

# Ding et al. 2022: layer at alpha = beta = 1; beta at alpha = 1; alpha at beta = 0.1 (layer 6
# where the paper fixes it); plus the released scripts' alpha = 0.1, beta = 1.
EAR_LAYERS = (3, 6, 9, 12)
EAR_BETAS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
EAR_ALPHAS = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)
EAR_PAPER_SETTING = {"alpha": 1.0, "beta": 0.1, "layer": 6}
EAR_RELEASED_SETTING = {"alpha": 0.1, "beta": 1.0, "layer": 6}


def ear_paper_points() -> list[dict]:
    points = [{"alpha": 1.0, "beta": 1.0, "layer": layer} for layer in EAR_LAYERS]
    points += [{"alpha": 1.0, "beta": beta, "layer": 6} for beta in EAR_BETAS]
    points += [{"alpha": alpha, "beta": 0.1, "layer": 6} for alpha in EAR_ALPHAS]
    points += [EAR_PAPER_SETTING, EAR_RELEASED_SETTING]
    return unique([{"method": "ear", **point} for point in points])


def ear_smoke_points() -> list[dict]:
    """The paper's and the released scripts' settings: two EAR configurations."""
    return [{"method": "ear", **EAR_PAPER_SETTING}, {"method": "ear", **EAR_RELEASED_SETTING}]


# The ranges strategy `search` explores per method, as data: ("float", low, high, step) or
# ("choice", values). EAR: around both published settings (alpha 0.1-1.8, beta 0.1-1).
SEARCH_RANGES = {
    "ear": {
        "alpha": ("float", 0.1, 2.0, 0.1),
        "beta": ("float", 0.05, 1.0, 0.05),
        "layer": ("choice", EAR_LAYERS),
        "m": ("choice", (1,)),
    },
}

# Huang et al. 2021: the L-inf radius grid of ADV and RS-RP, and RS-DA's copies per example.
ROBUST_EPSILONS = (0.001, 0.01, 0.1, 1.0)
RS_DA_M = {"xnli": 3, "pawsx": 10}


def robust_paper_points(m: int) -> list[dict]:
    """ADV and RS-RP at every epsilon of the grid, RS-DA (released variant) with m copies."""
    points = [
        {"method": method, "epsilon": epsilon}
        for method in ("adv", "rs_rp")
        for epsilon in ROBUST_EPSILONS
    ]
    return points + [{"method": "rs_da", "m": m, "rs_da_variant": "released"}]


def robust_smoke_points(epsilon: float = 0.001, m: int = 2) -> list[dict]:
    """One point per robust method for CPU minutes: the grid's smallest radius (the tiny
    model's word embeddings start at std 0.02, and an adversarial L-inf step of 0.01 per
    coordinate keeps it at chance) and 2 copies instead of 3 (RS-DA's epochs grow with m)."""
    return [
        {"method": "adv", "epsilon": epsilon},
        {"method": "rs_rp", "epsilon": epsilon},
        {"method": "rs_da", "m": m, "rs_da_variant": "released"},
    ]


def with_setting(points: list[dict], key: str, value) -> list[dict]:
    """Every point whose method has hyperparameter `key` set to `value` (e.g. EAR's m=10)."""
    return [
        {**point, key: value} if key in METHOD_HYPERPARAMETERS[point["method"]] else point
        for point in points
    ]


def override_axis(points: list[dict], key: str, value) -> list[dict]:
    """Fix one hyperparameter in every point whose method has it (`--set beta=0.1`),
    merging the points that become equal. A hyperparameter of none of the sweep's methods
    is refused: it would silently change nothing."""
    methods = sorted({point["method"] for point in points})
    if not any(key in METHOD_HYPERPARAMETERS[method] for method in methods):
        raise ConfigError(
            key,
            value,
            f"a hyperparameter of this sweep's methods ({', '.join(methods)}); {key} belongs to {', '.join(m for m, names in METHOD_HYPERPARAMETERS.items() if key in names)}",
        )
    return unique(with_setting(points, key, value))


def unique(points: list[dict]) -> list[dict]:
    seen, kept = set(), []
    for point in points:
        marker = tuple(sorted(point.items()))
        if marker not in seen:
            seen.add(marker)
            kept.append(point)
    return kept


# Efimov et al. 2023: the original model (fine-tuned as is), the adjusted model, and the
# adjusted model fine-tuned with the continual alignment loss (alpha = 0.01).
ADJUSTMENT_PAPER_SETTING = {
    "adjust_epochs": 1.0,
    "adjust_learning_rate": 5e-5,
    "adjust_reg_weight": 1.0,
}
CONTINUAL_PAPER_SETTING = {"continual_alpha": 0.01, "continual_reg_weight": 0.01}


def adjustment_points(adjust: dict, continual: dict) -> list[dict]:
    """Baseline, adjusted, adjusted + continual: every point names its hyperparameters so
    that `--set adjust_learning_rate=...` fixes that axis in both adjusted points."""
    return [
        BASELINE,
        {"method": "adjusted", **adjust},
        {"method": "adjusted_continual", **adjust, **continual},
    ]
