"""Type-I error and power of every test the report offers, on simulated paired sweeps.

``python -m analysis.calibration`` prints the table of docs/statistics.md. Each cell simulates
``repeats`` independent comparisons of two equally good methods (or, for power, one better by
a given number of points), each on a fresh test set, and counts how often each test rejects at
alpha 0.05.

The data model is a probit one, as :mod:`analysis.seed_simulation`'s: unit (example, or entity
slot for NER) i of run (method m, seed s) is right when

    mu + difficulty[i] + method[m, i] + shift[m, s] + noise[m, s, i] + gain[m] > 0

``difficulty`` ~ N(0, 1) is shared by both methods; ``method`` ~ N(0, omega^2) is each method's
own view of an example (omega 0: the methods agree on every example's difficulty, and a run
of each disagrees only through seed noise, on 13% of the examples at accuracy 0.7; omega
``DISAGREEING_OMEGA``: on 20%, of which 6 points are the methods' own); ``shift`` ~ N(0,
tau^2) is a whole run's seed shift, tau set so that a run's accuracy varies by ``seed_sd``
points from seed to seed; ``noise`` ~ N(0, ``NOISE_SD``^2) is each prediction's own. ``mu``
gives the accuracy. Three kinds of scores: 0/1 accuracy; continuous per-example scores
(Phi of the latent, an F1-like score in (0, 1)); NER counts per sentence (1-3 gold entities,
each found when its latent is positive, and a spurious entity when a further latent falls
below the accuracy's quantile, tested on pooled entity F1).
"""

import argparse
import itertools
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from analysis.stats import (
    bootstrap_ttest_batch,
    crossed_test_batch,
    entity_f1,
    permutation_test_batch,
    ttest_batch,
)
from analysis.tables import markdown_table

ALPHA = 0.05
NOISE_SD = 0.35  # a prediction's own noise: two seeds of a method disagree on ~14% (XNLI-like)
DISAGREEING_OMEGA = 0.45  # the methods' own example effects (module notes)
KINDS = ("accuracy", "continuous", "ner")
_ENTITY_SLOTS = 3
_CHUNK_ENTRIES = 20_000_000  # simulate at most this many scores at once (memory)


@dataclass(frozen=True)
class Cell:
    """One setting of the simulation."""

    examples: int
    seeds: int
    seed_sd: float  # points of accuracy a run's seed shift moves it by (its std)
    accuracy: float
    disagree: bool  # the methods have their own example effects
    kind: str = "accuracy"
    difference: float = 0.0  # true difference, points of accuracy (power)

    @property
    def omega(self) -> float:
        return DISAGREEING_OMEGA if self.disagree else 0.0

    @property
    def _rest_sd(self) -> float:
        """The latent's std given the run's shift: difficulty, method effect, noise."""
        return float(np.sqrt(1 + self.omega**2 + NOISE_SD**2))

    @property
    def mu(self) -> float:
        scale = np.sqrt(self._rest_sd**2 + self.tau**2)
        return float(stats.norm.ppf(self.accuracy) * scale)

    @property
    def tau(self) -> float:
        """The shift's latent std: accuracy moves by phi(z) tau / rest per unit of latent."""
        slope = stats.norm.pdf(stats.norm.ppf(self.accuracy)) / self._rest_sd
        return self.seed_sd / 100 / slope

    def gain(self) -> float:
        """The latent gain whose expected accuracy difference is ``difference`` points."""
        if not self.difference:
            return 0.0
        scale = np.sqrt(self._rest_sd**2 + self.tau**2)

        def gap(g):
            return stats.norm.cdf((self.mu + g) / scale) - self.accuracy - self.difference / 100

        return float(optimize.brentq(gap, -5, 5))


def _latents(rng: np.random.Generator, cell: Cell, repeats: int, units: int, gain: float):
    """Both methods' latents, each (repeats, seeds, units), paired by seed and unit."""
    difficulty = rng.standard_normal((repeats, 1, units)) + cell.mu

    def run(offset: float) -> np.ndarray:
        own = cell.omega * rng.standard_normal((repeats, 1, units)) if cell.disagree else 0.0
        shift = cell.tau * rng.standard_normal((repeats, cell.seeds, 1))
        noise = NOISE_SD * rng.standard_normal((repeats, cell.seeds, units))
        return difficulty + own + shift + noise + offset

    return run(gain), run(0.0)


def _ner_counts(rng: np.random.Generator, cell: Cell, repeats: int, gain: float):
    """Both methods' [tp, fp, fn] per sentence, (repeats, seeds, examples, 3)."""
    slots = cell.examples * _ENTITY_SLOTS
    system, baseline = _latents(rng, cell, repeats, slots, gain)
    gold = rng.integers(1, _ENTITY_SLOTS + 1, size=(repeats, 1, cell.examples, 1))
    present = np.arange(_ENTITY_SLOTS) < gold
    spurious_cut = stats.norm.ppf(1 - cell.accuracy) * np.sqrt(1 + NOISE_SD**2)

    def counts(latent: np.ndarray) -> np.ndarray:
        found = (latent.reshape(*latent.shape[:2], cell.examples, _ENTITY_SLOTS) > 0) & present
        tp = found.sum(axis=-1)
        fn = gold[..., 0] - tp
        spurious = rng.standard_normal(tp.shape) * np.sqrt(1 + NOISE_SD**2) < spurious_cut
        return np.stack([tp, spurious.astype(int), fn], axis=-1).astype(float)

    return counts(system), counts(baseline)


def simulate(rng: np.random.Generator, cell: Cell, repeats: int):
    """(system, baseline) of ``repeats`` comparisons: scores (repeats, seeds, examples), or NER
    counts (repeats, seeds, examples, 3)."""
    gain = cell.gain()
    if cell.kind == "ner":
        return _ner_counts(rng, cell, repeats, gain)
    system, baseline = _latents(rng, cell, repeats, cell.examples, gain)
    if cell.kind == "accuracy":
        return (system > 0).astype(float), (baseline > 0).astype(float)
    if cell.kind == "continuous":
        return stats.norm.cdf(system), stats.norm.cdf(baseline)
    raise ValueError(f"kind={cell.kind!r} is not one of {', '.join(KINDS)}")


def p_values(test: str, system, baseline, kind: str, resamples: int) -> np.ndarray:
    """The test's p-values of a batch of comparisons."""
    statistic = entity_f1 if kind == "ner" else None
    if test == "crossed":
        return crossed_test_batch(system, baseline, statistic).p_value
    if test == "permutation":
        return permutation_test_batch(system, baseline, resamples, 1, statistic).p_value
    if kind == "ner":
        raise ValueError(f"{test} compares per-example scores, not NER counts")
    if test == "ttest":
        return ttest_batch(system, baseline).p_value
    if test == "bootstrap":
        return bootstrap_ttest_batch(system, baseline, resamples, 1).p_value
    raise ValueError(f"unknown test {test!r}")


def rejection_rates(
    cell: Cell, tests: tuple[str, ...], repeats: int, resamples: int, seed: int = 0
) -> dict[str, float]:
    """Per test, the share of ``repeats`` simulated comparisons it rejects at ALPHA; every test
    sees the same comparisons."""
    rng = np.random.default_rng(seed)
    per_repeat = 2 * cell.seeds * cell.examples * (_ENTITY_SLOTS if cell.kind == "ner" else 1)
    chunk = max(1, _CHUNK_ENTRIES // per_repeat)
    rejected = dict.fromkeys(tests, 0)
    for start in range(0, repeats, chunk):
        system, baseline = simulate(rng, cell, min(chunk, repeats - start))
        for test in tests:
            p = p_values(test, system, baseline, cell.kind, resamples)
            rejected[test] += int(np.count_nonzero(p < ALPHA))
    return {test: count / repeats for test, count in rejected.items()}


def _grid(args) -> list[Cell]:
    values = itertools.product(
        args.examples, args.seeds, args.seed_sd, args.accuracy, (False, True), args.kinds
    )
    return [Cell(n, s, sd, acc, disagree, kind) for n, s, sd, acc, disagree, kind in values]


def _row(args, index: int, cell: Cell) -> list[str]:
    """One table row: the cell's settings and each test's rejection rate in percent."""
    skipped = ("ttest", "bootstrap") if cell.kind == "ner" else ()  # they take no counts
    tests = tuple(t for t in args.tests if t not in skipped)
    rates = rejection_rates(cell, tests, args.repeats, args.resamples, args.seed + index)
    return [
        cell.kind,
        str(cell.examples),
        str(cell.seeds),
        f"{cell.seed_sd:g}",
        f"{cell.accuracy:g}",
        "yes" if cell.disagree else "no",
        f"{cell.difference:g}",
        *(f"{100 * rates[t]:.1f}" if t in rates else "–" for t in args.tests),
    ]


def _floats(text: str) -> list[float]:
    return [float(value) for value in text.split(",")]


def _ints(text: str) -> list[int]:
    return [int(value) for value in text.split(",")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.calibration",
        description="Rejection rates (%) at alpha 0.05 of the report's tests on simulated sweeps.",
    )
    parser.add_argument("--examples", type=_ints, default=[200, 1000, 5010])
    parser.add_argument("--seeds", type=_ints, default=[2, 3, 5, 10])
    parser.add_argument("--seed-sd", type=_floats, default=[0, 0.3, 0.6, 1.0], help="points")
    parser.add_argument("--accuracy", type=_floats, default=[0.5, 0.7, 0.95])
    parser.add_argument("--kinds", type=lambda t: t.split(","), default=["accuracy"])
    parser.add_argument(
        "--tests",
        type=lambda t: t.split(","),
        default=["crossed", "ttest", "bootstrap", "permutation"],
    )
    parser.add_argument("--difference", type=float, default=0.0, help="true difference, points")
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap/permutation draws")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    unknown = set(args.tests) - {"crossed", "ttest", "bootstrap", "permutation"}
    if unknown or set(args.kinds) - set(KINDS):
        parser.error(f"--tests and --kinds take names of {KINDS} and the report's tests")
    if args.repeats < 1 or args.resamples < 1:
        parser.error("--repeats and --resamples must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    cells = [
        Cell(c.examples, c.seeds, c.seed_sd, c.accuracy, c.disagree, c.kind, args.difference)
        for c in _grid(args)
    ]
    header = ["Scores", "N", "S", "Seed sd", "Accuracy", "Disagree", "Δ", *args.tests]
    print(
        f"Rejection rate (%) at alpha {ALPHA}, {args.repeats} repeats per cell; resampling "
        f"tests with {args.resamples} resamples each."
    )
    print("\n".join(markdown_table(header, [])), flush=True)
    for index, cell in enumerate(cells):  # row by row: a long grid shows its progress
        print(markdown_table(header, [_row(args, index, cell)])[-1], flush=True)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
