"""The probit model of simulated paired runs that the calibrations share
(:mod:`analysis.calibration`, :mod:`analysis.parallel_calibration`).

Unit (example, or entity slot for NER) i of run (method m, seed s) is right when

    mu + difficulty[i] + method[m, i] + shift[m, s] + noise[m, s, i] + gain[m] > 0

``difficulty`` ~ N(0, 1) is shared by both methods; ``method`` ~ N(0, omega^2) is each method's
own view of an example (omega 0: the methods agree on every example's difficulty, and a run
of each disagrees only through seed noise, on 13% of the examples at accuracy 0.7; omega
``DISAGREEING_OMEGA``: on 20%, of which 6 points are the methods' own); ``shift`` ~ N(0,
tau^2) is a whole run's seed shift, tau set so that a run's accuracy varies by ``seed_sd``
points from seed to seed; ``noise`` ~ N(0, ``NOISE_SD``^2) is each prediction's own. ``mu``
gives the accuracy.

Parallel test sets (XNLI's languages, translations of one item set): the translations of an
item share its difficulty and each method's effect on it (``method[m, i]``), while every
language has its own seed shifts and prediction noise, each at the one-language scale above.
"""

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

ALPHA = 0.05  # every calibrated test's level
NOISE_SD = 0.35  # a prediction's own noise: two seeds of a method disagree on ~14% (XNLI-like)
DISAGREEING_OMEGA = 0.45  # the methods' own example effects (module notes)


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
    item_effect: float = DISAGREEING_OMEGA  # omega when the methods disagree

    @property
    def omega(self) -> float:
        return self.item_effect if self.disagree else 0.0

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


def latents(
    rng: np.random.Generator,
    cell: Cell,
    repeats: int,
    units: int,
    gain: float,
    languages: int | None = None,
    dtype=np.float64,
):
    """Both methods' latents, each (repeats, seeds, units), paired by seed and unit; with
    ``languages``, (repeats, languages, seeds, units): that many translations of each unit,
    sharing its difficulty and each method's effect on it, with their own shifts and noise."""
    runs = (repeats,) if languages is None else (repeats, languages)
    items = (repeats, *(1,) * len(runs), units)  # one draw per unit, shared by its runs
    difficulty = rng.standard_normal(items, dtype) + dtype(cell.mu)

    def run(offset: float) -> np.ndarray:
        own = cell.omega * rng.standard_normal(items, dtype) if cell.disagree else 0.0
        shift = dtype(cell.tau) * rng.standard_normal((*runs, cell.seeds, 1), dtype)
        noise = dtype(NOISE_SD) * rng.standard_normal((*runs, cell.seeds, units), dtype)
        return difficulty + own + shift + noise + dtype(offset)

    return run(gain), run(0.0)
