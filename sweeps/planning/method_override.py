"""`--set method=NAME` on a sweep: another objective in the sweep's place, no new script.

The compared points (every point but the baseline, plain fine-tuning) are replaced by NAME's
grid; the baseline stays. A compared point's other settings that apply to NAME stay too
(ear_source_language's `source_lang`), so the sweep keeps its design; the old method's
hyperparameters go. NAME's grid, from the search ranges of its declaration
(`spaces.SEARCH_RANGES`), each range's values being a choice's values as given or a float
range's low, middle and high (`range_values`): the centre (every range's middle value), then
one range at a time its other values, the others at the centre (the shape of the EAR paper's
grid: one-factor sweeps, not a cross product). A hyperparameter given with `--set` is fixed to
that value; one with neither keeps TrialConfig's default. A range value no trial of this sweep
can take (a layer deeper than the model) is left out, as strategy `search` leaves it out. With
strategy `search` NAME has the centre alone: phase 1 samples the ranges from there (a grid of
starting points would take its samples).

A paper preset is its card's experiment, so it is refused: the smoke preset (or a sweep file
of it) takes another method.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from sweeps.spec import spaces
from sweeps.spec.experiment import SweepSpec
from sweeps.spec.strategy import strategy_named
from xlt_core import registry
from xlt_core.config import coerce_setting
from xlt_core.errors import ConfigError


def range_values(bounds: tuple) -> tuple:
    """A search range's grid values: a choice's values as given; a float range's low, middle
    (on its step) and high, e.g. ("float", 0.1, 2.0, 0.1) -> (0.1, 1.0, 2.0)."""
    if bounds[0] == "choice":
        return tuple(bounds[1])
    # Decimal: 0.1 + 9 * 0.1 is 1.0, not 0.9999999999999999.
    low, high, step = (Decimal(repr(value)) for value in bounds[1:4])
    middle = low + (high - low) // step // 2 * step
    return tuple(dict.fromkeys(float(value) for value in (low, middle, high)))


def replace_method(spec: SweepSpec, method: str, fixed_text: dict[str, str]) -> SweepSpec:
    """A new spec: `spec`'s with its compared points replaced by `method`'s grid, `fixed_text`
    (`--set` values of `method`'s hyperparameters) fixing their axes. Raises ConfigError on a paper
    preset, a sweep of adaptations, an unknown method, a hyperparameter `method` lacks or a
    value its trials refuse."""
    _check_sweep(spec, method)
    old = sorted({point["method"] for point in _compared(spec)})
    fixed = _fixed_axes(spec, method, fixed_text, old)
    designs = spaces.unique([_design(point) for point in _compared(spec)])
    probe = {"method": method, **designs[0], **fixed}
    error = _refusal(spec, probe)
    if error is not None and error.field in fixed:  # a bad --set value, before the ranges
        raise error
    axes = {
        name: _axis_values(spec, probe, method, name, bounds)
        for name, bounds in spaces.SEARCH_RANGES.get(method, {}).items()
        if name not in fixed
    }
    centre = {name: values[len(values) // 2] for name, values in axes.items()}
    varied = [
        {**centre, name: value}
        for name, values in axes.items()
        for value in values
        if value != centre[name]
    ]
    # A strategy that samples its points from the ranges starts from the centre alone.
    samples = strategy_named(spec.strategy).samples_points
    settings = [centre] if samples else [centre, *varied]
    starts = [_applying(spec, {"method": method, **d, **fixed}, centre, method) for d in designs]
    grid = [{**start, **values} for start in starts for values in settings]
    baseline = [point for point in spec.points if point["method"] == spaces.BASELINE["method"]]
    return dataclasses.replace(
        spec,
        points=spaces.unique([*baseline, *grid]),
        fixed_axes=fixed,
        method_line=_method_line(method, old, axes, centre, fixed, samples),
    )


def _fixed_axes(spec: SweepSpec, method: str, fixed_text: dict[str, str], old: list) -> dict:
    """The sweep's fixed axes (from its file) and the `--set` ones, each `method`'s."""
    names = spaces.hyperparameter_names({"method": method})
    fixed = {**spec.fixed_axes, **{k: coerce_setting(k, v) for k, v in fixed_text.items()}}
    for name, value in fixed.items():
        if name not in names:
            raise ConfigError(
                name,
                value,
                f"a hyperparameter of method {method} ({', '.join(names) or 'none'}), which "
                f"--set method={method} puts in place of {', '.join(old)}",
            )
    return fixed


def _design(point: dict) -> dict:
    """What a compared point sets besides its method and its hyperparameters."""
    own = {"method", *spaces.hyperparameter_names(point)}
    return {key: value for key, value in point.items() if key not in own}


def _refusal(spec: SweepSpec, point: dict) -> ConfigError | None:
    """Why `point`'s trial is refused (None: it is not)."""
    try:
        spec.trial_config(point)
    except ConfigError as error:
        return error
    return None


def _axis_values(spec: SweepSpec, probe: dict, method: str, name: str, bounds: tuple) -> tuple:
    """`range_values(bounds)` less those a trial of this sweep refuses (`probe` with it; an
    error naming another setting is the later checks' to name)."""
    values = range_values(bounds)
    errors = [_refusal(spec, {**probe, name: value}) for value in values]
    kept = tuple(v for v, error in zip(values, errors) if error is None or error.field != name)
    if not kept:
        raise ConfigError(
            name,
            ",".join(map(str, values)),
            f"a search range of {method} with a value this sweep's trials take "
            f"(--set {name}=VALUE fixes it)",
        )
    return kept


def _applying(spec: SweepSpec, point: dict, centre: dict, method: str) -> dict:
    """`point` less the design settings that do not apply to `method` (`dictionary_scale`
    without synonyms), checked at the centre: a default its trial refuses is named."""
    try:
        config = spec.trial_config({**point, **centre})
    except ConfigError as error:
        if error.field not in spaces.hyperparameter_names(point):
            raise
        raise ConfigError(
            error.field,
            error.value,
            f"{error.allowed}; {error.value} is {method}'s default: --set {error.field}=VALUE",
        ) from None
    applies = {"method", *config.applicable_settings()}
    return {key: value for key, value in point.items() if key in applies}


def _method_line(method, old, axes, centre, fixed, samples: bool) -> str:
    """What the dry run says of the replaced method: where its points' values come from."""
    others = {name: [v for v in values if v != centre[name]] for name, values in axes.items()}
    spread = "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in others.items() if v)
    points = (
        f"its search ranges' centre ({_pairs(centre)})"
        + (f", then one range at a time: {spread}" if spread and not samples else "")
        if axes
        else "one, no search range to vary"
    )
    return (
        f"Method: {method} in place of {', '.join(old)} (--set method={method}), the baseline "
        f"kept; its points: {points}; fixed by --set: {_pairs(fixed) or 'none'}; other "
        "hyperparameters: TrialConfig's defaults"
    )


def _pairs(values: dict) -> str:
    return ", ".join(f"{name}={value}" for name, value in values.items())


def _check_sweep(spec: SweepSpec, method: str) -> None:
    """Refuse what `--set method=` cannot honestly replace."""
    if spec.paper_card is not None or spec.preset != "smoke":
        raise ConfigError(
            "method",
            method,
            f"not with preset {spec.preset}: a paper preset runs its card's experiment and "
            "methods; --set method= takes the smoke preset (--preset smoke)",
        )
    adapted = sorted(
        {p["adaptation"] for p in spec.points if p.get("adaptation", "none") != "none"}
    )
    if adapted or not _compared(spec):
        what = f"adaptations ({', '.join(adapted)}) of" if adapted else "nothing with"
        raise ConfigError(
            "method",
            method,
            f"a sweep that compares objectives; {spec.experiment} compares {what} "
            f"{spaces.BASELINE['method']}",
        )
    others = [name for name in registry.objective_names() if name != spaces.BASELINE["method"]]
    if method not in others:
        raise ConfigError(
            "method",
            method,
            f"an objective to compare with the baseline ({spaces.BASELINE['method']}): one of "
            f"{', '.join(others)}",
        )


def _compared(spec: SweepSpec) -> list[dict]:
    return [point for point in spec.points if point["method"] != spaces.BASELINE["method"]]
