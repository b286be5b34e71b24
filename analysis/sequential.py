"""A group-sequential comparison over rounds of seeds: after each round, stop a configuration
whose difference from the baseline is decided (efficacy, either sign) or futile, else give it
the next round's seeds, up to a maximum.

- Statistic: the paired differences ``D[s, i]`` (seed s, example i) of the seeds run so far,
  tested as the report's seed-aware default does (:func:`analysis.stats.crossed_test`): their
  mean over its standard error under the crossed seed x example model, the run-level seed
  variance plus the examples' own. The t ratio becomes z through its p-value on S - 1
  degrees of freedom, the "significance level approach" to unknown variance of Jennison &
  Turnbull (2000, *Group Sequential Methods with Applications to Clinical Trials*, ch. 3).
  S - 1 (the seed part's own df), not the report's corrected Satterthwaite df: exact where
  the run-level part dominates and conservative otherwise, which keeps the interim rounds
  (2-4 df) at their spent alpha (docs/statistics.md).
- Information: the share of the maximum seeds a round has reached, fixed in advance (Lan &
  DeMets 1983 allow any such scale).
- Efficacy: symmetric two-sided boundaries from the Lan-DeMets spending function of
  O'Brien-Fleming type, each side spending ``2 - 2 Phi(z_{1 - alpha/4} / sqrt(t))`` (Lan &
  DeMets 1983, Biometrika 70:659; the one-sided form at alpha / 2, as gsDesign's sfLDOF and
  ldbounds' symmetric bounds), solved round by round on the canonical joint distribution
  (corr(Z_j, Z_k) = sqrt(t_j / t_k), Jennison & Turnbull 2000, eq. 3.1; scipy's multivariate
  normal, Genz's integration).
- Futility (non-binding: the efficacy boundaries ignore it, so it only lowers the type-I
  error): stop when the conditional power under the current trend,
  ``Phi((|z| / sqrt(t) - c_K) / sqrt(1 - t))``, falls below ``futility_power`` (Lan, Simon &
  Halperin 1982's stochastic curtailment, in the B-value form of Lan & Wittes 1988).
- Adjusted p-value: stage-wise ordering (Jennison & Turnbull 2000, pp. 179-180): stopping at
  round k with z is as extreme as every earlier efficacy stop plus reaching round k with
  |Z_k| >= |z|.
"""

import json
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from analysis.stats import crossed_moments
from analysis.tables import markdown_table

CONTINUE, EFFICACY, FUTILITY, MAXIMUM = "continue", "efficacy", "futility", "maximum"
# The parent-run tag where a sweep with sequential seeds records its design and decisions
# (sweeps/running/sequential_seeds.py), as JSON.
SEQUENTIAL_TAG = "xlt.sequential"
# Seeds added per round: 3 first (a seed variance on 2 df), then one at a time, 5 at most (the
# papers' 5 seeds).
DEFAULT_ROUNDS = (3, 1, 1)
DEFAULT_FUTILITY_POWER = 0.1
# Genz's integration: absolute error of each probability, and a fixed stream so that the
# boundaries of a design never change between runs.
_INTEGRATION_ERROR = 1e-5
_INTEGRATION_SEED = 0


def obrien_fleming_spending(information, alpha: float) -> np.ndarray:
    """Two-sided type-I error spent by information fraction t: each side spends
    2 - 2 Phi(z_{1 - alpha/4} / sqrt(t)), the O'Brien-Fleming-type function at the one-sided
    level alpha / 2 (as gsDesign's sfLDOF and ldbounds do for a symmetric two-sided test)."""
    t = np.asarray(information, dtype=float)
    return 2 * (2 - 2 * stats.norm.cdf(stats.norm.isf(alpha / 4) / np.sqrt(t)))


def _stay_probability(bounds, information) -> float:
    """P(|Z_j| < bounds[j] for every j) under the null, Z's canonical joint distribution."""
    t = np.asarray(information, dtype=float)
    if len(t) == 1:
        return float(1 - 2 * stats.norm.sf(bounds[0]))
    covariance = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    upper = np.asarray(bounds, dtype=float)
    return float(
        stats.multivariate_normal.cdf(
            upper,
            cov=covariance,
            lower_limit=-upper,
            abseps=_INTEGRATION_ERROR,
            releps=0,
            rng=np.random.default_rng(_INTEGRATION_SEED),
        )
    )


def efficacy_boundaries(information, alpha: float) -> np.ndarray:
    """Two-sided z boundaries, one per analysis at the increasing information fractions, that
    spend the O'Brien-Fleming-type alpha(t_k) - alpha(t_{k-1}) at analysis k."""
    spent = obrien_fleming_spending(information, alpha)
    bounds: list[float] = []
    for k in range(len(spent)):
        target = 1 - spent[k]  # P(no crossing up to k)

        def gap(c, k=k):
            return _stay_probability([*bounds, c], information[: k + 1]) - target

        bounds.append(float(optimize.brentq(gap, 1.0, 12.0, xtol=1e-4)))
    return np.asarray(bounds)


@dataclass(frozen=True)
class SequentialDesign:
    """Seeds per round, the two-sided level and the futility threshold; the boundaries follow."""

    round_seeds: tuple[int, ...] = DEFAULT_ROUNDS
    alpha: float = 0.05
    futility_power: float = DEFAULT_FUTILITY_POWER
    bounds: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if len(self.round_seeds) < 1 or self.round_seeds[0] < 2 or min(self.round_seeds) < 1:
            raise ValueError(
                f"round_seeds={self.round_seeds!r}: the first round needs at least 2 seeds "
                "(a seed variance), every later one at least 1"
            )
        if not 0 < self.alpha < 1 or not 0 <= self.futility_power < 1:
            raise ValueError(
                f"alpha={self.alpha!r} must be in (0, 1) and futility_power="
                f"{self.futility_power!r} in [0, 1)"
            )
        object.__setattr__(self, "bounds", efficacy_boundaries(self.information, self.alpha))

    @property
    def cumulative_seeds(self) -> np.ndarray:
        return np.cumsum(self.round_seeds)

    @property
    def max_seeds(self) -> int:
        return int(self.cumulative_seeds[-1])

    @property
    def information(self) -> np.ndarray:
        return self.cumulative_seeds / self.max_seeds

    def describe(self) -> str:
        bounds = ", ".join(f"{b:.2f}" for b in self.bounds)
        return (
            f"group-sequential over seed rounds {list(self.round_seeds)} (at most "
            f"{self.max_seeds} seeds): Lan-DeMets O'Brien-Fleming-type alpha spending, two-sided "
            f"alpha {self.alpha}, |z| boundaries {bounds}; non-binding futility when the "
            f"conditional power under the current trend is below {self.futility_power:.0%}"
        )


def crossed_z(differences) -> np.ndarray:
    """z of the mean paired difference for (..., seeds, examples) differences: the seed-aware
    test's t (:func:`analysis.stats.crossed_moments`) turned into z through its p-value on
    S - 1 df (module notes)."""
    mean, error, _ = crossed_moments(differences)
    seeds = np.shape(differences)[-2]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / error
    # No spread at all: no difference (0), or the same one on every example and seed (inf).
    t = np.where(error > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return stats.norm.isf(stats.t.sf(t, seeds - 1))


def decide(design: SequentialDesign, round_index: int, z):
    """The decision after round ``round_index`` (0-based) for z (array or scalar):
    efficacy, futility, continue, or maximum (the last round without crossing)."""
    z = np.abs(np.asarray(z, dtype=float))
    t = design.information[round_index]
    last = round_index == len(design.round_seeds) - 1
    if last:
        return np.where(z >= design.bounds[-1], EFFICACY, MAXIMUM)
    conditional = stats.norm.cdf((z / np.sqrt(t) - design.bounds[-1]) / np.sqrt(1 - t))
    futile = conditional < design.futility_power
    return np.where(z >= design.bounds[round_index], EFFICACY, np.where(futile, FUTILITY, CONTINUE))


def adjusted_p_value(design: SequentialDesign, round_index: int, z: float) -> float:
    """Stage-wise-ordering p-value of stopping after round ``round_index`` with z."""
    bounds = [*design.bounds[:round_index], abs(float(z))]
    return float(
        min(1.0, max(0.0, 1 - _stay_probability(bounds, design.information[: round_index + 1])))
    )


def run_rounds(design: SequentialDesign, differences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the design to (batch, max_seeds, examples) differences whose seeds come in round
    order: per comparison, the round it stopped after (0-based), its decision and its z."""
    differences = np.asarray(differences, dtype=float)
    batch = differences.shape[0]
    stopped = np.full(batch, -1)
    decision = np.full(batch, CONTINUE, dtype=object)
    final_z = np.zeros(batch)
    for k, seeds in enumerate(design.cumulative_seeds):
        open_rows = stopped < 0
        z = crossed_z(differences[open_rows, :seeds])
        now = decide(design, k, z)
        done = now != CONTINUE
        rows = np.flatnonzero(open_rows)[done]
        stopped[rows], decision[rows], final_z[rows] = k, now[done], z[done]
    return stopped, decision, final_z


def sequential_section(tags: dict) -> list[str]:
    """The report's section on a sweep's sequential seeds, from its parent run's tags; none
    when the sweep fixed its seeds up front."""
    if SEQUENTIAL_TAG not in tags:
        return []
    record = json.loads(tags[SEQUENTIAL_TAG])
    rows = [
        [
            outcome["label"],
            str(outcome["rounds"]),
            str(outcome["seeds"]),
            outcome["decision"],
            f"{outcome['z']:+.2f}",
            f"{outcome['p_adjusted']:.3g}",
        ]
        for outcome in record["configurations"]
    ]
    return [
        "## Sequential seeds",
        "",
        f"Design: {record['design']}. Each configuration was compared with the baseline on "
        f"{record['metric']} after every round (paired by seed; docs/statistics.md); a decided "
        f"or futile one got no more seeds. Trials run: {record['trials']} of at most "
        f"{record['max_trials']}. Adjusted p: stage-wise ordering; efficacy means the "
        "boundary was crossed (either sign: z says which).",
        "",
        *markdown_table(["Configuration", "Rounds", "Seeds", "Decision", "z", "Adjusted p"], rows),
    ]
