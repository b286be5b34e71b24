"""The rules for a sweep's settings, one set for both ways of giving them: `--set KEY=VALUE`
and the flags (text, sweeps/cli.py) and a sweep file (YAML's values, sweeps/planning/sweep_file.py).
Text is first read as the setting's type; a file's value must already have it (`seeds: "12"`
is not a list of seeds). A bad value is refused naming the setting, the value and what is
allowed, before anything runs."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from sweeps.spec.experiment import RACE_TESTS, SWEEP_SETTINGS
from sweeps.spec.strategy import strategy_names
from xlt_core import registry
from xlt_core.config import HYPERPARAMETER_NAMES, MAX_SEED, setting_names
from xlt_core.errors import ConfigError

# Trial settings the sweep's points hold, never its base: `--set method=NAME` replaces the
# compared points' objective (sweeps/planning/method_override.py), the adaptation is the
# script's. And the seed (the sweep's `seeds`).
SCRIPT_SETTINGS = ("method", "adaptation")
# What `--set` accepts: every trial setting but those, and the sweep settings.
# Both read at each use: an objective's settings are the registry's (a plugin's included).
SETTABLE = registry.DerivedNames(
    lambda: tuple(sorted(set(setting_names()) - {"seed", *SCRIPT_SETTINGS} | set(SWEEP_SETTINGS)))
)
# The settings every trial shares (a sweep's `base`): hyperparameters are the points' axes.
SHARED_TRIAL_SETTINGS = registry.DerivedNames(
    lambda: tuple(
        name for name in SETTABLE if name not in SWEEP_SETTINGS and name not in HYPERPARAMETER_NAMES
    )
)
# The sweep settings that count something: at least one each.
COUNTS = ("search_trials", "top_k", "search_seeds", "search_concurrency")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_positive(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def _are_seeds(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(is_whole(seed) and 0 <= seed <= MAX_SEED for seed in value)
        and len(set(value)) == len(value)
    )


@dataclasses.dataclass(frozen=True)
class Rule:
    """What a setting allows: `test` of a value in its type, in words, and how text is read."""

    test: Callable[[Any], bool]
    allowed: str
    read: Callable[[str], Any] = str


def count_rule(low: int) -> Rule:
    return Rule(lambda value: is_whole(value) and value >= low, f"an integer >= {low}", int)


def _read_boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in _TRUE + _FALSE:
        raise ValueError(text)
    return lowered in _TRUE


def _read_seeds(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


POSITIVE = Rule(_is_positive, "a finite number > 0", float)
RULES = {
    "seeds": Rule(
        _are_seeds,
        f"distinct integers between 0 and {MAX_SEED} (2**32 - 1), e.g. seeds=0,1,2",
        _read_seeds,
    ),
    # None (a sweep file's null): the default, 1 CPU or a share of a GPU node's.
    "cpus_per_trial": Rule(
        lambda value: value is None or _is_positive(value), POSITIVE.allowed, float
    ),
    "log_models": Rule(lambda value: isinstance(value, bool), "true or false", _read_boolean),
    "strategy": Rule(
        lambda value: value in strategy_names(), f"one of {', '.join(strategy_names())}"
    ),
    **{name: count_rule(1) for name in COUNTS},
    # None (a sweep file's null): as many as the sweep's seeds; 0 turns the phase off.
    "confirm_seeds": Rule(
        lambda value: value is None or (is_whole(value) and value >= 0),
        "an integer >= 0 (0: no confirmation phase)",
        int,
    ),
    "race_alpha": Rule(
        lambda value: _is_positive(value) and value < 1,
        "a number between 0 and 1, both excluded",
        float,
    ),
    # At most the sweep's seeds: the race's own check (sweeps/strategies/race.py).
    "race_first_seeds": count_rule(2),
    "race_test": Rule(lambda value: value in RACE_TESTS, " or ".join(RACE_TESTS)),
}


def sweep_value(name: str, value: Any, rule: Rule | None = None) -> Any:
    """A sweep setting's value (as a sweep file holds it), checked by its rule (`RULES`)."""
    rule = rule or RULES[name]
    if not rule.test(value):
        raise ConfigError(name, value, rule.allowed)
    return value


def value_from_text(name: str, text: str, rule: Rule | None = None) -> Any:
    """A sweep setting's (or a flag's, with its `rule`) text read as its type, then checked
    by the rule a sweep file's value meets; the error shows the text as given."""
    rule = rule or RULES[name]
    try:
        value = rule.read(text)
    except ValueError:
        value = text  # refused below, naming the text
    if not rule.test(value):
        raise ConfigError(name, text, rule.allowed)
    return value
