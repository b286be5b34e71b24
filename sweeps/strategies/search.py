"""Strategy `search`: phase 1 samples the searched methods' ranges (Optuna's TPE, the first
seed(s), ASHA stopping weak trials early on English dev), phase 2 (`final`) re-runs the top_k
configurations and the baseline over every seed, a balanced and paired design for the tests;
the report reads phase 2 only. Its space: sweeps/planning/search_space.py; its Optuna and Tune
pieces: sweeps/running/search.py; its phases: sweeps/running/search_phases.py."""

from __future__ import annotations

from pathlib import Path

from sweeps.planning import cost_model, search_space
from sweeps.planning.plan import Entry, Phase, config_step_cost
from sweeps.running.search import PHASE_FINAL, PHASE_SEARCH
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_supported
from xlt_schema import REPORT_PHASE_TAG

# Phase 1 as an Optuna study when it ends, beside the working directory: `optuna-dashboard
# sqlite:///optuna.db`.
OPTUNA_DB = "optuna.db"


class Search:
    name = PHASE_SEARCH
    help = (
        "search: phase 1 samples the method's ranges (Optuna TPE, one seed, ASHA early stopping "
        "on English dev), phase 2 re-runs the top_k configurations and the baseline over every "
        "seed"
    )
    samples_points = True
    seed_rounds = False

    def check(self, spec, fits) -> None:
        """Its ranges as it would search them (a value kept only where `fits` accepts its
        trial), a baseline to re-run in phase 2, and no more search seeds than seeds."""
        search_space.search_ranges(spec, fits)
        if not spec.baseline_points():
            raise ConfigError(
                "--strategy",
                PHASE_SEARCH,
                "a sweep with a baseline configuration to re-run in phase 2",
            )
        if spec.search_seeds > len(spec.seeds):
            raise ConfigError(
                "search_seeds", spec.search_seeds, f"at most the sweep's {len(spec.seeds)} seeds"
            )

    def trial_count(self, spec) -> tuple[int, str, str]:
        seeds, top = len(spec.seeds), min(spec.top_k, spec.search_trials)
        formula = (
            f"search_trials={spec.search_trials} x search_seeds={spec.search_seeds} + (1 "
            f"baseline + the top {top}) x {seeds} seeds"
        )
        count = spec.search_trials * spec.search_seeds + (1 + top) * seeds
        return count, formula, "a smaller search_trials or fewer seeds"

    def plan(self, spec) -> list[Phase]:
        return search_plan(spec)

    def plan_note(self, spec) -> str:
        # With search_seeds > 1, Tune's Repeater ranks on the mean, without ASHA.
        return " at most (ASHA stops some early)" if spec.search_seeds == 1 else ""

    def describe(self, spec) -> str:
        return (
            f"{spec.search_trials} sampled trials, then the top {spec.top_k} and the baseline "
            f"x {len(spec.seeds)} seeds"
        )

    def parent_tags(self, spec, run_name: str) -> dict:
        from sweeps.running.search_phases import OPTUNA_STORAGE_TAG, OPTUNA_STUDY_TAG

        return {
            REPORT_PHASE_TAG: PHASE_FINAL,
            OPTUNA_STORAGE_TAG: f"sqlite:///{Path(OPTUNA_DB).resolve()}",
            OPTUNA_STUDY_TAG: run_name,
        }

    def parent_params(self, spec) -> dict:
        return {
            "search_trials": spec.search_trials,
            "top_k": spec.top_k,
            "search_seeds": spec.search_seeds,
        }

    def phases(self, phases):
        from sweeps.running.search_phases import SearchPhases

        return SearchPhases(phases)


def search_plan(spec) -> list[Phase]:
    """Phase 1 samples the searched methods' ranges (as the sweep searches them: values this
    model cannot take dropped, the card's and `--set` axes fixed) with the first seed(s);
    phase 2 re-runs the baseline and the top_k distinct configurations of phase 1 (at most its
    search_trials) over every seed (sweeps/running/search.py). Phase 1's configurations are unknown
    until it runs: each is counted as the costliest the ranges allow (the largest value of
    every choice, as `m`), an upper bound."""
    ranges = search_space.search_ranges(spec, fits=check_supported)
    costliest = max(
        (
            spec.trial_config(point, **_largest_choices(ranges[method]))
            for point in spec.points
            if (method := point["method"]) in ranges
        ),
        key=config_step_cost,
    )
    fixed = ", ".join(f"{k}={v}" for k, v in search_space.fixed_axes(spec).items()) or "none"
    seeds, repeat, sampled = len(spec.seeds), spec.search_seeds, f"sampled {costliest.method}"
    sampled += ", costliest choices"
    ranking = (
        "ASHA stops weak ones early on English dev"
        if repeat == 1
        else "each ranked on its mean English dev over the seeds (Tune's Repeater; no ASHA)"
    )
    phase1 = Phase(
        f"Phase 1 (search): {spec.search_trials} configurations sampled by Optuna TPE "
        f"(the sweep's own first) from sweeps/spec/spaces.py SEARCH_RANGES for model "
        f"{costliest.model} ({'; '.join(f'{m}: {_ranges_text(r)}' for m, r in ranges.items())}; "
        f"fixed by the paper card or --set: {fixed}) x {repeat} seed{'s' if repeat > 1 else ''} "
        f"({', '.join(map(str, spec.seeds[:repeat]))}) = {spec.search_trials * repeat} trials; "
        f"{ranking}; at most {spec.search_concurrency} sampled before results return "
        "(search_concurrency)",
        [Entry(sampled, costliest, spec.search_trials * repeat)],
    )
    final = [spec.trial_config(point) for point in spec.baseline_points()]
    # Phase 2 re-runs distinct phase-1 configurations: never more than phase 1 sampled.
    k = min(spec.top_k, spec.search_trials)
    top = f"top {k} of phase 1" + (
        f" (top_k={spec.top_k}, capped at its {k} configurations)" if k < spec.top_k else ""
    )
    phase2 = Phase(
        f"Phase 2 (final): {len(final)} baseline + {top} = {len(final) + k} "
        f"configurations x {seeds} seeds = {(len(final) + k) * seeds} trials",
        [Entry(config.config_label(), config, seeds) for config in final]
        + [Entry(f"top {k} of phase 1 ({sampled})", costliest, k * seeds)],
    )
    return [phase1, phase2]


def _largest_choices(ranges: dict) -> dict:
    """The largest choice of each range that sets the cost (m, adv_steps; a `--set` value is
    its range's one choice)."""
    return {
        name: max(bounds[1])
        for name, bounds in ranges.items()
        if bounds[0] == "choice" and name in cost_model.COST_HYPERPARAMETERS
    }


def _ranges_text(ranges: dict) -> str:
    return ", ".join(
        f"{name} in {{{', '.join(map(str, bounds[1]))}}}"
        if bounds[0] == "choice"
        else f"{name} {bounds[1]}..{bounds[2]} step {bounds[3]}"
        for name, bounds in ranges.items()
    )


STRATEGY = Search()
