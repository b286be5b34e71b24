"""The sections of a sweep's report, in the order they run (``SECTIONS``), and the sections
registered from outside ``analysis/`` (:func:`register_section`), which run after them.

A section (:class:`analysis.section.Section`) is a pure function from the sweep's plain
records, the report's options and the earlier sections' values to its own values. Adding a
statistic to the report is one module defining its section (with ``lines``, its report.md
text) and one line here, or a :func:`register_section` call (docs/extending.md)."""

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from analysis.section import ReportOptions, Section, SectionInput
from analysis.sections import (
    comparisons,
    effect_sizes,
    notes,
    papers,
    race,
    selection,
    verdict,
)
from analysis.sweep_data import SweepRecords

SECTIONS: tuple[Section, ...] = (
    notes.SWEEP,
    selection.SECTION,
    comparisons.SECTION,
    verdict.SECTION,
    effect_sizes.SECTION,
    notes.POWER,
    notes.SEQUENTIAL,
    race.SECTION,
    notes.SANITY,
    papers.PAPERS,
    papers.PRESETS,
)
_registered: list[Section] = []


def sections() -> tuple[Section, ...]:
    """Every section a report runs: ``SECTIONS``, then the registered ones in their order."""
    return (*SECTIONS, *_registered)


def register_section(section: Section) -> None:
    """Add ``section`` to every report from now on (after the built-in sections); refused
    when its name, or a value it produces, is already another section's."""
    for other in sections():
        if other.name == section.name:
            raise ValueError(f"a report section named {section.name!r} is already registered")
        shared = sorted(set(other.produces) & set(section.produces))
        if shared:
            raise ValueError(
                f"report section {section.name!r} would produce {', '.join(shared)}, which "
                f"section {other.name!r} produces"
            )
    _registered.append(section)


def unregister_section(name: str) -> None:
    """Take the registered section ``name`` out of the reports (a built-in one stays)."""
    _registered[:] = [section for section in _registered if section.name != name]


def run_sections(
    records: SweepRecords, options: ReportOptions, table: Sequence[Section]
) -> tuple[dict[str, Any], tuple[tuple[str, ...], ...]]:
    """Every value the sections of ``table`` produce, run in order (each given the values
    of those before it), and the report.md lines of those that render themselves."""
    values: dict[str, Any] = {}
    rendered = []
    for section in table:
        given = SectionInput(records, options, MappingProxyType(dict(values)))
        produced = dict(section.compute(given))
        if set(produced) != set(section.produces):
            raise ValueError(
                f"report section {section.name!r} produced {sorted(produced)}, not the "
                f"{sorted(section.produces)} it declares"
            )
        values.update(produced)
        if section.lines is not None:
            rendered.append(tuple(section.lines(produced)))
    return values, tuple(rendered)
