"""Paper cards: what each paper fixes, with its source, and where this project departs from it.

A card is package data, `sweeps/papers/<paper>.yaml` (format: docs/papers.md). Its `settings`
are shared by every experiment of the paper; `experiments.<sweep script>` adds the seeds and
the settings of one experiment; `presets.<name>` (e.g. `paper-xlmr`) adds the settings of a
preset other than `paper`, for the experiments it lists; `departures` are the settings the
project changes on purpose (or chooses where the paper is silent), each with the value the
trials get (`ours`) and the reason. A setting may carry, next to the paper's value, the
value of the authors' released code (`released: {value, source}`, the source naming
repository@commit file:line); a preset with `code` (`released`) runs those values, each one
that differs from the paper's a departure whose reason cites the code. A `paper` preset is
built from its card:

    card = load_card("ding2022")
    base = card.trial_settings("ear_xnli")  # TrialConfig settings, departures applied
    card.point_settings("ear_xnli")  # {"m": 3}: set in every point that has m
    seeds = card.seeds("ear_xnli")

(`sweeps/spec/experiment.py`'s `paper_settings`, `paper_points` and `paper_seeds` do it for a
sweep script.)

Torch-free: the dry run imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from xlt_core.config import HYPERPARAMETER_NAMES, coerce_setting, setting_names
from xlt_core.errors import ConfigError
from xlt_schema import SELECTION_ON_TEST

CARDS_DIR = Path(__file__).parents[1] / "papers"
SWEEPS_DIR = Path(__file__).parents[1]
PAPER_PRESET = "paper"
# The preset of the authors' released code, where a card has one.
RELEASED_PRESET = "released"
# A departure may change the sweep's seeds as well as a trial setting.
SEEDS = "seeds"
# Trial settings a card never fixes: the sweep script's points and the sweep's seeds do.
NOT_ON_CARDS = ("method", "adaptation", "seed")
CARD_SETTINGS = tuple(sorted(set(setting_names()) - set(NOT_ON_CARDS)))
TOP_KEYS = (
    "paper",
    "citation",
    "text",
    "seeds",
    "settings",
    "experiments",
    "presets",
    "departures",
)
EXPERIMENT_KEYS = ("seeds", "settings")
PRESET_KEYS = ("experiments", "settings", "code", "test_selection")
SETTING_KEYS = ("value", "source", "released")
# A preset's released code: owner/repository@commit (7 to 40 hex digits).
CODE = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40}")
DEPARTURE_KEYS = ("setting", "paper", "ours", "reason", "experiments", "presets")


@dataclass(frozen=True)
class Setting:
    """A value the paper (or its released code, XTREME, HuggingFace) fixes, and where it says so;
    `released`: the authors' released code's value and its file line, where it was read."""

    value: Any
    source: str
    released: Setting | None = None


@dataclass(frozen=True)
class Departure:
    """A setting the project changes on purpose: the paper's value, ours, and why. `ours` is
    the value trials get (None when the departure is no trial setting, e.g. the aligner);
    empty `experiments` / `presets`: every experiment / preset of the card."""

    setting: str
    paper: str
    ours: Any
    reason: str
    experiments: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()

    def applies(self, experiment: str, preset: str) -> bool:
        return (not self.experiments or experiment in self.experiments) and (
            not self.presets or preset in self.presets
        )

    def to_dict(self) -> dict:
        """What the parent run's `paper/departures.json` holds per departure."""
        ours = list(self.ours) if isinstance(self.ours, tuple) else self.ours
        return {"setting": self.setting, "paper": self.paper, "ours": ours, "reason": self.reason}

    def line(self) -> str:
        """`precision: fp32 -> bf16; why: ...`, as the dry run prints it."""
        ours = "(not a trial setting)" if self.ours is None else value_text(self.ours)
        return f"{self.setting}: {self.paper} -> {ours}; why: {self.reason}"


@dataclass(frozen=True)
class Section:
    """The settings (and seeds) one part of a card adds: an experiment's or a preset's."""

    settings: dict[str, Setting] = field(default_factory=dict)
    seeds: Setting | None = None
    experiments: tuple[str, ...] = ()  # a preset's experiments
    code: str | None = None  # a preset's released code (`owner/repo@commit`): it runs `released`
    # Where a released preset's code keeps checkpoints by test: `--set selection_dev=test`
    # may reproduce it (sweeps/planning/sweep_checks.py refuses it elsewhere).
    test_selection: str | None = None


@dataclass(frozen=True)
class PaperCard:
    paper: str
    citation: str
    text: str
    path: Path
    shared: Section
    experiments: dict[str, Section]
    presets: dict[str, Section]
    all_departures: tuple[Departure, ...]

    def settings(self, experiment: str, preset: str = PAPER_PRESET) -> dict[str, Setting]:
        """Every setting the paper fixes for a preset of an experiment (the paper's values):
        the shared ones, then the experiment's, then the preset's (later ones win)."""
        return {
            **self.shared.settings,
            **self.experiments[self._experiment(experiment, preset)].settings,
            **self._preset(preset).settings,
        }

    def departures(self, experiment: str, preset: str = PAPER_PRESET) -> list[Departure]:
        """The card's departures for a preset, after (for a preset of released code) each
        released value that differs from the paper's."""
        self._experiment(experiment, preset)
        declared = [d for d in self.all_departures if d.applies(experiment, preset)]
        return [*released_departures(self, experiment, preset), *declared]

    def code(self, preset: str) -> str | None:
        """The released code a preset runs (`owner/repo@commit`); None for the paper's."""
        return self._preset(preset).code

    def test_selection(self, preset: str) -> str | None:
        """Where the preset's released code keeps checkpoints by test (its file line); None
        where it does not, and for the paper's preset."""
        return self._preset(preset).test_selection

    def trial_settings(self, experiment: str, preset: str = PAPER_PRESET) -> dict:
        """What every trial of the preset gets: the card's trial settings (hyperparameters
        apart: `point_settings`), each departure's `ours` applied."""
        return {k: v for k, v in self.planned(experiment, preset).items() if _is_trial_setting(k)}

    def point_settings(self, experiment: str, preset: str = PAPER_PRESET) -> dict:
        """Hyperparameters the paper fixes for every point that has them (e.g. m = 3)."""
        return {
            k: v for k, v in self.planned(experiment, preset).items() if k in HYPERPARAMETER_NAMES
        }

    def seeds(self, experiment: str, preset: str = PAPER_PRESET) -> list[int]:
        planned = self.planned(experiment, preset)
        if SEEDS not in planned:
            raise ConfigError(
                f"{self.path}: experiments.{experiment}.seeds",
                None,
                "seeds for the experiment (or shared `seeds`), or a departure for `seeds`",
            )
        return list(planned[SEEDS])

    def planned(self, experiment: str, preset: str) -> dict:
        """Setting -> the value the preset's trials get (seeds included), lists for tuples."""
        section = self.experiments[self._experiment(experiment, preset)]
        seeds = section.seeds or self.shared.seeds
        values = {name: s.value for name, s in self.settings(experiment, preset).items()}
        if seeds is not None:
            values[SEEDS] = seeds.value
        for departure in self.departures(experiment, preset):
            if departure.ours is not None:
                values[departure.setting] = departure.ours
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}

    def _experiment(self, experiment: str, preset: str) -> str:
        if experiment not in self.experiments:
            raise ConfigError(
                f"{self.path}: experiment",
                experiment,
                f"one of this card's experiments: {', '.join(self.experiments)}",
            )
        scope = self._preset(preset).experiments
        if scope and experiment not in scope:
            raise ConfigError(
                f"{self.path}: presets.{preset}",
                experiment,
                f"an experiment of preset {preset}: {', '.join(scope)}",
            )
        return experiment

    def _preset(self, preset: str) -> Section:
        if preset == PAPER_PRESET:
            return Section()
        if preset not in self.presets:
            raise ConfigError(
                f"{self.path}: preset",
                preset,
                f"one of this card's presets: {', '.join((PAPER_PRESET, *self.presets))}",
            )
        return self.presets[preset]


def released_departures(card: PaperCard, experiment: str, preset: str) -> list[Departure]:
    """For a preset of released code: each setting whose released value is not the paper's,
    a departure from the paper with both sources (none for any other preset)."""
    if card.code(preset) is None:
        return []
    return [
        Departure(
            name,
            f"{value_text(setting.value)} ({setting.source})",
            setting.released.value,
            f"the released code: {setting.released.source}",
        )
        for name, setting in card.settings(experiment, preset).items()
        if setting.released is not None and not _same(name, setting.released.value, setting.value)
    ]


def preset_difference_lines(card: PaperCard, experiment: str, preset: str) -> list[str]:
    """For a preset of released code, every setting its trials get that `--preset paper`'s do
    not, each with its source under both presets (the dry run prints them); [] otherwise."""
    if card.code(preset) is None:
        return []
    planned = {p: card.planned(experiment, p) for p in (PAPER_PRESET, preset)}
    names = [
        name
        for name in dict.fromkeys([*planned[PAPER_PRESET], *planned[preset]])
        if not all(name in values for values in planned.values())
        or not _same(name, planned[PAPER_PRESET][name], planned[preset][name])
    ]
    lines = [f"Settings that differ from --preset {PAPER_PRESET}: {len(names)}"]
    for name in names:
        both = [f"{p} {_sourced(card, experiment, p, name, planned[p])}" for p in planned]
        lines.append(f"  - {name}: {' | '.join(both)}")
    return lines


def _sourced(card: PaperCard, experiment: str, preset: str, name: str, planned: dict) -> str:
    """A planned value with where it comes from: the departure that sets it (for released
    code, the code's file line), else the card's source."""
    if name not in planned:
        return "(the card sets none)"
    value = value_text(planned[name])
    released = {d.setting for d in released_departures(card, experiment, preset)}
    setters = [
        d for d in card.departures(experiment, preset) if d.setting == name and d.ours is not None
    ]
    if setters:
        why = setters[-1].reason
        return f"{value} ({why if name in released else f'departure: {why}'})"
    if name == SEEDS:
        section = card.experiments[experiment].seeds or card.shared.seeds
        return f"{value} ({section.source})"
    setting = card.settings(experiment, preset)[name]
    if card.code(preset) is not None and setting.released is not None:
        setting = setting.released
    return f"{value} ({setting.source})"


def sweep_departures(
    card: PaperCard, experiment: str, preset: str, base: dict, seeds: list[int], fixed_axes: dict
) -> list[Departure]:
    """The departures a sweep of a card's preset really makes, after `--set`: the card's
    (less those set back to the paper's value; with the new value where `--set` changed
    `ours`), and every other card setting `--set` changed. `base`: the sweep's trial
    settings; `fixed_axes`: the hyperparameters `--set` fixed in every point."""

    def running(name: str, planned):
        """What the sweep runs for a setting the card plans."""
        if name == SEEDS:
            return seeds
        if name in HYPERPARAMETER_NAMES:
            return fixed_axes.get(name, planned)
        return base.get(name, planned)

    actual = {
        name: running(name, value) for name, value in card.planned(experiment, preset).items()
    }
    paper = {name: setting.value for name, setting in card.settings(experiment, preset).items()}
    found = []
    for departure in card.departures(experiment, preset):
        name = departure.setting
        if departure.ours is None or _same(name, actual[name], departure.ours):
            found.append(departure)
        elif not (name in paper and _same(name, actual[name], paper[name])):
            why = f"--set on the command line (the card's choice, {value_text(departure.ours)}: "
            found.append(
                dataclasses.replace(
                    departure, ours=actual[name], reason=f"{why}{departure.reason})"
                )
            )
    declared = {departure.setting for departure in card.departures(experiment, preset)}
    for name, value in paper.items():
        if name not in declared and not _same(name, actual[name], value):
            found.append(
                Departure(name, value_text(value), actual[name], "--set on the command line")
            )
    if base.get("selection_dev") == SELECTION_ON_TEST:
        found.append(test_selection_departure(card.test_selection(preset)))
    return found


def test_selection_departure(source: str | None) -> Departure:
    """What a sweep that keeps its checkpoints by test (`--set selection_dev=test`) departs
    from, and why the dry run and the parent run say so."""
    return Departure(
        "selection_dev",
        "checkpoints chosen on dev, never on test (the zero-shot protocol)",
        SELECTION_ON_TEST,
        "LEAKS TEST: --set on the command line, the released code's rule "
        f"({source}): each trial keeps the checkpoint with the best accuracy pooled over its "
        "test sets, so its test scores are selected on test; the report marks every number "
        "'selected on test, as the released scripts do: not a claim' and its verdict claims "
        "nothing",
    )


def _same(name: str, a, b) -> bool:
    if name == SEEDS:
        return list(a) == list(b)
    return coerce_setting(name, a) == coerce_setting(name, b)


def load_card(paper: str, directory: Path | str = CARDS_DIR) -> PaperCard:
    """Read and check `<directory>/<paper>.yaml`; ConfigError names the file, the key and
    what is allowed."""
    return _load(paper, Path(directory))


@functools.lru_cache(maxsize=None)
def _load(paper: str, directory: Path) -> PaperCard:
    path = directory / f"{paper}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in directory.glob("*.yaml"))
        raise ConfigError(
            "paper card", paper, f"one of {', '.join(known) or '(none)'} in {directory}"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(str(path), "(unreadable YAML)", f"valid YAML: {error}") from None
    data = _mapping(path, "(top level)", data, TOP_KEYS)
    for key in ("paper", "citation", "text"):
        _text_field(path, key, data.get(key))
    if data["paper"] != paper:
        raise ConfigError(f"{path}: paper", data["paper"], f"the file's name, {paper}")
    experiments = {
        name: _section(path, f"experiments.{name}", body, EXPERIMENT_KEYS)
        for name, body in _mapping(path, "experiments", data.get("experiments"), None).items()
    }
    for name in experiments:
        if not (SWEEPS_DIR / f"{name}.py").is_file():
            raise ConfigError(
                f"{path}: experiments", name, "the name of a sweep script, sweeps/<name>.py"
            )
    presets = {
        name: _section(path, f"presets.{name}", body, PRESET_KEYS, experiments)
        for name, body in _mapping(path, "presets", data.get("presets") or {}, None).items()
    }
    departures = tuple(
        _departure(path, i, body, experiments, presets)
        for i, body in enumerate(data.get("departures") or [])
    )
    shared = _section(
        path,
        "(top level)",
        {k: data[k] for k in ("seeds", "settings") if k in data},
        EXPERIMENT_KEYS,
    )
    return PaperCard(
        data["paper"],
        data["citation"],
        data["text"],
        path,
        shared,
        experiments,
        presets,
        departures,
    )


def _section(path: Path, where: str, body, keys: tuple, experiments: dict | None = None) -> Section:
    body = _mapping(path, where, body, keys)
    settings = {
        name: _setting(path, f"{where}.settings.{name}", name, value)
        for name, value in _mapping(
            path, f"{where}.settings", body.get("settings") or {}, None
        ).items()
    }
    seeds = _setting(path, f"{where}.seeds", SEEDS, body["seeds"]) if "seeds" in body else None
    scope = tuple(_names(path, f"{where}.experiments", body.get("experiments"), experiments or {}))
    code = body.get("code")
    if code is not None and not (isinstance(code, str) and CODE.fullmatch(code)):
        raise ConfigError(
            f"{path}: {where}.code", code, "the released code as owner/repository@commit"
        )
    test_selection = body.get("test_selection")
    if test_selection is not None and not (isinstance(test_selection, str) and test_selection):
        raise ConfigError(
            f"{path}: {where}.test_selection",
            test_selection,
            "the released code's file line where it keeps checkpoints by test",
        )
    return Section(settings, seeds, scope, code, test_selection)


def _setting(path: Path, where: str, name: str, body, keys: tuple = SETTING_KEYS) -> Setting:
    if name != SEEDS and name not in CARD_SETTINGS:
        raise ConfigError(
            f"{path}: {where}", name, f"a TrialConfig setting, one of {', '.join(CARD_SETTINGS)}"
        )
    body = _mapping(path, where, body, keys)
    if "value" not in body:
        raise ConfigError(f"{path}: {where}", body, "a mapping with `value` and `source`")
    source = body.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ConfigError(
            f"{path}: {where}.source",
            source,
            "a non-empty source: a quote with its line of the paper text, or the released "
            "code / XTREME / HuggingFace file it comes from",
        )
    released = None
    if "released" in body:  # the released code's value: a value and a source, no deeper
        released = _setting(path, f"{where}.released", name, body["released"], ("value", "source"))
    return Setting(_value(path, where, name, body["value"]), source.strip(), released)


def _departure(path: Path, index: int, body, experiments: dict, presets: dict) -> Departure:
    where = f"departures[{index}]"
    body = _mapping(path, where, body, DEPARTURE_KEYS)
    for key in ("setting", "paper", "reason"):
        _text_field(path, f"{where}.{key}", body.get(key))
    name = body["setting"]
    is_setting = name == SEEDS or name in CARD_SETTINGS
    if is_setting and body.get("ours") is None:
        raise ConfigError(
            f"{path}: {where}.ours",
            None,
            f"the value the trials get: {name} is a trial setting (leave `ours` out only for a "
            "departure that is no trial setting, e.g. the word aligner)",
        )
    if not is_setting and body.get("ours") is not None:
        raise ConfigError(
            f"{path}: {where}.setting", name, "a TrialConfig setting or seeds when `ours` is given"
        )
    ours = _value(path, where, name, body["ours"]) if is_setting else None
    return Departure(
        name,
        str(body["paper"]).strip(),
        ours,
        str(body["reason"]).strip(),
        tuple(_names(path, f"{where}.experiments", body.get("experiments"), experiments)),
        tuple(_names(path, f"{where}.presets", body.get("presets"), {PAPER_PRESET: 1, **presets})),
    )


def _value(path: Path, where: str, name: str, value):
    """The value in its TrialConfig type (seeds: distinct non-negative integers)."""
    if name == SEEDS:
        integers = isinstance(value, list) and all(isinstance(s, int) and s >= 0 for s in value)
        if not (integers and value and len(set(value)) == len(value)):
            raise ConfigError(
                f"{path}: {where}", value, "a list of distinct non-negative integers, e.g. [1, 2]"
            )
        return tuple(value)
    try:
        return coerce_setting(name, value)
    except ConfigError as error:
        raise ConfigError(f"{path}: {where}", value, error.allowed) from None


def _mapping(path: Path, where: str, body, keys: tuple | None) -> dict:
    if not isinstance(body, dict):
        raise ConfigError(f"{path}: {where}", body, "a mapping")
    unknown = sorted(set(body) - set(keys)) if keys is not None else []
    if unknown:
        raise ConfigError(f"{path}: {where}", unknown[0], f"one of the keys {', '.join(keys)}")
    return body


def _names(path: Path, where: str, names, known: dict) -> list[str]:
    if names is None:
        return []
    if not isinstance(names, list) or not names:
        raise ConfigError(f"{path}: {where}", names, f"a non-empty list of {', '.join(known)}")
    for name in names:
        if name not in known:
            raise ConfigError(f"{path}: {where}", name, f"one of {', '.join(known)}")
    return names


def _text_field(path: Path, where: str, value) -> None:
    if not isinstance(value, (str, int, float)) or not str(value).strip():
        raise ConfigError(f"{path}: {where}", value, "a non-empty text")


def _is_trial_setting(name: str) -> bool:
    return name != SEEDS and name not in HYPERPARAMETER_NAMES


def value_text(value) -> str:
    """A setting's value as the dry run prints it: `2e-05`, `1`, `1,2,3`."""
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)
