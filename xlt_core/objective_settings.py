"""An objective's own settings: the fields of a small frozen dataclass beside its declaration.

`setting(default, ...)` makes one such field: what it allows (bounds or choices), its range for
strategy `search`, and where its default comes from (a paper's line, released code). The
registry reads a declaration's class (`settings_of`): the objective's hyperparameters and
search ranges come from it, and `TrialConfig` checks a value against it (`Setting.check`).
A setting several objectives share is declared once, in a dataclass their classes inherit.

Torch-free, and imports no project module but `errors`: the registry imports it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

from xlt_core.errors import ConfigError, require_one_of

TYPES = ("int", "float", "str", "bool")
_METADATA_KEY = "xlt_setting"
# Each `setting()` call takes the next number: settings are listed in the order they were
# declared (a shared one where it was first declared), whichever classes inherit them.
_declaration_order = itertools.count()


@dataclasses.dataclass(frozen=True)
class Setting:
    """One declared setting: its name and type (the field's), default and what it allows."""

    name: str
    type: str  # one of TYPES
    default: Any
    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None
    choices: tuple | None = None
    # Strategy `search`'s range: ("float", low, high, step) or ("choice", values).
    search: tuple | None = None
    source: str = ""  # where the default comes from
    # False: a setting a study varies (config.STUDY_SETTINGS), not a hyperparameter.
    hyperparameter: bool = True
    order: int = 0

    def rule(self) -> tuple:
        """What two declarations of this name must agree on."""
        bounds = (self.at_least, self.above, self.at_most, self.choices)
        return (self.type, self.default, bounds, self.hyperparameter)

    def allowed(self) -> str:
        """What `check` allows, in words (as `--help` and errors give it); "" for any value of
        its type."""
        if self.choices is not None:
            return f"one of {', '.join(map(str, self.choices))}"
        if self.type == "bool":
            return "true or false"
        low = self.above if self.above is not None else self.at_least
        if low is not None and self.at_most is not None:
            return f"a number in {'(' if self.above is not None else '['}{low}, {self.at_most}]"
        if self.above is not None:
            return f"a value > {self.above}"
        if self.at_least is not None:
            return f"a value >= {self.at_least}"
        return f"a value <= {self.at_most}" if self.at_most is not None else ""

    def check(self, value: Any) -> None:
        """ConfigError naming the setting, the value and what is allowed, unless it is."""
        if self.choices is not None:
            require_one_of(self.name, value, self.choices)
        elif self.type == "bool" and not isinstance(value, bool):
            raise ConfigError(self.name, value, self.allowed())
        elif not self._within_bounds(value):
            raise ConfigError(self.name, value, self.allowed())

    def _within_bounds(self, value: Any) -> bool:
        # "not below" rather than ">=": only a value below a bound is refused (a NaN is not).
        return not (
            (self.at_least is not None and value < self.at_least)
            or (self.above is not None and not value > self.above)
            or (self.at_most is not None and value > self.at_most)
        )


@dataclasses.dataclass(frozen=True)
class NoSettings:
    """The settings of an objective that declares none (fine-tuning): `config.objective`."""


def setting(
    default: Any,
    *,
    at_least: float | None = None,
    above: float | None = None,
    at_most: float | None = None,
    choices: tuple | None = None,
    search: tuple | None = None,
    source: str = "",
    hyperparameter: bool = True,
) -> Any:
    """A settings dataclass's field: `name: float = setting(1.0, at_least=0.0, source=...)`."""
    declared = {
        "default": default,
        "at_least": at_least,
        "above": above,
        "at_most": at_most,
        "choices": choices,
        "search": search,
        "source": source,
        "hyperparameter": hyperparameter,
        "order": next(_declaration_order),
    }
    return dataclasses.field(default=default, metadata={_METADATA_KEY: declared})


def settings_of(settings_class: type) -> tuple[Setting, ...]:
    """The settings a dataclass of `setting()` fields declares, in declaration order;
    TypeError naming what is wrong with any other class."""
    if not (isinstance(settings_class, type) and dataclasses.is_dataclass(settings_class)):
        raise TypeError(f"a dataclass of setting() fields, got {settings_class!r}")
    found = []
    for field in dataclasses.fields(settings_class):
        declared = field.metadata.get(_METADATA_KEY)
        if declared is None:
            raise TypeError(f"{field.name} is not declared with setting()")
        kind = field.type if isinstance(field.type, str) else field.type.__name__
        found.append(Setting(field.name, kind, **declared))
    return tuple(sorted(found, key=lambda declared: declared.order))


def declaration_problem(declared: Setting) -> str | None:
    """What is wrong with a setting's own declaration, or None."""
    if declared.type not in TYPES:
        return f"{declared.name}: a type of {', '.join(TYPES)}, got {declared.type}"
    if declared.type in ("int", "float") and not _is_finite_number(declared.default):
        # A NaN passes every bound (`_within_bounds` refuses only a value below one).
        return f"{declared.name}: its default {declared.default!r} is not a finite number"
    try:
        declared.check(declared.default)
    except ConfigError as error:
        return f"{declared.name}: its default {declared.default!r} is not {error.allowed}"
    if declared.search is not None and not _is_search_range(declared.search):
        kinds = "('float', low, high, step) with low <= high and step > 0, or ('choice', values)"
        return f"{declared.name}: search {kinds}, got {declared.search!r}"
    return None


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_search_range(search: Any) -> bool:
    """A `search` range strategy `search` and `--set method=` can step through: a float range
    whose step is > 0 (a step of 0 divided by zero), or a non-empty choice."""
    if not isinstance(search, (tuple, list)) or not search:
        return False
    if search[0] == "choice":
        return len(search) == 2 and isinstance(search[1], (tuple, list)) and bool(search[1])
    if search[0] != "float" or len(search) != 4:
        return False
    low, high, step = search[1:]
    return all(map(_is_finite_number, search[1:])) and low <= high and step > 0
