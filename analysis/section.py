"""What a section of a sweep's report is (:class:`Section`) and what it is given
(:class:`SectionInput`): the sweep's plain records, the report's options and the values the
sections before it produced. The sections and their order: :mod:`analysis.report_sections`;
:func:`analysis.sweep_analysis.analyse_sweep` runs them."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.papers import PUBLISHED_RESULTS
from analysis.select import DEFAULT_BASELINE_METHOD, DEFAULT_CORRECTION
from analysis.sweep_data import SweepRecords


@dataclass(frozen=True)
class ReportOptions:
    """The settings of a report (see :func:`analysis.report.report_sweep`)."""

    significance_test: str | None = None  # overrides the parent run's param
    correction: str = DEFAULT_CORRECTION
    baseline_method: str = DEFAULT_BASELINE_METHOD
    reference: str | None = None  # the second reference, for ``**`` marks
    selection_metric: str | None = None  # else the parent's param, else a default
    paper_results: str | Path = PUBLISHED_RESULTS
    target_difference: float | None = None  # points, for the power section


@dataclass(frozen=True)
class SectionInput:
    """What a section computes from: plain data only (no tracking server)."""

    records: SweepRecords
    options: ReportOptions
    earlier: Mapping[str, Any]  # value name -> value, from the sections before this one


@dataclass(frozen=True)
class Section:
    """One part of a sweep's analysis: ``compute`` (pure) returns a mapping with exactly the
    names ``produces`` declares (a field of :class:`~analysis.sweep_analysis.SweepAnalysis`,
    or any other name: then in its ``extra``), which the later sections find in their
    ``earlier``. With ``lines``, the section renders itself: ``lines`` of those values are
    report.md's lines for it, after the reproduction sections (a section without ``lines``
    is rendered by :mod:`analysis.render`, or is a step that others build on)."""

    name: str
    compute: Callable[[SectionInput], Mapping[str, Any]]
    produces: tuple[str, ...]
    lines: Callable[[Mapping[str, Any]], Sequence[str]] | None = None
