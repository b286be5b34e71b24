"""A sweep as a readable file, to save, edit and run again: `--print-config`,
`--save-config FILE`, `--config FILE`, and `--from-run PARENT_RUN_ID` (the file a sweep
logged on its parent run, `xlt_schema.SWEEP_FILE_ARTIFACT`, read by
sweeps/records/logged_sweep.py).

The file holds what defines a sweep: the script it belongs to, its preset, the settings every
trial shares (`base`, `--set` and paths already applied), the grid's points, the seeds and the
sweep's own settings. Loading it rebuilds the script's preset (its paper card, so departures
from the paper are derived again from what the file says) and then takes each of those parts
from the file."""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path

import yaml

from sweeps.planning.sweep_checks import check_baseline
from sweeps.planning.sweep_values import SHARED_TRIAL_SETTINGS, Rule, is_whole, sweep_value
from sweeps.spec.experiment import SWEEP_SETTINGS, SweepSpec, experiment_spec
from sweeps.spec.spaces import hyperparameter_names
from sweeps.spec.strategy import seed_round_strategies, strategy_named
from xlt_core import registry
from xlt_core.config import ADAPTATIONS, coerce_setting
from xlt_core.errors import ConfigError, require_one_of

FORMAT = 1
# The sweep's own settings a file carries besides base, points and seeds.
FILE_SETTINGS = (
    "strategy",
    *(name for name in SWEEP_SETTINGS if name != "seeds"),
    "fixed_axes",
    "seed_rounds",
)
KEYS = ("format", "script", "preset", "base", "points", "seeds", *FILE_SETTINGS)
POINTS_ALLOWED = (
    "a non-empty list of configurations, each a mapping with a method: - method: finetune"
)
# `--set seeds=auto`'s rounds (analysis/sequential.py): at least 2 seeds first, then 1 or more.
SEED_ROUNDS = Rule(
    lambda rounds: (
        isinstance(rounds, list)
        and bool(rounds)
        and all(is_whole(n) and n >= 1 for n in rounds)
        and rounds[0] >= 2
    ),
    "null, or the seeds per round: at least 2 in the first, 1 or more in each later one",
)


def _plain(value):
    """Tuples as lists, anything else JSON cannot hold as text: what YAML writes plainly."""
    return json.loads(json.dumps(value, default=str))


def sweep_text(spec: SweepSpec) -> str:
    """The sweep as the file `--save-config` writes (YAML, keys in `KEYS` order)."""
    document = {
        "format": FORMAT,
        "script": spec.experiment,
        "preset": spec.preset,
        "base": _plain(spec.base),
        "points": _plain(spec.points),
        "seeds": list(spec.seeds),
        **{name: _plain(getattr(spec, name)) for name in FILE_SETTINGS},
    }
    header = f"# The {spec.experiment} sweep: python sweeps/{spec.experiment}.py --config FILE\n"
    return header + yaml.safe_dump(document, sort_keys=False, width=100)


class _RepeatedKey(Exception):
    """A key a sweep file gives twice in one mapping: on `line`, first on `first`."""

    def __init__(self, key, line: int, first: int):
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _OnceEachLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (`_RepeatedKey`): YAML
    keeps the last value and says nothing, so an edit above a key the file holds was lost."""

    def construct_mapping(self, node, deep=False):
        seen = []  # (key, line): a list, for a key YAML cannot hash is refused by YAML itself
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key, line = self.construct_object(key_node, deep=deep), key_node.start_mark.line + 1
            first = next((at for other, at in seen if other == key), None)
            if first is not None:
                raise _RepeatedKey(key, line, first)
            seen.append((key, line))
        return super().construct_mapping(node, deep)


def _document(text: str, source: str) -> dict:
    try:
        document = yaml.load(text, Loader=_OnceEachLoader)  # a SafeLoader
    except _RepeatedKey as repeated:
        raise ConfigError(
            f"{source}:{repeated.line}: {repeated.key}",
            "repeated",
            f"each key once in a mapping (first on line {repeated.first})",
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(source, "(unreadable)", f"a sweep file in YAML ({error})") from None
    if not isinstance(document, dict):
        raise ConfigError(source, type(document).__name__, "a sweep file: a mapping of settings")
    unknown = sorted(set(document) - set(KEYS))
    missing = [
        key
        for key in ("format", "script", "preset", "base", "points", "seeds")
        if key not in document
    ]
    if unknown or missing:
        raise ConfigError(
            f"{source}: {(unknown or missing)[0]}",
            "unknown key" if unknown else "missing",
            f"the keys of a sweep file: {', '.join(KEYS)}",
        )
    if document["format"] != FORMAT:
        raise ConfigError(f"{source}: format", document["format"], f"{FORMAT}")
    return document


def load_sweep(text: str, source: str, script: types.ModuleType) -> SweepSpec:
    """The sweep a file describes, for the script running it; raises ConfigError naming the
    file (`source`) and the key when the file is not a sweep file of this script or a value
    breaks the rules `--set` applies (sweeps/planning/sweep_values.py) or a trial's."""
    document = _document(text, source)
    name = Path(script.__file__).stem
    if document["script"] != name:
        raise ConfigError(
            f"{source}: script",
            document["script"],
            f"{name} (this file is for python sweeps/{document['script']}.py)",
        )
    if document["preset"] not in script.POINTS:
        raise ConfigError(
            f"{source}: preset", document["preset"], f"one of {', '.join(script.POINTS)}"
        )
    spec = experiment_spec(script, document["preset"], None)
    try:
        return _take_settings(spec, document)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error.field}", error.value, error.allowed) from None


def _take_settings(spec: SweepSpec, document: dict) -> SweepSpec:
    """A new spec: `spec` (the preset's) with the file's base, points, seeds and sweep
    settings, each checked; the points' trials validated as the sweep validates them."""
    spec = dataclasses.replace(
        spec,
        base=_settings(
            "base", document["base"], SHARED_TRIAL_SETTINGS, "the settings every trial shares"
        ),
        points=_points(document["points"]),
        seeds=sweep_value("seeds", document["seeds"]),
    )
    settings = {}
    for setting in FILE_SETTINGS:
        if setting not in document:
            continue
        value = document[setting]
        if setting == "fixed_axes":
            value = _fixed_axes(value, spec.points)
        elif setting == "seed_rounds":
            value = None if value is None else tuple(sweep_value(setting, value, SEED_ROUNDS))
        else:
            value = sweep_value(setting, value)
        settings[setting] = value
    spec = dataclasses.replace(spec, **settings)
    if spec.seed_rounds is not None and (
        sum(spec.seed_rounds) != len(spec.seeds) or not strategy_named(spec.strategy).seed_rounds
    ):
        raise ConfigError(
            "seed_rounds",
            list(spec.seed_rounds),
            f"rounds that add up to the {len(spec.seeds)} seeds, with strategy "
            f"{seed_round_strategies()}",
        )
    for index, point in enumerate(spec.points):
        try:
            spec.trial_config(point)
        except ConfigError as error:
            where = f"points[{index}]" if error.field in point else "base"
            raise ConfigError(f"{where}.{error.field}", error.value, error.allowed) from None
    check_baseline(spec)
    return spec


def _flat(where: str, value):
    """A setting's value as a file may hold it: a scalar, or a list of scalars."""
    values = value if isinstance(value, list) else [value]
    if not all(item is None or isinstance(item, (bool, int, float, str)) for item in values):
        raise ConfigError(
            where, value, "a value or a list of values (not a mapping or a nested list)"
        )
    return value


def _settings(where: str, mapping, allowed, kind: str) -> dict:
    """A file's `base` or `fixed_axes`: a mapping whose keys are among `allowed` (`kind` says
    what they are) and whose values are flat."""
    if not isinstance(mapping, dict):
        raise ConfigError(where, mapping, f"a mapping of {kind}")
    for key, value in mapping.items():
        if key not in allowed:
            raise ConfigError(f"{where}.{key}", value, f"{kind}: {', '.join(sorted(allowed))}")
        _flat(f"{where}.{key}", value)
    return mapping


def _points(points) -> list[dict]:
    if not isinstance(points, list) or not points:
        raise ConfigError("points", points, POINTS_ALLOWED)
    for index, point in enumerate(points):
        if not isinstance(point, dict) or "method" not in point:
            raise ConfigError(f"points[{index}]", point, POINTS_ALLOWED)
        _declared(f"points[{index}]", point)
        for key, value in point.items():
            if key == "seed":
                raise ConfigError(
                    f"points[{index}].seed", value, "the sweep's seeds: seeds: [0, 1]"
                )
            _flat(f"points[{index}].{key}", value)
    return points


def _declared(where: str, point: dict) -> None:
    """A point's method and adaptation among those declared: each names its hyperparameters."""
    methods = registry.objective_names()
    if point["method"] not in methods:
        raise ConfigError(
            f"{where}.method",
            point["method"],
            f"one of {', '.join(methods)} (a plugin's objective: its module named in "
            "XLT_PLUGINS, docs/extending.md)",
        )
    require_one_of(f"{where}.adaptation", point.get("adaptation", "none"), ADAPTATIONS)


def _fixed_axes(axes, points: list[dict]) -> dict:
    """The hyperparameters `--set` fixed: each one of the points' (as `--set` requires)."""
    names = {name for point in points for name in hyperparameter_names(point)}
    axes = _settings("fixed_axes", axes, names, "the points' hyperparameters")
    return {key: coerce_setting(key, value) for key, value in axes.items()}


def read_sweep_file(path: str, script: types.ModuleType) -> SweepSpec:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError("--config", path, f"a readable sweep file ({error.strerror})") from None
    return load_sweep(text, path, script)
