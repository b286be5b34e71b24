"""Search spaces as data: a sweep's space is a list of configurations ("points"), each a
method (the training objective), optionally an adaptation of the encoder, and their
hyperparameters. A list, not a dict of axes, because the EAR paper's grid is three
one-factor sweeps, not a cross product. The papers' own points live in their sweep scripts
(`sweeps/<name>.py`); this module holds only what works on any of them.
"""

from __future__ import annotations

from xlt_core import registry
from xlt_core.config import ADAPTATION_HYPERPARAMETERS, METHOD_HYPERPARAMETERS
from xlt_core.errors import ConfigError

# Plain fine-tuning of the original encoder: the baseline of every sweep.
BASELINE = {"method": "finetune"}

# The ranges strategy `search` explores per method, as data: ("float", low, high, step) or
# ("choice", values), from the settings of the objectives declared `searched`
# (xlt_core/objectives/declarations.py), read at each use: an objective registered after
# this import is in it.
SEARCH_RANGES = registry.DerivedTable(
    lambda: tuple(
        name for name in registry.objective_names() if registry.objective(name).search_ranges
    ),
    lambda name: dict(registry.objective(name).search_ranges),
)


def hyperparameter_names(point: dict) -> tuple[str, ...]:
    """The hyperparameters a point has: its method's, then its adaptation's."""
    adaptation = point.get("adaptation", "none")
    return METHOD_HYPERPARAMETERS[point["method"]] + ADAPTATION_HYPERPARAMETERS[adaptation]


def with_setting(points: list[dict], key: str, value) -> list[dict]:
    """Every point whose method or adaptation has hyperparameter `key` set to `value`
    (e.g. EAR's m=10 on PAWS-X); the other points as they are."""
    return [
        {**point, key: value} if key in hyperparameter_names(point) else point for point in points
    ]


def override_axis(points: list[dict], key: str, value) -> list[dict]:
    """Fix one hyperparameter in every point whose method or adaptation has it
    (`--set beta=0.1`, `--set adjust_learning_rate=1e-4`), merging the points that become
    equal. A hyperparameter of none of the sweep's methods and adaptations is refused: it
    would silently change nothing."""
    if not any(key in hyperparameter_names(point) for point in points):
        methods = sorted({point["method"] for point in points})
        adaptations = sorted({point.get("adaptation", "none") for point in points})
        owners = [m for m, names in METHOD_HYPERPARAMETERS.items() if key in names]
        owners += [
            f"adaptation {a}" for a, names in ADAPTATION_HYPERPARAMETERS.items() if key in names
        ]
        raise ConfigError(
            key,
            value,
            f"a hyperparameter of this sweep's methods ({', '.join(methods)}) or adaptations "
            f"({', '.join(adaptations)}); {key} belongs to {', '.join(owners)}",
        )
    return unique(with_setting(points, key, value))


def unique(points: list[dict]) -> list[dict]:
    """The points in order, each configuration once."""
    seen, kept = set(), []
    for point in points:
        marker = tuple(sorted(point.items()))
        if marker not in seen:
            seen.add(marker)
            kept.append(point)
    return kept
