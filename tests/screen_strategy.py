"""A sweep strategy defined in the tests only, as docs/extending.md ("Add a strategy") says:
`screen` runs every configuration with the sweep's first seed (phase `screen`), then the
baseline and the configuration best on English dev with every seed (phase `final`, the one the
report reads). Registered when XLT_PLUGINS names this module (tests/ on PYTHONPATH)."""

from sweeps.planning.plan import Entry, Phase, config_step_cost
from sweeps.spec.strategy import register_strategy
from xlt_core.errors import ConfigError
from xlt_schema import REPORT_PHASE_TAG

SCREEN, FINAL = "screen", "final"


class ScreenPhases:
    def __init__(self, phases):
        self.phases = phases

    def run(self):
        """Both phases, each restored where it stopped: a resumed sweep finds the screen
        finished, ranks it the same way and goes on with the final phase."""
        from sweeps.running.search import top_configurations
        from sweeps.running.tune_phases import count_failed

        phases, spec = self.phases, self.phases.spec
        baseline = spec.baseline_points()
        screened = phases.run_grid(SCREEN, spec.points, spec.seeds[:1])
        candidates = [r for r in screened if r.config["point"] not in baseline]
        points = [*baseline, *top_configurations(candidates, 1)]
        final = phases.run_grid(FINAL, points, spec.seeds)
        return final, count_failed(screened) + count_failed(final)


class Screen:
    name = SCREEN
    help = "screen: every configuration with the first seed, then the best and the baseline"
    samples_points = False
    seed_rounds = False

    def check(self, spec, fits) -> None:
        if not spec.baseline_points() or len(spec.points) < 2:
            raise ConfigError("--strategy", SCREEN, "a sweep with a baseline and another point")

    def trial_count(self, spec) -> tuple[int, str, str]:
        points, seeds = len(spec.points), len(spec.seeds)
        formula = f"{points} configurations x 1 seed + 2 x {seeds} seeds"
        return points + 2 * seeds, formula, "fewer configurations or seeds"

    def plan(self, spec) -> list[Phase]:
        configs, seeds = spec.configs(), len(spec.seeds)
        baseline = next(c for c in configs if not c.hyperparameter_names())
        costliest = max((c for c in configs if c is not baseline), key=config_step_cost)
        return [
            Phase(
                f"Screen: {len(configs)} configurations x 1 seed = {len(configs)} trials",
                [Entry(config.config_label(), config, 1) for config in configs],
            ),
            Phase(
                f"Final: the baseline and the best on dev x {seeds} seeds = {2 * seeds} trials",
                [
                    Entry(baseline.config_label(), baseline, seeds),
                    Entry(f"the best ({costliest.config_label()}, costliest)", costliest, seeds),
                ],
            ),
        ]

    def plan_note(self, spec) -> str:
        return ""

    def describe(self, spec) -> str:
        return (
            f"{len(spec.points)} configurations x 1 seed, then the best and the baseline x "
            f"{len(spec.seeds)} seeds"
        )

    def parent_tags(self, spec, run_name: str) -> dict:
        return {REPORT_PHASE_TAG: FINAL}

    def parent_params(self, spec) -> dict:
        return {"n_trials": len(spec.points) + 2 * len(spec.seeds)}

    def phases(self, phases):
        return ScreenPhases(phases)


register_strategy(Screen())
