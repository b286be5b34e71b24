"""A sweep's strategy: how it chooses and runs its trials, one module behind the `Strategy`
interface for its whole life (its checks, its plan and cost for `--dry-run`, the parent run's
tags and params, its phases and their resume). The built-in ones, `grid` and `search`, are
modules of `sweeps/strategies/`, found by name in BUILT_IN_STRATEGIES; a plugin module named in
XLT_PLUGINS adds one with `register_strategy` (docs/extending.md, "Add a strategy").

The layers below `running/` know a strategy only through this interface: a strategy's module
stands above them all (it plans with `planning/` and runs on `running/`), and is imported by
name when a sweep names it, as a dry run's plan needs no Ray and imports none."""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from xlt_core.errors import ConfigError

DEFAULT_STRATEGY = "grid"
# Name -> the module whose STRATEGY implements it. Adding a strategy to the engine: a module
# and one line here.
BUILT_IN_STRATEGIES = {
    "grid": "sweeps.strategies.grid",
    "search": "sweeps.strategies.search",
    "race": "sweeps.strategies.race",
}
_registered: dict[str, Strategy] = {}


class Strategy(Protocol):
    """What the engine asks of a strategy. `spec` is the sweep's SweepSpec (its `strategy`
    names this one); `phases` its TunePhases (sweeps/running/tune_phases.py)."""

    name: str
    help: str  # `--strategy`'s help: "name: what it runs"
    samples_points: bool  # the sweep's points only start it (`--set method=NAME` gives the centre)
    seed_rounds: bool  # it runs `--set seeds=auto` (sequential seeds)

    def check(self, spec, fits) -> None:
        """Raise ConfigError on a setting it cannot run (`fits`: the trial check to use)."""

    def trial_count(self, spec) -> tuple[int, str, str]:
        """Its trials before the confirmation phase, the formula as text, and what makes
        fewer (for the refusal of too many trials)."""

    def plan(self, spec) -> list:
        """Its phases for `--dry-run` (sweeps/planning/plan.py's Phase, with their costs)."""

    def plan_note(self, spec) -> str:
        """Said after the trial count of the dry run (e.g. that early stopping may cut it)."""

    def describe(self, spec) -> str:
        """What it runs, for the line that starts the sweep."""

    def parent_tags(self, spec, run_name: str) -> dict:
        """Its own tags on the parent run (e.g. the phase the report reads)."""

    def parent_params(self, spec) -> dict:
        """Its own settings as the parent run's params."""

    def phases(self, phases) -> Any:
        """An object whose `run()` runs its phases on `phases`, or resumes them where the
        parent's tags and Tune's saved state say they stopped: (the reported phase's Tune
        results, the number of failed trials of all its phases)."""


def register_strategy(strategy: Strategy) -> None:
    """Add a strategy (a plugin's, at its import); a name already taken is refused."""
    if strategy.name in BUILT_IN_STRATEGIES or strategy.name in _registered:
        raise ConfigError("strategy", strategy.name, "a name no other strategy has")
    _registered[strategy.name] = strategy


def strategy_names() -> tuple[str, ...]:
    return (*BUILT_IN_STRATEGIES, *_registered)


def seed_round_strategies() -> str:
    """The strategies that run `--set seeds=auto`, for the refusals that name them."""
    return ", ".join(name for name in strategy_names() if strategy_named(name).seed_rounds)


def strategy_named(name: str) -> Strategy:
    """The strategy called `name`; ConfigError naming the known ones otherwise."""
    if name in _registered:
        return _registered[name]
    if name not in BUILT_IN_STRATEGIES:
        raise ConfigError("strategy", name, f"one of {', '.join(strategy_names())}")
    return importlib.import_module(BUILT_IN_STRATEGIES[name]).STRATEGY
