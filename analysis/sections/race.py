"""The report's section on a seed race (`--strategy race`): each configuration's rounds, seeds
and how it left the race (analysis/seed_race.py), from the parent run's `xlt.race` tag; none
for a sweep that did not race."""

from analysis.section import Section, SectionInput
from analysis.seed_race import race_section


def race(given: SectionInput) -> dict:
    return {"race": tuple(race_section(given.records.parent.tags))}


SECTION = Section("race", race, ("race",), lines=lambda values: values["race"])
