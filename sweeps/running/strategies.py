"""Which phases a sweep runs, by its strategy: one small class each, all on the same
`TunePhases` (sweeps/running/tune_phases.py), each with `run()` -> (the results of the
reported phase, the number of failed trials of all phases)."""

from __future__ import annotations

from sweeps.running.search import PHASE_GRID, PHASE_SEARCH
from sweeps.running.search_phases import SearchPhases
from sweeps.running.sequential_seeds import SeedRoundPhases
from sweeps.running.tune_phases import TunePhases, count_failed

SEED_ROUNDS = "seed rounds"


class GridPhases:
    """Strategy grid: one phase, every configuration with every seed."""

    def __init__(self, phases: TunePhases):
        self.phases = phases

    def run(self):
        spec = self.phases.spec
        results = self.phases.run_grid(PHASE_GRID, spec.points, spec.seeds)
        return results, count_failed(results)


STRATEGY_PHASES = {
    PHASE_GRID: GridPhases,
    SEED_ROUNDS: SeedRoundPhases,  # grid with `--set seeds=auto`
    PHASE_SEARCH: SearchPhases,
}


def strategy_phases(spec, phases: TunePhases):
    """The phases of `spec`'s strategy, to run on `phases`."""
    name = SEED_ROUNDS if spec.strategy == PHASE_GRID and spec.seed_rounds else spec.strategy
    return STRATEGY_PHASES[name](phases)
