"""The report is a list of sections (analysis/report_sections.py): a section defined here,
outside analysis/, and registered appears in the report with no analysis file changed; a
name or a value already another section's is refused."""

import pytest
from test_registry_reports import FEW_KEYS, _make_sweep

from analysis.collect import connect
from analysis.report import report_sweep
from analysis.report_sections import register_section, sections, unregister_section
from analysis.section import ReportOptions, Section
from analysis.sweep_analysis import analyse_sweep
from analysis.sweep_records import read_sweep

NAME = "trials_per_configuration"


def trials_per_configuration(given) -> dict:
    """The toy statistic: the number of finished trials of each configuration, and the
    selected configuration's (an earlier section's value)."""
    counts = given.records.trials.groupby("config_label").size()
    selected = given.earlier["selection"].config_label
    return {NAME: {label: int(count) for label, count in counts.items()}, "selected": selected}


def trials_lines(values) -> list[str]:
    counts = values[NAME]
    return [
        "## Trials per configuration",
        "",
        *(f"- {label}: {count}" for label, count in counts.items()),
        "",
        f"Selected: {values['selected']} ({counts[values['selected']]} trials).",
    ]


TRIALS = Section(NAME, trials_per_configuration, (NAME, "selected"), trials_lines)


@pytest.fixture
def registered():
    register_section(TRIALS)
    yield TRIALS
    unregister_section(TRIALS.name)


def test_a_section_registered_from_a_test_appears_in_the_report(registered, tmp_path):
    uri, _, _, _ = _make_sweep(tmp_path, "sections", "ttest", False, None, FEW_KEYS)
    report = report_sweep(uri, "sections", out_dir=str(tmp_path / "out"))
    markdown = (tmp_path / "out" / "report.md").read_text()
    lines = markdown.splitlines()
    start = lines.index("## Trials per configuration")
    # Every configuration of the fixture ran two seeds; the section follows the papers'.
    assert lines[start + 2].endswith(": 2")
    assert f"Selected: {report.selection.config_label} (2 trials)." in lines
    assert start < lines.index("## Model registry")
    assert report.markdown == markdown


def test_a_section_reads_the_earlier_sections_and_its_values_are_kept(registered, tmp_path):
    uri, _, _, _ = _make_sweep(tmp_path, "extra", "ttest", False, None, FEW_KEYS)
    analysis = analyse_sweep(read_sweep(connect(uri), "extra"), ReportOptions())
    assert analysis.extra["selected"] == analysis.selection.config_label
    assert set(analysis.extra[NAME].values()) == {2}
    assert analysis.section_lines[-1][0] == "## Trials per configuration"


def test_without_registration_the_section_is_not_run(tmp_path):
    assert NAME not in {section.name for section in sections()}


def test_a_name_already_used_is_refused(registered):
    with pytest.raises(ValueError, match="a report section named 'verdict' is already registered"):
        register_section(Section("verdict", trials_per_configuration, ("other",)))
    with pytest.raises(ValueError, match=f"a report section named '{NAME}' is already registered"):
        register_section(TRIALS)
    assert [section.name for section in sections()].count(NAME) == 1


def test_a_value_another_section_produces_is_refused():
    own = Section("own_selection", trials_per_configuration, ("selection",))
    with pytest.raises(ValueError, match="would produce selection, which section 'selection'"):
        register_section(own)
    assert "own_selection" not in {section.name for section in sections()}


def test_a_section_must_produce_what_it_declares(tmp_path):
    wrong = Section("wrong", lambda given: {"something_else": 1}, ("declared",))
    register_section(wrong)
    try:
        uri, _, _, _ = _make_sweep(tmp_path, "wrong", "ttest", False, None, FEW_KEYS)
        with pytest.raises(ValueError, match="produced \\['something_else'\\], not the"):
            analyse_sweep(read_sweep(connect(uri), "wrong"), ReportOptions())
    finally:
        unregister_section("wrong")
