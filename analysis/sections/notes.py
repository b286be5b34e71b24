"""The report's small sections: the sweep's own records (the experiment, the parent run, the
trials, a paper preset's departures and whether the sweep ended), the sequential seeds'
section, the power section and the sanity warnings."""

from analysis.completeness import incomplete_note
from analysis.power import power_report
from analysis.sanity import sanity_warnings
from analysis.section import Section, SectionInput
from analysis.sections.selection import config_label
from analysis.select import SIGNIFICANCE_LEVEL
from analysis.sequential import sequential_section
from analysis.sweep_data import SweepRecords


def sweep(given: SectionInput) -> dict:
    records = given.records
    return {
        "experiment": records.experiment,
        "parent": records.parent,
        "trials": records.trials,
        "departures": records.departures,
        "incomplete": incomplete_note(records.parent, len(records.trials)),
    }


def sequential(given: SectionInput) -> dict:
    return {"sequential": tuple(sequential_section(given.records.parent.tags))}


def power(given: SectionInput) -> dict:
    earlier = given.earlier
    lines = _power(
        given.records,
        earlier["baseline_key"],
        earlier["selection"].metric,
        earlier["test"],
        given.options.target_difference,
    )
    return {"power": lines}


def sanity(given: SectionInput) -> dict:
    records, earlier = given.records, given.earlier
    baseline_label = config_label(records.trials, earlier["baseline_key"])
    warnings = sanity_warnings(
        records.training,
        records.scores,
        records.trials,
        earlier["selection"].metric,
        baseline_label,
    )
    return {"warnings": tuple(warnings)}


SWEEP = Section("sweep", sweep, ("experiment", "parent", "trials", "departures", "incomplete"))
SEQUENTIAL = Section("sequential", sequential, ("sequential",))
POWER = Section("power", power, ("power",))
SANITY = Section("sanity", sanity, ("warnings",))


def _power(records: SweepRecords, baseline_key: str, metric: str, test: str, target) -> tuple:
    """What the design could detect, and the seeds ``target`` (a difference in points) would
    need (analysis/power.py)."""
    return tuple(
        power_report(
            records.scores,
            records.trials,
            baseline_key,
            metric,
            test,
            target,
            alpha=SIGNIFICANCE_LEVEL,
        )
    )
