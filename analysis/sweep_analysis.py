"""The analysis of a sweep: its records (:mod:`analysis.sweep_data`) in, one frozen
:class:`SweepAnalysis` out: the selection, the paired tests against the baseline, the
significance marks, the paper-style tables, the reproduction of published results, the
power of the design, the verdict and the sanity warnings, each computed by a section of the
report (:mod:`analysis.report_sections` lists them, in order).

It writes nothing, registers nothing and draws nothing: the renderers
(:mod:`analysis.render`) turn the result into text, :mod:`analysis.publish` puts it where it
goes.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from analysis.report_sections import run_sections, sections
from analysis.section import ReportOptions
from analysis.select import TEST_SPLIT, Selection
from analysis.sweep_data import SweepRecords
from analysis.sweep_parent import SweepParent
from analysis.tables import Table
from analysis.verdict import Verdict
from analysis.verdict_runs import VerdictRuns


@dataclass(frozen=True)
class SweepAnalysis:
    """Everything a sweep's report says, computed."""

    experiment: str
    parent: SweepParent
    trials: pd.DataFrame
    seed_means: pd.DataFrame  # aggregate_over_seeds of the trials' tidy metrics
    test: str  # the significance test, one of SIGNIFICANCE_TESTS
    correction: str
    baseline_method: str
    baseline_key: str
    reference_label: str | None
    selection: Selection
    comparisons: Mapping[str, pd.DataFrame]  # split -> selected vs baseline per language
    marks: pd.DataFrame  # analysis.select.significance_marks
    tables: tuple[Table, ...]  # the paper-style tables
    task: str
    model: str
    reproduction: pd.DataFrame  # analysis.reproduction.reproduction_frames' comparisons
    reproduction_lines: tuple[str, ...]  # the section on the papers
    # The reproduction beside the same experiment's sweep under the other preset (paper /
    # released: analysis/reproduction_presets.py); empty without one.
    preset_lines: tuple[str, ...]
    power: tuple[str, ...]  # the lines of the power section (analysis/power.py)
    sequential: tuple[str, ...]  # the sequential seeds' section (analysis/sequential.py)
    departures: dict | None  # a paper preset's, as logged (analysis/departures.py)
    verdict: Verdict
    baseline_mean: float  # the baseline's mean selection metric over seeds
    warnings: tuple[str, ...]  # sanity warnings (analysis.sanity), said before the rest
    incomplete: str  # analysis.completeness.incomplete_note: "" when the sweep has ended
    # The runs the verdict and the comparisons are decided on, and how (analysis/verdict_runs.py)
    verdict_runs: VerdictRuns
    # analysis.effect_sizes.effect_size_table of the selection vs the baseline on test; empty
    # when the baseline is selected or nothing was tested on test
    effect_sizes: pd.DataFrame
    # The values of sections that are no field above (analysis.section.Section.produces)
    extra: Mapping[str, Any]
    # report.md's lines of each section that renders itself (Section.lines), in their order
    section_lines: tuple[tuple[str, ...], ...]

    @property
    def evaluation(self) -> pd.DataFrame | None:
        """The comparison on test, which the verdict and the summary speak of."""
        return self.comparisons.get(TEST_SPLIT)


def analyse_sweep(records: SweepRecords, options: ReportOptions) -> SweepAnalysis:
    """The analysis of the sweep ``records`` holds, with the report's ``options``: every
    section of the report run in order (:func:`analysis.report_sections.sections`)."""
    values, section_lines = run_sections(records, options, sections())
    own = {field.name for field in fields(SweepAnalysis)}
    return SweepAnalysis(
        **{name: value for name, value in values.items() if name in own},
        extra={name: value for name, value in values.items() if name not in own},
        section_lines=section_lines,
    )
