"""Type-I error and power of every test the report offers, on simulated paired sweeps.

``python -m analysis.calibration`` prints the table of docs/statistics.md. Each cell simulates
``repeats`` independent comparisons of two equally good methods (or, for power, one better by
a given number of points), each on a fresh test set, and counts how often each test rejects at
alpha 0.05.

The data model is a probit one, as :mod:`analysis.seed_simulation`'s
(:mod:`analysis.calibration_model`: per example a difficulty shared by both methods, each
method's own effect on it, a whole run's seed shift and each prediction's own noise). Three
kinds of scores: 0/1 accuracy; continuous per-example scores (Phi of the latent, an F1-like
score in (0, 1)); NER counts per sentence (1-3 gold entities, each found when its latent is
positive, and a spurious entity when a further latent falls below the accuracy's quantile,
tested on pooled entity F1).

With ``--languages`` the cells are multi-language instead (:mod:`analysis.parallel_calibration`):
the headline's mean over that many parallel languages (translations of one item set), tested
on items averaged over their translations and, for contrast, on the concatenated examples
(0.5.0's headline).
"""

import argparse
import itertools
import time

import numpy as np
from scipy import stats

from analysis.calibration_model import ALPHA, NOISE_SD, Cell, latents
from analysis.parallel_calibration import PARALLEL_HEADER, ParallelCell, parallel_row
from analysis.stats import (
    bootstrap_ttest_batch,
    crossed_test_batch,
    entity_f1,
    permutation_test_batch,
    ttest_batch,
)
from analysis.tables import markdown_table

KINDS = ("accuracy", "continuous", "ner")
_ENTITY_SLOTS = 3
_CHUNK_ENTRIES = 20_000_000  # simulate at most this many scores at once (memory)


def _ner_counts(rng: np.random.Generator, cell: Cell, repeats: int, gain: float):
    """Both methods' [tp, fp, fn] per sentence, (repeats, seeds, examples, 3)."""
    slots = cell.examples * _ENTITY_SLOTS
    system, baseline = latents(rng, cell, repeats, slots, gain)
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
    system, baseline = latents(rng, cell, repeats, cell.examples, gain)
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


# Each grid's defaults: the one-language table's, and with --languages the parallel one's (the
# multi-language cells of docs/statistics.md, XNLI's 5,010 items per language).
_DEFAULTS = {
    "examples": [200, 1000, 5010],
    "seeds": [2, 3, 5, 10],
    "seed_sd": [0, 0.3, 0.6, 1.0],
    "accuracy": [0.5, 0.7, 0.95],
    "kinds": ["accuracy"],
    "tests": ["crossed", "ttest", "bootstrap", "permutation"],
    "resamples": 200,
}
_PARALLEL_DEFAULTS = {
    "examples": [5010],
    "seeds": [3, 5],
    "seed_sd": [0.3, 0.6],
    "accuracy": [0.7],
    "item_effect": [0.3, 0.45],
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.calibration",
        description="Rejection rates (%) at alpha 0.05 of the report's tests on simulated "
        "sweeps; with --languages, of the headline on that many parallel languages.",
    )
    parser.add_argument("--examples", type=_ints, help="per language (default 200,1000,5010)")
    parser.add_argument("--seeds", type=_ints, help="default 2,3,5,10")
    parser.add_argument("--seed-sd", type=_floats, help="points (default 0,0.3,0.6,1.0)")
    parser.add_argument("--accuracy", type=_floats, help="default 0.5,0.7,0.95")
    parser.add_argument("--kinds", type=lambda t: t.split(","), help="default accuracy")
    parser.add_argument("--tests", type=lambda t: t.split(","), help="default: all four")
    parser.add_argument(
        "--languages",
        type=_ints,
        help="parallel languages (e.g. 4,14): the headline on items vs concatenated examples "
        "(then N 5010, S 3,5, seed sd 0.3,0.6, accuracy 0.7 unless given)",
    )
    parser.add_argument(
        "--item-effect", type=_floats, help="with --languages: omega (default 0.3,0.45)"
    )
    parser.add_argument("--difference", type=float, default=0.0, help="true difference, points")
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--resamples", type=int, help="bootstrap/permutation draws (200)")
    parser.add_argument("--seed", type=int, default=0)
    return _checked(parser, parser.parse_args(argv))


def _checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the grid's defaults filled in, or an error naming what does not apply."""
    if args.languages:
        given = [name for name in ("kinds", "tests", "resamples") if getattr(args, name)]
        if given:
            parser.error(
                f"--{', --'.join(given)}: --languages runs the crossed test on accuracy only"
            )
        defaults = _PARALLEL_DEFAULTS
    elif args.item_effect:
        parser.error("--item-effect goes with --languages (the multi-language cells)")
    else:
        defaults = _DEFAULTS
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    unknown = set(args.tests or ()) - set(_DEFAULTS["tests"])
    if unknown or set(args.kinds or ()) - set(KINDS):
        parser.error(f"--tests and --kinds take names of {KINDS} and the report's tests")
    if args.repeats < 1 or (args.resamples or 1) < 1 or min(args.languages or [1]) < 1:
        parser.error("--repeats, --resamples and --languages must be positive")
    return args


def _parallel_rows(args) -> None:
    """Print the multi-language table (analysis.parallel_calibration), row by row."""
    values = itertools.product(
        args.languages, args.examples, args.seeds, args.seed_sd, args.accuracy, args.item_effect
    )
    cells = [
        ParallelCell(languages, n, s, sd, omega, accuracy, args.difference)
        for languages, n, s, sd, accuracy, omega in values
    ]
    print(
        f"Rejection rate (%) at alpha {ALPHA} of the crossed test on the mean over parallel "
        f"languages, {args.repeats} repeats per cell."
    )
    print("\n".join(markdown_table(PARALLEL_HEADER, [])), flush=True)
    for index, cell in enumerate(cells):
        row = parallel_row(cell, args.repeats, args.seed + index)
        print(markdown_table(PARALLEL_HEADER, [row])[-1], flush=True)


def _one_language_rows(args) -> None:
    """Print the one-language table, row by row."""
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


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    if args.languages:
        _parallel_rows(args)
    else:
        _one_language_rows(args)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
