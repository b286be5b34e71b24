"""Type-I error and power of the headline on parallel test sets: the mean over several languages
whose test sets are translations of one item set (XNLI's), with the seed-aware test on items
averaged over their translations (the report's headline) and, for contrast, on the languages'
examples concatenated (0.5.0's headline).

Each cell simulates ``repeats`` comparisons of two equally good methods (or, for power, one
better by a given number of points) in :mod:`analysis.calibration_model`'s parallel model,
0/1 accuracy: the translations of an item share its difficulty and each method's effect on it
(the item effect, omega), while every language has its own seed shifts and prediction noise.
Both headlines see the same comparisons, built by :func:`analysis.parallel_items.headline_units`,
the report's own code. ``python -m analysis.calibration --languages 4,14`` prints the table.
"""

from dataclasses import dataclass

import numpy as np

from analysis.calibration_model import ALPHA, Cell, latents
from analysis.parallel_items import headline_units
from analysis.stats import crossed_test_batch

# The headline's units: items averaged over their translations (the report's), and the
# languages' examples concatenated (0.5.0's), each column of the table.
HEADLINES = {"items": True, "examples": False}
_CHUNK_ENTRIES = 20_000_000  # simulate at most this many scores at once (memory)


@dataclass(frozen=True)
class ParallelCell:
    """One multi-language setting: ``languages`` translations of ``examples`` items."""

    languages: int
    examples: int  # items per language
    seeds: int
    seed_sd: float  # points of one language's accuracy a run's seed shift moves it by
    item_effect: float  # omega: each method's own effect on an item, shared by its translations
    accuracy: float = 0.7
    difference: float = 0.0  # true difference, points of accuracy (power)

    @property
    def model(self) -> Cell:
        """One language's probit scale (calibration_model.Cell)."""
        return Cell(
            self.examples,
            self.seeds,
            self.seed_sd,
            self.accuracy,
            disagree=True,
            difference=self.difference,
            item_effect=self.item_effect,
        )


def simulate_parallel(rng: np.random.Generator, cell: ParallelCell, repeats: int):
    """(system, baseline) 0/1 scores of ``repeats`` comparisons, each (repeats, languages,
    seeds, items), paired by language, seed and item."""
    model = cell.model
    pair = latents(
        rng, model, repeats, cell.examples, model.gain(), cell.languages, dtype=np.float32
    )
    return tuple((latent > 0).astype(np.float32) for latent in pair)


def headline_p_values(system: np.ndarray, baseline: np.ndarray) -> dict[str, np.ndarray]:
    """Per headline (HEADLINES), the crossed test's p-values of a batch of comparisons shaped
    (repeats, languages, seeds, items)."""
    languages = [str(index) for index in range(system.shape[1])]
    pairs = list(zip(system.swapaxes(0, 1), baseline.swapaxes(0, 1)))
    found = {}
    for name, parallel in HEADLINES.items():
        system_units, baseline_units, _ = headline_units(pairs, languages, parallel)
        found[name] = crossed_test_batch(system_units, baseline_units).p_value
    return found


def parallel_rejection_rates(cell: ParallelCell, repeats: int, seed: int = 0) -> dict[str, float]:
    """Per headline, the share of ``repeats`` simulated comparisons it rejects at ALPHA; both
    see the same comparisons, simulated in chunks of at most _CHUNK_ENTRIES scores."""
    rng = np.random.default_rng(seed)
    per_repeat = 2 * cell.languages * cell.seeds * cell.examples
    chunk = max(1, _CHUNK_ENTRIES // per_repeat)
    rejected = dict.fromkeys(HEADLINES, 0)
    for start in range(0, repeats, chunk):
        system, baseline = simulate_parallel(rng, cell, min(chunk, repeats - start))
        for name, p in headline_p_values(system, baseline).items():
            rejected[name] += int(np.count_nonzero(p < ALPHA))
    return {name: count / repeats for name, count in rejected.items()}


def parallel_row(cell: ParallelCell, repeats: int, seed: int) -> list[str]:
    """One table row: the cell's settings and each headline's rejection rate in percent."""
    rates = parallel_rejection_rates(cell, repeats, seed)
    return [
        str(cell.languages),
        str(cell.examples),
        str(cell.seeds),
        f"{cell.seed_sd:g}",
        f"{cell.accuracy:g}",
        f"{cell.item_effect:g}",
        f"{cell.difference:g}",
        *(f"{100 * rates[name]:.1f}" for name in HEADLINES),
    ]


PARALLEL_HEADER = [
    "Languages",
    "N",
    "S",
    "Seed sd",
    "Accuracy",
    "Item effect",
    "Δ",
    "items (headline)",
    "examples (0.5.0)",
]
