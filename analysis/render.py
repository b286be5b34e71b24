"""The renderers of a sweep's report: the analysis (:mod:`analysis.sweep_analysis`) as
report.md, as LaTeX tables and as selected_config.json. Each takes the analysis result (and,
where the text says who holds the champion or which plots were drawn, the
:class:`~analysis.publish.Publication`) and returns text; none reads or writes anything."""

import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.departures import departures_pointer, departures_section
from analysis.effect_sizes import AVERAGE, MIN_SEEDS_FOR_INTERVAL
from analysis.frames import DEV_SPLIT, split_languages
from analysis.publication import Publication, Registration, ReportTexts
from analysis.sections.selection import is_baseline_selection
from analysis.select import (
    CONFIG_COLUMNS,
    MIN_VERDICT_SEEDS,
    SIGNIFICANCE_LEVEL,
    TEST_SPLIT,
    Selection,
)
from analysis.stats import CONFIDENCE_LEVEL, SEED_AVERAGED_TESTS
from analysis.sweep_analysis import SweepAnalysis
from analysis.tables import Table, markdown_table, to_latex, to_markdown
from analysis.verdict import (
    NO_EXAMPLE_DIFFERENCE,
    NO_VERDICT,
    ONE_SEED,
    SELECTED_ON_TEST,
    Verdict,
    identical,
    selected_on_test,
)
from analysis.verdict_runs import VerdictRuns
from xlt_schema import NO_ADAPTATION, parse_metric_key

TWO_SEED_CAVEAT = (
    " With 2 seeds per side, eps_min is below 0.2 only when both selected seeds score above "
    "both baseline seeds, which happens 1 time in 6 when the two do not differ at all."
)
# Under every heading and in every LaTeX caption of a sweep selected on test.
ON_TEST_MARK = f"{SELECTED_ON_TEST[0].upper()}{SELECTED_ON_TEST[1:]}."
TEST_NAMES = {
    "crossed": "seed-aware t-test of the mean paired difference under a crossed seed x example "
    "random-effects model, Satterthwaite df (docs/statistics.md)",
    "ttest": "two-sided paired t-test over examples on per-example scores averaged over seeds",
    "bootstrap": "bootstrapped paired t-test (examples resampled from the null-centred "
    "seed-averaged differences)",
    "permutation": "paired permutation test on predictions concatenated over seeds "
    "(per-unit swaps; on per-example counts where logged)",
}


def format_mean_std(mean: float, std: float) -> str:
    """A fraction's mean ± std in percent with one decimal (no ± when std is undefined)."""
    if math.isnan(std):
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ± {100 * std:.1f}"


def format_params(params: dict) -> str:
    """``name=value, ...`` of the settings that apply; ``(none)`` when none does.

    Settings that do not apply (another method's hyperparameters, unset paths) are None.
    """
    return (
        ", ".join(f"{name}={value}" for name, value in params.items() if value is not None)
        or "(none)"
    )


def read_only_note(incomplete: str) -> str:
    """What the report and the summary of a sweep that has not ended say first."""
    return (
        f"Sweep {incomplete}: a provisional report, written here "
        "only; nothing was logged to the parent run and no model was registered."
    )


def render_report(analysis: SweepAnalysis, publication: Publication) -> ReportTexts:
    """Every text file of the report."""
    return ReportTexts(
        markdown=render_markdown(analysis, publication),
        latex=render_latex(analysis),
        json=render_json(analysis, publication.registration),
    )


def render_markdown(analysis: SweepAnalysis, publication: Publication) -> str:
    """The whole report.md text."""
    lines = _opening(analysis, publication)
    for split in (DEV_SPLIT, TEST_SPLIT):
        lines += ["", *_score_table(analysis, split)]
    lines += ["", *_selection_section(analysis.selection, analysis.baseline_method)]
    if selected_on_test(analysis.trials):
        lines += [
            "",
            "(The configuration is chosen on dev; its trials' checkpoints were chosen on "
            "test, selection_dev=test, as the released scripts do.)",
        ]
    for split, comparison in analysis.comparisons.items():
        lines += [
            "",
            *_comparison_section(split, comparison, analysis, "baseline"),
        ]
    if not analysis.effect_sizes.empty:
        lines += ["", *_effect_size_section(_effect_sizes_as_table(analysis))]
    lines += _papers_sections(analysis)
    if publication.plots:
        plots = publication.plots
        lines += ["## Plots", "", *(f"![{Path(path).stem}]({Path(path).name})" for path in plots)]
    lines += ["", *_registration_section(publication.registration)]
    if analysis.parent.params:
        lines += [
            "",
            "## Sweep settings",
            "",
            *(f"- {name}: {value}" for name, value in sorted(analysis.parent.params.items())),
        ]
    if selected_on_test(analysis.trials):
        lines = _marked(lines)
    return "\n".join(lines) + "\n"


def _marked(lines: list[str]) -> list[str]:
    """Every heading (the title, each section and table) followed by ON_TEST_MARK."""
    marked = []
    for line in lines:
        marked += [line, "", f"_{ON_TEST_MARK}_"] if line.startswith("#") else [line]
    return marked


def _confirmation_count(analysis: SweepAnalysis) -> str:
    runs = analysis.verdict_runs.trials
    return "" if runs is analysis.trials else f" (and {len(runs)} of the confirmation phase)"


def _opening(analysis: SweepAnalysis, publication: Publication) -> list[str]:
    """The title, the report's settings, whether it is provisional, where the runs are, and
    the warnings and verdict."""
    reference = analysis.reference_label
    lines = [
        f"# Sweep report: {analysis.experiment}, parent run `{analysis.parent.run_id}`",
        "",
        f"Finished trials: {len(analysis.trials)}{_confirmation_count(analysis)}; baseline: "
        "method "
        f"`{analysis.baseline_method}`, adaptation `{NO_ADAPTATION}`; "
        f"significance test: `{analysis.test}` ({TEST_NAMES[analysis.test]}); correction: "
        f"`{analysis.correction}` (over the languages of a comparison; a paper-style table's "
        f"marks over all of its tests); reference for `**`: "
        f"{f'`{reference}`' if reference else 'none'}.",
    ]
    if analysis.incomplete:
        lines += ["", f"**{read_only_note(analysis.incomplete)}**"]
    if publication.ui_address:
        serve = f" (served by `{publication.ui_command}`)" if publication.ui_command else ""
        lines += ["", f"Runs in the MLflow UI: <{publication.ui_address}>{serve}."]
    return [*lines, "", *_verdict_section(analysis.warnings, analysis.verdict)]


def _papers_sections(analysis: SweepAnalysis) -> list[str]:
    """Power, sequential seeds, the paper-style tables, the departures from the paper and
    the reproduction of its results: each when the sweep has it."""
    lines = []
    if analysis.power:
        lines += ["", *analysis.power]
    if analysis.sequential:
        lines += ["", *analysis.sequential]
    if analysis.tables:
        lines += ["", "## Paper-style tables", ""]
        for table in analysis.tables:
            lines += [*to_markdown(table), ""]
    departures = analysis.departures
    if departures:
        lines += [*departures_section(departures), ""]
    if analysis.reproduction_lines:
        pointer = departures_pointer(departures)
        lines += [*_with_pointer(list(analysis.reproduction_lines), pointer), ""]
    if analysis.preset_lines:
        lines += [*analysis.preset_lines, ""]
    for section in analysis.section_lines:  # the sections that render themselves, if they say
        if section:  # anything
            lines += [*section, ""]
    return lines


def _score_table(analysis: SweepAnalysis, split: str) -> list[str]:
    """Configurations x languages of mean ± std over seeds of the selection's metric on
    ``split``, baseline first."""
    _, _, metric_name = parse_metric_key(analysis.selection.metric)
    scores, baseline_key = analysis.seed_means, analysis.baseline_key
    selected_key = analysis.selection.config_key
    title = [f"## {split} {metric_name} (%)", ""]
    split_scores = scores[(scores["split"] == split) & (scores["metric"] == metric_name)]
    if split_scores.empty:
        return [*title, f"_No {split} {metric_name} was logged._"]
    languages = split_languages(analysis.trials, split)
    configs = sorted(
        split_scores[CONFIG_COLUMNS].drop_duplicates().itertuples(index=False),
        key=lambda config: (config.config_key != baseline_key, config.config_label),
    )
    rows = []
    for config in configs:
        cells = split_scores[split_scores["config_key"] == config.config_key].set_index("lang")
        label = config.config_label
        if config.config_key == baseline_key:
            label = f"**Baseline:** {label}"
        if config.config_key == selected_key:
            label = f"{label} **(selected)**"
        values = [
            format_mean_std(cells.at[lang, "mean"], cells.at[lang, "std"])
            if lang in cells.index
            else "–"
            for lang in languages
        ]
        rows.append([label, str(cells["n_seeds"].max()), *values])
    return [
        *title,
        *markdown_table(["Configuration", "Seeds", *languages], rows),
        "",
        "Cells: mean ± standard deviation over seeds, in percent.",
    ]


def _selection_section(selection: Selection, baseline_method: str) -> list[str]:
    rule = (
        f"Rule: the non-baseline configuration with the highest mean {selection.metric} over "
        "seeds; ties go to the lower standard deviation over seeds, then to the "
        "simpler configuration (fewer of its hyperparameters switched on), then to the "
        "alphabetically first label. Test scores play no part in the choice."
    )
    if is_baseline_selection(selection, baseline_method):
        rule += " No non-baseline configuration finished, so the baseline is selected."
    hyperparameters = ", ".join(
        f"{name}={selection.params.get(name)}" for name in selection.hyperparameters
    )
    return [
        "## Selected configuration",
        "",
        rule,
        "",
        f"- Configuration: {selection.config_label} (method `{selection.method}`, "
        f"adaptation `{selection.adaptation}`, config_key `{selection.config_key}`)",
        f"- Hyperparameters: {hyperparameters or '(none recorded)'}",
        f"- Parameters: {format_params(selection.params)}",
        f"- Mean {selection.metric}: {format_mean_std(selection.mean, selection.std)}"
        f" % over {selection.n_seeds} seeds",
        f"- Runs: {', '.join(f'`{run_id}`' for run_id in selection.run_ids)}",
    ]


def _comparison_section(
    split: str, comparison: pd.DataFrame, analysis: SweepAnalysis, against: str
) -> list[str]:
    confidence = f"{100 * CONFIDENCE_LEVEL:.0f}%"
    rows = [
        [
            row.lang,
            f"{100 * row.system_mean:.1f}",
            f"{100 * row.baseline_mean:.1f}",
            f"{100 * row.mean_difference:+.1f}",
            _interval(row.ci_low, row.ci_high, 100, "+", row.mean_difference),
            *(_p_value(p) for p in (row.p_value, row.p_holm, row.p_bh)),
            NO_VERDICT if row.n_seeds < MIN_VERDICT_SEEDS else "*" if row.significant else "",
            str(row.n_examples),
        ]
        for row in comparison.itertuples(index=False)
    ]
    return [
        f"## Selected configuration vs {against} ({split})",
        "",
        f"{_comparison_note(comparison, analysis.test, analysis.correction)} "
        f"{_runs_note(analysis.verdict_runs)}",
        "",
        *markdown_table(
            [
                "Language",
                "Selected (%)",
                "Baseline (%)",
                "Δ (points)",
                f"{confidence} CI",
                "p",
                "p (Holm)",
                "p (BH)",
                "Sig.",
                "Examples",
            ],
            rows,
        ),
    ]


def _p_value(p: float) -> str:
    return "–" if math.isnan(p) else f"{p:.3g}"


def _runs_note(runs: VerdictRuns) -> str:
    """Which runs a comparison section's table is on (analysis/verdict_runs.py)."""
    if runs.candidates == 1:
        return runs.note
    return f"{runs.note} Sig. reads the adjusted p; the p columns are before that adjustment."


def _comparison_note(comparison: pd.DataFrame, test: str, correction: str) -> str:
    """What a comparison section's table is: the test, its seeds (and any left out), the
    correction; on one seed, that nothing is claimed."""
    seeds = comparison["n_seeds"].iloc[0]
    left_out = comparison["seeds_left_out"].iloc[0] if "seeds_left_out" in comparison else ""
    note = (
        f"Test: {TEST_NAMES[test]}, on the {seeds} seed(s) both ran"
        + (f" ({left_out})" if left_out else "")
        + f". Δ and its {100 * CONFIDENCE_LEVEL:.0f}% CI are in percentage points."
    )
    if seeds < MIN_VERDICT_SEEDS:
        return (
            f"{note} No verdict in any language: {ONE_SEED}, so no row claims a gain or a "
            "loss (a p-value, where a seed-averaged test was asked for, compares these two "
            "trained runs, not their configurations)."
        )
    return (
        f"{note} p-values are corrected over the {len(comparison)} languages (Holm; "
        f"Benjamini-Hochberg); * marks a {correction}-corrected p < {SIGNIFICANCE_LEVEL} "
        "(`none`: uncorrected)."
    )


def _interval(low: float, high: float, scale: float, sign: str, difference=None) -> str:
    """``[low, high]`` with one decimal (``scale`` 100: points) or two; – when undefined; no
    difference on any example when ``difference`` and both bounds are 0 (not ``[0, 0]``)."""
    if math.isnan(low) or math.isnan(high):
        return "–"
    if difference is not None and identical(difference, low, high):
        return NO_EXAMPLE_DIFFERENCE
    decimals = 1 if scale == 100 else 2
    return f"[{scale * low:{sign}.{decimals}f}, {scale * high:{sign}.{decimals}f}]"


def _effect_sizes_as_table(analysis: SweepAnalysis) -> Table:
    """The selection's effect sizes against the baseline on test (analysis.effect_sizes),
    one row per language and the average, for report.md and report.tex."""
    effect_sizes = analysis.effect_sizes
    rows = [
        (
            row.lang,
            [
                f"{100 * row.mean_difference:+.1f}",
                _interval(row.ci_low, row.ci_high, 100, "+", row.mean_difference),
                "–" if math.isnan(row.p_improvement) else f"{row.p_improvement:.2f}",
                _interval(row.p_improvement_low, row.p_improvement_high, 1, ""),
                "–" if math.isnan(row.epsilon_min) else f"{row.epsilon_min:.2f}",
                f"{row.n_seeds_system} / {row.n_seeds_baseline}",
            ],
        )
        for row in effect_sizes.itertuples(index=False)
    ]
    columns = [
        "Difference (points)",
        "95% CI",
        "P(new seed beats baseline)",
        "95% CI",
        "eps_min",
        "Seeds (selected / baseline)",
    ]
    title = f"Effect sizes: selected configuration vs baseline ({TEST_SPLIT})"
    return Table(title, columns, rows, _effect_size_note(effect_sizes))


def _effect_size_note(effect_sizes: pd.DataFrame) -> str:
    """What the effect sizes' columns are, with the caveats that apply to these rows."""
    test = effect_sizes["test"].iloc[0]
    ignored = SEED_AVERAGED_TESTS.get(test)
    average = (
        f" {AVERAGE}: the mean over the languages, tested as the verdict does, and each "
        "seed's mean over the languages."
        if (effect_sizes["lang"] == AVERAGE).any()
        else ""
    )
    seeds = effect_sizes[["n_seeds_system", "n_seeds_baseline"]]
    return (
        f"Difference: selected - baseline in points with the 95% CI of the {test} test, as "
        "in the comparison above"
        + (f" (not seed-aware: the {test} test {ignored})" if ignored else "")
        + ". P(new seed beats baseline): the chance that a new seed of the selected "
        "configuration scores higher than a new seed of the baseline on this test set (it "
        "conditions on these examples: another sample of the language could order them "
        "otherwise), estimated over every pair of one selected and one baseline seed, the "
        "share where the selected seed scores higher (ties count half); its 95% interval "
        "reads the seeds' scores as normal (Welch's noncentral t), given from "
        f"{MIN_SEEDS_FOR_INTERVAL} seeds per side (it covered 95.1-97.5% in "
        "docs/statistics.md's calibration). eps_min: Almost Stochastic Order (Dror et al. "
        "2019, as deepsig computes it) over the seeds' scores; below 0.5 the selected "
        "configuration is better more often than not, below 0.2 a claim (deepsig's "
        "threshold)."
        + average
        + (TWO_SEED_CAVEAT if (seeds == 2).all(axis=1).any() else "")
        + " Reading them with few seeds: docs/reports.md#effect-sizes."
    )


def _effect_size_section(table: Table) -> list[str]:
    """report.md's section of the effect sizes: a level-2 heading, the table, its note."""
    header = ["Language", *table.columns]
    rows = [[label, *cells] for label, cells in table.rows]
    return [f"## {table.title}", "", *markdown_table(header, rows), "", table.note]


def _holder_sentence(registration: Registration) -> str:
    holder = registration.holder
    alias = f"`models:/{registration.model_name}@{registration.alias}`"
    if holder is None:
        return f"No version holds {alias}."
    origin = f"sweep parent run `{holder.sweep_run_id}`" if holder.sweep_run_id else "no sweep"
    return f"{alias} is held by version {holder.version} (from {origin})."


def _registration_section(registration: Registration | None) -> list[str]:
    lines = ["## Model registry", ""]
    if registration is None:
        return [*lines, "Registration was not requested."]
    if not registration.registered:
        return [
            *lines,
            f"**No model registered.** {registration.reason}.",
            "",
            _holder_sentence(registration),
        ]
    moved = (
        f"The `{registration.alias}` alias moved to it."
        if registration.alias_moved
        else f"The `{registration.alias}` alias did not move to it: {registration.alias_reason} "
        "(the alias follows the newest complete sweep)."
    )
    return [
        *lines,
        f"The selected configuration's best seed (run `{registration.run_id}`, highest "
        f"selection metric) is registered as version {registration.version} of "
        f"`{registration.model_name}` (source `{registration.source}`). {moved}",
        "",
        _holder_sentence(registration),
    ]


def _verdict_section(warnings: tuple[str, ...], verdict: Verdict) -> list[str]:
    lines = []
    if warnings:
        lines += ["## Sanity warnings", "", *(f"- **Warning:** {text}" for text in warnings), ""]
    lines += ["## Verdict against the baseline", "", verdict.headline]
    return lines + (["", verdict.languages] if verdict.languages else [])


def _with_pointer(section: list[str], pointer: str | None) -> list[str]:
    """The reproduction section with the departures pointer under its heading."""
    if pointer is None:
        return section
    return [*section[:2], pointer, "", *section[2:]]


def render_latex(analysis: SweepAnalysis) -> str:
    """The paper-style tables and the effect sizes as LaTeX ``table`` environments
    (booktabs)."""
    header = (
        f"% Paper-style tables of sweep {analysis.experiment}; needs \\usepackage{{booktabs}}.\n"
    )
    tables = [(table, "Configuration") for table in analysis.tables]
    if not analysis.effect_sizes.empty:
        tables.append((_effect_sizes_as_table(analysis), "Language"))
    if selected_on_test(analysis.trials):
        tables = [(replace(t, note=f"{ON_TEST_MARK} {t.note}"), label) for t, label in tables]
    return header + "\n".join(to_latex(table, label) for table, label in tables)


def render_json(analysis: SweepAnalysis, registration: Registration | None) -> str:
    """selected_config.json: the selection, the settings of the report, the model registry's
    outcome, the comparisons per split, the effect sizes, the reproduction and the departures
    (strict JSON)."""
    payload = {
        "experiment": analysis.experiment,
        "parent_run_id": analysis.parent.run_id,
        **asdict(analysis.selection),
        "baseline_method": analysis.baseline_method,
        "significance_test": analysis.test,
        "correction": analysis.correction,
        "reference": analysis.reference_label,
        "selected_on_test": selected_on_test(analysis.trials),
        "registered_model": asdict(registration) if registration else None,
    }
    for split, comparison in analysis.comparisons.items():
        payload[f"{split}_comparison"] = comparison.to_dict(orient="records")
    payload["effect_sizes"] = analysis.effect_sizes.to_dict(orient="records")
    payload = _strict_json(payload)
    payload["reproduction"] = _strict_json(analysis.reproduction.to_dict(orient="records"))
    payload["departures"] = analysis.departures
    return json.dumps(payload, indent=2, allow_nan=False) + "\n"


def _strict_json(value):
    """NaN and infinities become null: strict JSON readers reject them."""
    if isinstance(value, dict):
        return {key: _strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return _strict_json(value.item())
    return value
