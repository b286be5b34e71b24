"""Simulated paired runs of a configuration and the baseline, with seed variance and
per-example correlation like a zero-shot XNLI language's, to check the power statement
(:mod:`analysis.power`) and the sequential design (:mod:`analysis.sequential`) against.

Each example has a difficulty shared by every run of both configurations (so the runs agree
on most examples, as fine-tuned models do); each run (configuration, seed) has its own shift
of every example (the seed's effect on the whole test set); each prediction has its own
noise. An example is right when difficulty + shift + noise + the configuration's gain > 0:
a probit model. With the defaults, accuracy is about 70%, a run's accuracy varies by about
0.6 points from seed to seed, and two seeds of one configuration disagree on about 14% of
the examples (mBERT's zero-shot XNLI: 65-75% on most targets, Hu et al. 2020, XTREME;
seed-to-seed spread of about a point, Keung et al. 2020, "Don't use English dev").
"""

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats


@dataclass(frozen=True)
class XnliLike:
    difficulty_mean: float = 0.6  # latent scale; the difficulty's std is 1
    seed_std: float = 0.02  # a run's shift of every example
    noise_std: float = 0.35  # one prediction's own noise

    @property
    def _scale(self) -> float:
        return float(np.sqrt(1 + self.seed_std**2 + self.noise_std**2))

    def accuracy(self, gain: float = 0.0) -> float:
        return float(stats.norm.cdf((self.difficulty_mean + gain) / self._scale))

    def gain_for(self, difference: float) -> float:
        """The latent gain whose expected accuracy difference is ``difference``."""
        base = self.accuracy()
        return float(optimize.brentq(lambda g: self.accuracy(g) - base - difference, -5, 5))

    def runs(
        self, rng: np.random.Generator, repeats: int, seeds: int, examples: int, gain: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(system, baseline) 0/1 scores, each (repeats, seeds, examples), paired by seed and
        example; a fresh test set for every repeat."""
        difficulty = rng.standard_normal((repeats, 1, examples)) + self.difficulty_mean

        def run(offset: float) -> np.ndarray:
            shift = self.seed_std * rng.standard_normal((repeats, seeds, 1))
            noise = self.noise_std * rng.standard_normal((repeats, seeds, examples))
            return (difficulty + shift + noise + offset > 0).astype(np.float32)

        return run(gain), run(0.0)


@dataclass(frozen=True)
class DesignFigures:
    """How often each way of deciding rejects, and the seeds the sequential design spends."""

    difference: float  # the true accuracy difference (score units)
    comparisons: int
    sequential_rejects: float
    sequential_mean_seeds: float
    fixed_rejects: float  # the crossed z at the maximum seeds, level alpha
    ttest_rejects: float  # the sweep's seed-averaged t-test at the maximum seeds
    max_seeds: int


def design_figures(
    design,
    difference: float,
    comparisons: int = 2000,
    examples: int = 1000,
    model: XnliLike = XnliLike(),
    seed: int = 0,
    chunk: int = 250,
) -> DesignFigures:
    """Simulate ``comparisons`` paired sweeps at a true ``difference`` and decide each with
    ``design`` (:class:`analysis.sequential.SequentialDesign`), with fixed seeds (the
    maximum) on the same runs, and with the sweep's t-test on them."""
    from analysis.sequential import EFFICACY, crossed_z, run_rounds
    from analysis.stats import ttest_batch

    rng = np.random.default_rng(seed)
    gain = model.gain_for(difference) if difference else 0.0
    counts = np.zeros(4)
    for start in range(0, comparisons, chunk):
        size = min(chunk, comparisons - start)
        system, baseline = model.runs(rng, size, design.max_seeds, examples, gain)
        differences = system - baseline
        stopped, decision, _ = run_rounds(design, differences)
        critical = stats.norm.isf(design.alpha / 2)
        counts += [
            np.count_nonzero(decision == EFFICACY),
            design.cumulative_seeds[stopped].sum(),
            np.count_nonzero(np.abs(crossed_z(differences)) >= critical),
            np.count_nonzero(ttest_batch(system, baseline).p_value < design.alpha),
        ]
    rates = counts / comparisons
    return DesignFigures(difference, comparisons, *rates, design.max_seeds)


def main(argv: list[str] | None = None) -> None:
    """Print the figures of docs/statistics.md: the default sequential design against fixed
    seeds, under the null and at the given differences (points)."""
    import argparse

    from analysis.sequential import SequentialDesign

    parser = argparse.ArgumentParser(prog="python -m analysis.seed_simulation")
    parser.add_argument("--examples", type=int, default=5010, help="test examples (XNLI: 5010)")
    parser.add_argument("--comparisons", type=int, default=4000)
    parser.add_argument("--differences", default="0,0.5,1,1.5", help="points, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    design = SequentialDesign()
    print(design.describe())
    print("difference | sequential rejects | mean seeds | fixed rejects | t-test rejects")
    for index, points in enumerate(float(p) for p in args.differences.split(",")):
        figures = design_figures(
            design, points / 100, args.comparisons, args.examples, seed=args.seed + index
        )
        print(
            f"{points:.1f} | {figures.sequential_rejects:.3f} | "
            f"{figures.sequential_mean_seeds:.2f} of {figures.max_seeds} | "
            f"{figures.fixed_rejects:.3f} | {figures.ttest_rejects:.3f}"
        )


if __name__ == "__main__":
    main()
