"""The units the headline's test runs on: the mean over a split's languages, on items when the
languages' test sets are translations of one item set, else on the languages' examples.

XNLI, PAWS-X and XQuAD translate one set of items into every language, example i the same
item in each. A method that helps or hurts an item does so in every translation, so the
languages' examples are not independent evidence: concatenated, 4 x 5,010 XNLI examples
count each item's effect four times, and the seed-aware test rejects a true null in 9-21% of
simulated sweeps instead of 5% (19-51% with 14 languages; docs/statistics.md, "Parallel test
sets"). On parallel sets each item's mean over its translations is one unit, (seeds, items),
whose mean is the mean of the languages' metrics; independent sets (WikiANN, Tatoeba,
TyDiQA) are concatenated, each language weighted so that the units' mean is again the mean of
the languages' metrics. Whether a split is parallel is the task's declaration, recorded in
every per-example artifact (xlt_schema.PARALLEL_ITEMS_FIELD); an artifact of 0.5.0 or earlier
does not say, and keeps 0.5.0's concatenation. Pure numpy: analysis.select and the
calibration share it.
"""

from collections.abc import Sequence

import numpy as np

# What the test's units are, as the result dict and the verdict say it.
PARALLEL_UNITS = "items averaged over their {count} translations"
INDEPENDENT_UNITS = "examples of independent test sets"
ONE_LANGUAGE_UNITS = "examples of one test set"
UNDECLARED_UNITS = (
    "examples of every language counted as independent: the sweep's scores do not record "
    "whether its test sets are translations of one item set (0.5.0 and earlier), so a "
    "method's effect on a translated item counts once per language and the p-value may be "
    "too small"
)
UNEQUAL_UNITS = (
    "examples of every language counted as independent: the test sets are translations of "
    "one item set, but their languages hold different numbers of items ({counts}), so no "
    "position pairs the translations of an item; a method's effect on an item counts once "
    "per language and the p-value may be too small"
)


def averaged_items(units: Sequence[np.ndarray]) -> np.ndarray:
    """Each item's mean over its translations: the languages' (..., seeds, items) units
    averaged position by position (every language the same number of items)."""
    counts = {language.shape[-1] for language in units}
    if len(counts) != 1:
        raise ValueError(f"translations hold different numbers of items: {sorted(counts)}")
    return np.mean(units, axis=0)


def concatenated_examples(units: Sequence[np.ndarray]) -> np.ndarray:
    """The languages' (..., seeds, examples) units side by side, each weighted by (all
    examples) / (languages x its examples): their mean is the mean of the languages' means,
    and a seed's run shifts its units in every language together."""
    total = sum(language.shape[-1] for language in units)
    return np.concatenate(
        [total / (len(units) * language.shape[-1]) * language for language in units], axis=-1
    )


def headline_units(
    units: Sequence[tuple[np.ndarray, np.ndarray]], languages: Sequence[str], parallel: bool | None
) -> tuple[np.ndarray, np.ndarray, str]:
    """(system, reference, what the units are) of the mean over ``languages``, from each
    language's (system, reference) (seeds, examples) units. ``parallel``: the split's
    declaration (True: translations of one item set; False: independent; None: not
    recorded)."""
    counts = [system.shape[-1] for system, _ in units]
    if parallel and len(set(counts)) == 1:
        description = (
            PARALLEL_UNITS.format(count=len(units)) if len(units) > 1 else ONE_LANGUAGE_UNITS
        )
        return (
            averaged_items([system for system, _ in units]),
            averaged_items([reference for _, reference in units]),
            description,
        )
    if parallel:
        listing = ", ".join(f"{lang} {count}" for lang, count in zip(languages, counts))
        description = UNEQUAL_UNITS.format(counts=listing)
    elif parallel is None and len(units) > 1:
        description = UNDECLARED_UNITS
    else:
        description = INDEPENDENT_UNITS if len(units) > 1 else ONE_LANGUAGE_UNITS
    return (
        concatenated_examples([system for system, _ in units]),
        concatenated_examples([reference for _, reference in units]),
        description,
    )
