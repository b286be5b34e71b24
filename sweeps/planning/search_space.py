"""The search space of strategy `search`, from the spec alone (no Optuna, no Ray): which
methods it samples, the axes a card or `--set` fixes, and each hyperparameter's range with
the values this model cannot take dropped. The dry run, the checks and the search itself
(sweeps/running/search.py) read it here."""

from __future__ import annotations

from typing import Callable, Mapping

from sweeps.spec.experiment import SweepSpec
from sweeps.spec.spaces import SEARCH_RANGES
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_resources
from xlt_schema import NO_ADAPTATION


def searched_methods(spec: SweepSpec) -> list[str]:
    """The methods with hyperparameters among the sweep's points (the baseline has none).
    Search ranges are per training objective: a point with an adaptation is refused."""
    methods = set()
    for config in spec.configs():
        if config.adaptation != NO_ADAPTATION:
            raise ConfigError(
                "--strategy",
                "search",
                "a sweep of training objectives without adaptation (search ranges are per "
                f"method; this sweep has adaptation {config.adaptation}): use --strategy grid",
            )
        if config.hyperparameter_names():
            methods.add(config.method)
    return sorted(methods)


def fixed_axes(spec: SweepSpec) -> dict:
    """The hyperparameters every sampled configuration keeps: those a paper preset's card
    fixes (ding2022's m = 3 on XNLI, 10 on PAWS-X), then the `--set` ones, which win (and
    are then a departure the dry run prints)."""
    card = spec.paper_card
    fixed = {} if card is None else card.point_settings(spec.experiment, spec.preset)
    return {**fixed, **spec.fixed_axes}


def search_ranges(
    spec: SweepSpec, fits: Callable[[TrialConfig], None] = check_resources
) -> dict[str, dict[str, tuple]]:
    """Per searched method, the range of each hyperparameter: the card's and `--set` values
    fix their axis (`fixed_axes`), and choices this model cannot take (a layer deeper than
    the model) are dropped: a value whose trial is invalid or that `fits` refuses (the dry
    run passes a check that needs no network). Raises ConfigError when a method has no
    ranges or a range is left empty or invalid."""
    methods = searched_methods(spec)
    if not methods:
        raise ConfigError(
            "--strategy", "search", "a sweep with a method that has hyperparameters to search"
        )
    ranges: dict[str, dict[str, tuple]] = {}
    fixed = fixed_axes(spec)
    for method in methods:
        if method not in SEARCH_RANGES:
            raise ConfigError(
                "--strategy",
                "search",
                "a method with search ranges in sweeps/spec/spaces.py SEARCH_RANGES "
                f"({', '.join(sorted(SEARCH_RANGES))}); {method} has none",
            )
        ranges[method] = {}
        # Each value is checked within one of the sweep's own (valid) points of the method.
        point = next(point for point in spec.points if point["method"] == method)
        for name, bounds in SEARCH_RANGES[method].items():
            if name in fixed:
                bounds = ("choice", (fixed[name],))
            values = bounds[1] if bounds[0] == "choice" else bounds[1:3]
            valid = [value for value in values if _valid(spec, point, name, value, fits)]
            if bounds[0] == "choice" and not valid:
                raise ConfigError(
                    name,
                    ",".join(map(str, values)),
                    f"at least one value that fits the model (method {method})",
                )
            if bounds[0] == "float" and len(valid) < 2:
                raise ConfigError(
                    name,
                    f"{bounds[1]}..{bounds[2]}",
                    f"a range whose ends are both valid (method {method})",
                )
            ranges[method][name] = ("choice", tuple(valid)) if bounds[0] == "choice" else bounds
    _check_shared_names(ranges)
    return ranges


def _valid(spec: SweepSpec, point: Mapping, name: str, value, fits) -> bool:
    """Whether `point` with `name` set to `value` is a trial this model can run (`fits`)."""
    try:
        fits(spec.trial_config(point, **{name: value}))
    except ConfigError:
        return False
    return True


def in_range(value, bounds: tuple) -> bool:
    """Whether `value` is one of a choice's values or within a float range's bounds."""
    if bounds[0] == "choice":
        return value in bounds[1]
    return value is not None and bounds[1] <= value <= bounds[2]


def _check_shared_names(ranges: Mapping[str, Mapping[str, tuple]]) -> None:
    # Optuna refuses one parameter name with two different sets of choices.
    seen: dict[str, tuple] = {}
    for method, names in ranges.items():
        for name, bounds in names.items():
            if seen.setdefault(name, bounds) != bounds:
                raise ConfigError(
                    name,
                    bounds,
                    f"the same search range in every method that has it ({method} differs)",
                )
