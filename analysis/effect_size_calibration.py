"""Coverage of the interval of P(new seed beats the baseline) (analysis.effect_sizes), on
simulated sweeps.

``python -m analysis.effect_size_calibration`` prints docs/statistics.md's coverage table.
The figure conditions on the test set (a new seed of each configuration, evaluated on these
same examples), so each repeat draws a test set and both configurations' runs as
:mod:`analysis.calibration`'s probit model does (its :class:`~analysis.calibration_model.Cell`
sets the accuracy, the seed shift and the true difference), and the truth on that test set.

The truth: given a run's seed shift s, example i is right with probability p_i(s) =
Phi((m_i + s) / NOISE_SD), m_i the example's latent mean for that configuration, so the
run's accuracy is a sum of independent 0/1 scores, close to normal with mean A(s) = mean_i
p_i(s) and variance sum_i p_i (1 - p_i) / n^2. Then P(X > Y) = E_{s, t} Phi((A_x(s) -
A_y(t)) / sqrt(V_x(s) + V_y(t))), taken by Gauss-Hermite quadrature over both shifts. Where
the methods disagree on examples (their own example effects), a test set favours one of them
by chance, and the truth moves from 0.5 under the null: the table gives its spread.
"""

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from analysis.calibration_model import NOISE_SD, Cell
from analysis.effect_sizes import CONFIDENCE_LEVEL, improvement, probability_of_improvement
from analysis.tables import markdown_table

_NODES = 32  # Gauss-Hermite nodes per seed shift
_CHUNK = 25  # repeats simulated at once (memory: chunk x nodes x examples floats)
BOOTSTRAP_RESAMPLES = 2000  # the percentile bootstrap the report used before (for the table)


@dataclass(frozen=True)
class CoverageCell:
    """One setting: ``cell`` (examples, seed sd, accuracy, disagreement, true difference)
    with ``system_seeds`` seeds of the system and ``baseline_seeds`` of the baseline."""

    cell: Cell
    system_seeds: int
    baseline_seeds: int


def _accuracy_moments(means: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A run's accuracy mean and variance given its seed shift, per repeat and shift:
    ``means`` (repeats, examples) latent means, ``shifts`` (shifts,)."""
    p = special.ndtr((means[:, None, :] + shifts[None, :, None]) / NOISE_SD)
    n = means.shape[-1]
    return p.mean(axis=-1), (p * (1 - p)).sum(axis=-1) / n**2


def true_probability(system_means: np.ndarray, baseline_means: np.ndarray, tau: float):
    """P(a new system seed's accuracy > a new baseline seed's) on each repeat's test set
    (module notes): ``*_means`` (repeats, examples), ``tau`` the seed shift's latent sd."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(_NODES)
    weights = weights / weights.sum()
    mean_x, var_x = _accuracy_moments(system_means, tau * nodes)
    mean_y, var_y = _accuracy_moments(baseline_means, tau * nodes)
    z = (mean_x[:, :, None] - mean_y[:, None, :]) / np.sqrt(var_x[:, :, None] + var_y[:, None, :])
    return (weights[:, None] * weights[None, :] * special.ndtr(z)).sum(axis=(1, 2))


def simulate(rng: np.random.Generator, setting: CoverageCell, repeats: int):
    """(system accuracies (repeats, system seeds), baseline's, truth (repeats,)): a fresh
    test set per repeat, as analysis.calibration's model draws it."""
    cell = setting.cell
    shape = (repeats, cell.examples)
    difficulty = rng.standard_normal(shape) + cell.mu
    system = difficulty + cell.omega * rng.standard_normal(shape) + cell.gain()
    baseline = difficulty + cell.omega * rng.standard_normal(shape)

    def accuracies(means: np.ndarray, seeds: int) -> np.ndarray:
        shift = cell.tau * rng.standard_normal((repeats, seeds, 1))
        noise = NOISE_SD * rng.standard_normal((repeats, seeds, cell.examples))
        return (means[:, None, :] + shift + noise > 0).mean(axis=-1)

    return (
        accuracies(system, setting.system_seeds),
        accuracies(baseline, setting.baseline_seeds),
        true_probability(system, baseline, cell.tau),
    )


def _percentile_interval(system, baseline, seed: int) -> tuple[float, float]:
    """The percentile bootstrap of P(improvement) the report gave before (each side's seeds
    resampled apart, rliable's), for the table's comparison column."""
    interval = stats.bootstrap(
        (system, baseline),
        improvement,
        n_resamples=BOOTSTRAP_RESAMPLES,
        vectorized=True,
        method="percentile",
        confidence_level=CONFIDENCE_LEVEL,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    return interval.low, interval.high


def coverage(setting: CoverageCell, repeats: int, seed: int = 0) -> dict[str, float]:
    """The share of ``repeats`` whose interval holds the truth, for the report's interval
    (``normal``) and the percentile bootstrap (``percentile``), with the truth's mean and
    standard deviation over the test sets."""
    rng = np.random.default_rng(seed)
    covered = {"normal": 0, "percentile": 0}
    truths = []
    for start in range(0, repeats, _CHUNK):
        systems, baselines, truth = simulate(rng, setting, min(_CHUNK, repeats - start))
        truths.append(truth)
        for index, (system, baseline) in enumerate(zip(systems, baselines)):
            intervals = {
                "normal": probability_of_improvement(system, baseline)[1:],
                "percentile": _percentile_interval(system, baseline, start + index),
            }
            for name, (low, high) in intervals.items():
                covered[name] += int(low <= truth[index] <= high)
    truths = np.concatenate(truths)
    return {
        **{name: count / repeats for name, count in covered.items()},
        "truth_mean": float(truths.mean()),
        "truth_sd": float(truths.std()),
    }


def _row(setting: CoverageCell, repeats: int, seed: int) -> list[str]:
    cell = setting.cell
    rates = coverage(setting, repeats, seed)
    return [
        f"{setting.system_seeds} / {setting.baseline_seeds}",
        f"{cell.seed_sd:g}",
        "yes" if cell.disagree else "no",
        f"{cell.difference:g}",
        f"{rates['truth_mean']:.3f} ± {rates['truth_sd']:.3f}",
        f"{100 * rates['normal']:.1f}",
        f"{100 * rates['percentile']:.1f}",
    ]


def _seed_pairs(text: str) -> list[tuple[int, int]]:
    pairs = [tuple(int(count) for count in pair.split(":")) for pair in text.split(",")]
    if any(len(pair) != 2 or min(pair) < 2 for pair in pairs):
        raise argparse.ArgumentTypeError(f"{text!r}: expected SYSTEM:BASELINE seed counts >= 2")
    return pairs


def _floats(text: str) -> list[float]:
    return [float(value) for value in text.split(",")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.effect_size_calibration",
        description="Coverage (%) of the 95%% interval of P(new seed beats the baseline) on "
        "simulated sweeps (the truth on each simulated test set).",
    )
    parser.add_argument("--seeds", type=_seed_pairs, default=[(3, 3), (5, 5), (5, 3)])
    parser.add_argument("--seed-sd", type=_floats, default=[0.3, 0.6, 1.0], help="points")
    parser.add_argument("--difference", type=_floats, default=[0.0, 1.0], help="points")
    parser.add_argument("--examples", type=int, default=5010)
    parser.add_argument("--accuracy", type=float, default=0.7)
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.examples < 2:
        parser.error("--repeats must be positive and --examples at least 2")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    header = ["Seeds", "Seed sd", "Disagree", "Δ", "Truth (mean ± sd)", "normal", "percentile"]
    print(
        f"Coverage (%) of the 95% interval of P(new seed beats the baseline), {args.repeats} "
        f"repeats per cell, N {args.examples}, accuracy {args.accuracy:g}; normal: the "
        "report's interval, percentile: the bootstrap it gave before."
    )
    print("\n".join(markdown_table(header, [])), flush=True)
    settings = [
        CoverageCell(Cell(args.examples, s, sd, args.accuracy, disagree, difference=d), s, b)
        for d in args.difference
        for s, b in args.seeds
        for sd in args.seed_sd
        for disagree in (False, True)
    ]
    for index, setting in enumerate(settings):  # row by row: a long grid shows its progress
        row = _row(setting, args.repeats, args.seed + index)
        print(markdown_table(header, [row])[-1], flush=True)
    print(f"({time.monotonic() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
