"""Checks a paper preset against its paper card (sweeps/papers/<paper>.yaml), shared by the
tests of every paper's presets: every trial the preset plans holds every setting the card
fixes, or the `ours` of the departure that changes it; the seeds likewise. The expected
values are read from the card's `settings` and `departures` themselves, not from the
functions that build the presets. Every citation of released code names its repository, its
commit and a file line."""

import re
from pathlib import Path

from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import SEEDS, PaperCard, load_card
from sweeps.spec.spaces import hyperparameter_names
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import HYPERPARAMETER_NAMES

# The paper texts the cards' line numbers refer to; users' clones do not have them.
PAPER_TEXTS = Path(__file__).resolve().parents[2] / "shared" / "papers"
QUOTE = re.compile(r'L(\d+): "([^"]+)"')
# A released-code citation: owner/repository@commit (7-40 hex digits) path:line[-line].
CITATION = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40} [\w./-]+\.\w+:\d+(-\d+)?")


def expected_values(card: PaperCard, experiment: str, preset: str) -> dict:
    """Setting -> what every trial must hold (seeds: the sweep's seeds)."""
    values = {name: setting.value for name, setting in card.settings(experiment, preset).items()}
    seeds = card.experiments[experiment].seeds or card.shared.seeds
    if seeds is not None:
        values[SEEDS] = seeds.value
    for departure in card.departures(experiment, preset):
        if departure.ours is not None:
            values[departure.setting] = departure.ours
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def preset_mismatches(module, preset: str) -> list[str]:
    """Each (trial, setting) of a script's preset whose value is not the card's; a
    hyperparameter only where the trial's method or adaptation has it."""
    spec = experiment_spec(module, preset, None)
    return spec_mismatches(spec, load_card(module.PAPER))


def spec_mismatches(spec, card: PaperCard) -> list[str]:
    expected = expected_values(card, spec.experiment, spec.preset)
    found = []
    if spec.seeds != expected.pop(SEEDS):
        found.append(f"seeds {spec.seeds}, card {card.seeds(spec.experiment, spec.preset)}")
    for point in spec.points:
        own = set(hyperparameter_names(point))
        for seed in spec.seeds:
            config = trial_config(spec.base, point, seed).to_dict()
            for name, want in expected.items():
                if name in HYPERPARAMETER_NAMES and name not in own:
                    continue
                if config[name] != want:
                    found.append(f"{point} seed {seed}: {name}={config[name]!r}, card {want!r}")
    return found


def misquoted(card: PaperCard) -> list[str]:
    """Every `L<n>: "<quote>"` of the card's sources that is not on line n of its paper text."""
    lines = (PAPER_TEXTS / card.text).read_text(encoding="utf-8").split("\n")  # as grep -n counts
    sources = [s.source for s in card.shared.settings.values()]
    sources += [s.source for s in (card.shared.seeds,) if s is not None]
    for section in (*card.experiments.values(), *card.presets.values()):
        sources += [s.source for s in section.settings.values()]
        sources += [section.seeds.source] if section.seeds is not None else []
    sources += [d.paper for d in card.all_departures]
    wrong = []
    for source in sources:
        for number, quote in QUOTE.findall(source):
            # Spaces compared as spaces: the texts write "et al." with a no-break space.
            if _spaced(quote) not in _spaced(lines[int(number) - 1]):
                wrong.append(f"L{number}: {quote!r}")
    return wrong


def _spaced(text: str) -> str:
    return " ".join(text.split())


def uncited_released_values(card: PaperCard) -> list[str]:
    """`where: source` of each released value whose source does not begin with a citation
    (owner/repository@commit file:line), and of each preset of released code whose code
    does not name the same repository and commit."""
    sections = {"(top level)": card.shared}
    sections.update({f"experiments.{name}": s for name, s in card.experiments.items()})
    sections.update({f"presets.{name}": s for name, s in card.presets.items()})
    codes = {section.code for section in card.presets.values() if section.code}
    wrong = []
    for where, section in sections.items():
        for name, setting in section.settings.items():
            if setting.released is None:
                continue
            source = setting.released.source
            cited = CITATION.match(source)
            if not cited or not any(source.startswith(code) for code in codes):
                wrong.append(f"{where}.settings.{name}.released: {source}")
    return wrong
