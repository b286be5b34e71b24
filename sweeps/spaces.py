"""Each paper's search space as data: a list of method configurations ("points").

The EAR paper's grid is not a cross product but three one-factor sweeps around its
chosen setting, so a space is a list of points, not a dict of axes.
"""

from __future__ import annotations

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


def override_axis(points: list[dict], key: str, value) -> list[dict]:
    """Fix one hyperparameter in every point that has it (`--set beta=0.1`), merging the
    points that become equal."""
    return unique([{**point, key: value} if key in point else point for point in points])


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
ADJUSTMENT_PAPER_SETTING = {"adjust_epochs": 1.0, "adjust_learning_rate": 5e-5, "adjust_reg_weight": 1.0}
CONTINUAL_PAPER_SETTING = {"continual_alpha": 0.01, "continual_reg_weight": 0.01}


def adjustment_points(adjust: dict, continual: dict) -> list[dict]:
    """Baseline, adjusted, adjusted + continual: every point names its hyperparameters so
    that `--set adjust_learning_rate=...` fixes that axis in both adjusted points."""
    return [BASELINE, {"method": "adjusted", **adjust}, {"method": "adjusted_continual", **adjust, **continual}]
