"""Strategy `grid`: every configuration with every seed, in one phase; with `--set seeds=auto`
the seeds come in rounds instead (sweeps/running/sequential_seeds.py), a configuration that is
decided or futile getting no more."""

from __future__ import annotations

from sweeps.planning.plan import Entry, Phase

PHASE = "grid"


class GridPhases:
    """One phase, every configuration with every seed (restored where it stopped)."""

    def __init__(self, phases):
        self.phases = phases

    def run(self):
        from sweeps.running.tune_phases import count_failed

        spec = self.phases.spec
        results = self.phases.run_grid(PHASE, spec.points, spec.seeds)
        return results, count_failed(results)


class Grid:
    name = PHASE
    help = "grid: every configuration with every seed, plus the baseline"
    samples_points = False
    seed_rounds = True

    def check(self, spec, fits) -> None:
        """Nothing of its own: every trial's values are checked for every strategy."""

    def trial_count(self, spec) -> tuple[int, str, str]:
        points, seeds = len(spec.points), len(spec.seeds)
        formula = f"{points} configurations x {seeds} seeds"
        return points * seeds, formula, "fewer seeds (--set seeds=0,1,2) or configurations"

    def plan(self, spec) -> list[Phase]:
        configs, seeds = spec.configs(), len(spec.seeds)
        entries = [Entry(config.config_label(), config, seeds) for config in configs]
        summary = (
            f"Configurations x seeds: {len(configs)} configurations x {seeds} seeds "
            f"= {len(configs) * seeds} trials"
        )
        return [Phase(summary, entries)]

    def plan_note(self, spec) -> str:
        return ""

    def describe(self, spec) -> str:
        return f"{len(spec.points)} configurations x {len(spec.seeds)} seeds"

    def parent_tags(self, spec, run_name: str) -> dict:
        return {}

    def parent_params(self, spec) -> dict:
        return {"n_trials": len(spec.points) * len(spec.seeds)}

    def phases(self, phases):
        if phases.spec.seed_rounds:
            from sweeps.running.sequential_seeds import SeedRoundPhases

            return SeedRoundPhases(phases)
        return GridPhases(phases)


STRATEGY = Grid()
