"""Racing over seeds: every candidate starts with a few seeds, each round adds seeds to the
ones still in the race, and a candidate is dropped once a one-sided paired test on the seeds
it shares with the current leader (the candidate best on its seeds' mean) shows it worse.
Pure compute over (candidates, seeds) arrays of selection-split scores, NaN where a candidate
has no finished run on a seed; `sweeps/strategies/race.py` runs it on a sweep.

- Test (``pooled``, the default): the candidate's mean paired difference from the leader over
  the seeds both have, over its standard error sqrt(2 sigma^2 / n), where sigma^2 is the
  residual variance of the seed-blocked two-way layout (candidates x seeds, additive) of the
  candidates still in the race that have every seed so far, on its (k - 1)(S - 1) degrees of
  freedom: the randomized-block t of a block design (seeds are the blocks: a seed pairs
  every candidate's run). It assumes one seed variance for every candidate; ``paired`` drops
  that assumption (the differences' own variance on n - 1 df) and pays for it with power at
  2-3 seeds.
- Error control (Bonferroni): each test is one-sided at alpha / (R (K - 1)), R the rounds
  that test (every round but the last: at the seed budget the leader wins whatever the last
  tests say) and K the candidates the race starts with. The truly best candidate is dropped
  only when one of its R (K - 1) comparisons with another candidate rejects although it is
  not worse; whichever candidate leads, the union bound holds P(the best is dropped) <= alpha.
  Candidates tied with the best share that bound each, so the chance that some tie is dropped
  can reach the number of ties x alpha (benchmarks/race.py measures both).
- End: one candidate left, or the last round (the seed budget): the leader wins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from scipy import stats

from analysis.tables import markdown_table

POOLED, PAIRED = "pooled", "paired"
# Seeds per round: 2 first (a seed variance), then one at a time up to the papers' 5.
DEFAULT_ROUND_SEEDS = (2, 1, 1, 1)
DEFAULT_ALPHA = 0.05
# The parent-run tag where a race records its design, rounds and eliminations (JSON).
RACE_TAG = "xlt.race"


@dataclass(frozen=True)
class RaceDesign:
    """The candidates the race starts with, the seeds each round adds, the error rate of
    dropping the best candidate, and the test."""

    candidates: int
    round_seeds: tuple[int, ...] = DEFAULT_ROUND_SEEDS
    alpha: float = DEFAULT_ALPHA
    test: str = POOLED

    def __post_init__(self):
        if self.candidates < 1 or not self.round_seeds or self.round_seeds[0] < 2:
            raise ValueError(
                f"candidates={self.candidates}, round_seeds={self.round_seeds!r}: at least one "
                "candidate, and a first round of at least 2 seeds (a seed variance)"
            )
        if min(self.round_seeds) < 1 or not 0 < self.alpha < 1 or self.test not in (POOLED, PAIRED):
            raise ValueError(
                f"round_seeds={self.round_seeds!r}, alpha={self.alpha!r}, test={self.test!r}: "
                f"rounds of at least 1 seed, alpha in (0, 1), test {POOLED} or {PAIRED}"
            )

    @property
    def cumulative_seeds(self) -> tuple[int, ...]:
        return tuple(int(n) for n in np.cumsum(self.round_seeds))

    @property
    def max_seeds(self) -> int:
        return self.cumulative_seeds[-1]

    @property
    def tested_rounds(self) -> int:
        return len(self.round_seeds) - 1

    @property
    def level(self) -> float:
        """Each test's one-sided level: alpha split over the tested rounds x opponents."""
        return self.alpha / max(1, self.tested_rounds * (self.candidates - 1))

    def describe(self) -> str:
        return (
            f"race over seed rounds {list(self.round_seeds)} (at most {self.max_seeds} seeds) "
            f"of {self.candidates} candidates: after each round but the last, a candidate "
            f"worse than the leader by a one-sided {self.test} seed-blocked t-test at "
            f"{self.level:.3g} (alpha {self.alpha} split over {self.tested_rounds} rounds x "
            f"{max(self.candidates - 1, 0)} opponents, Bonferroni) is dropped"
        )


@dataclass(frozen=True)
class Elimination:
    """One dropped candidate: the round (0-based) after which, the seeds it shared with the
    leader, the leader, and the test (t, its df, its one-sided p)."""

    candidate: int
    round: int
    seeds: int
    leader: int
    t: float
    df: float
    p: float

    def record(self) -> dict:
        return {
            "round": self.round + 1,
            "seeds": self.seeds,
            "leader": self.leader,
            "t": round(self.t, 4),
            "df": self.df,
            "p": self.p,
        }


def leader(scores, alive) -> int:
    """The candidate in the race with the highest mean over its seeds (the first on a tie)."""
    means = np.full(len(scores), -np.inf)
    for candidate in np.flatnonzero(alive):
        row = scores[candidate]
        if not np.isnan(row).all():
            means[candidate] = np.nanmean(row)
    return int(np.argmax(means))


def pooled_variance(scores, alive) -> tuple[float, float] | None:
    """Residual variance and df of the additive candidates x seeds layout of the candidates in
    the race with every seed; None when fewer than 2 such candidates or 2 seeds."""
    rows = scores[alive & ~np.isnan(scores).any(axis=1)]
    k, seeds = rows.shape
    if k < 2 or seeds < 2:
        return None
    residuals = rows - rows.mean(axis=1, keepdims=True) - rows.mean(axis=0) + rows.mean()
    df = (k - 1) * (seeds - 1)
    return float((residuals**2).sum() / df), float(df)


def _t_and_p(mean, variance, n, df) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.sqrt(variance / n)
        t = mean / error
    # No spread: the same difference on every seed.
    t = np.where(error > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return t, stats.t.cdf(t, df)


def compare_with_leader(design: RaceDesign, scores, alive, best: int) -> dict[int, tuple]:
    """Per candidate in the race other than ``best`` with 2+ seeds shared with it: (seeds, t,
    df, one-sided p that it is not worse)."""
    shared = ~np.isnan(scores) & ~np.isnan(scores[best])
    n = shared.sum(axis=1)
    tested = np.flatnonzero(alive & (n >= 2) & (np.arange(len(scores)) != best))
    if not len(tested):
        return {}
    differences = np.where(shared, scores - scores[best], np.nan)[tested]
    n = n[tested]
    mean = np.nanmean(differences, axis=1)
    pooled = pooled_variance(scores, alive) if design.test == POOLED else None
    if pooled:
        variance, df = np.full(len(tested), 2 * pooled[0]), np.full(len(tested), pooled[1])
    else:
        variance, df = np.nanvar(differences, axis=1, ddof=1), n - 1.0
    t, p = _t_and_p(mean, variance, n, df)
    return {
        int(c): (int(k), float(ti), float(d), float(pi))
        for c, k, ti, d, pi in zip(tested, n, t, df, p)
    }


def race_round(design: RaceDesign, round_index: int, scores, alive) -> tuple[int, list]:
    """After round ``round_index`` (0-based) on ``scores`` (candidates, seeds so far; NaN where
    none) with ``alive`` the candidates still in the race: the leader and the candidates the
    round drops (none after the last round: the leader then wins)."""
    scores, alive = np.asarray(scores, dtype=float), np.asarray(alive, dtype=bool)
    best = leader(scores, alive)
    if round_index >= design.tested_rounds:
        return best, []
    dropped = [
        Elimination(candidate, round_index, n, best, t, df, p)
        for candidate, (n, t, df, p) in compare_with_leader(design, scores, alive, best).items()
        if p < design.level
    ]
    return best, dropped


@dataclass(frozen=True)
class RaceOutcome:
    winner: int
    trials: int  # candidate trials run (the baseline's aside)
    rounds: int  # rounds run
    dropped_after: np.ndarray  # per candidate, the round (0-based) after which; -1 never


def race_section(tags: dict) -> list[str]:
    """The report's section on a sweep's race, from its parent run's tags (RACE_TAG): each
    configuration's rounds, seeds and how it left the race; none for a sweep that did not race."""
    if RACE_TAG not in tags:
        return []
    record = json.loads(tags[RACE_TAG])
    rounds = record["rounds"]
    rows = []
    for label in rounds[0]["running"]:
        raced = [r for r in rounds if label in r["running"]]
        last = raced[-1]
        if label in last["dropped"]:
            test = last["dropped"][label]
            outcome = f"dropped (behind {test['leader']}: t {test['t']:+.2f}, p {test['p']:.2g})"
        else:
            outcome = "won" if label == rounds[-1]["leader"] else "raced to the last seed"
        rows.append([label, str(len(raced)), str(sum(len(r["seeds"]) for r in raced)), outcome])
    return [
        "## Seed race",
        "",
        f"Design: {record['design']}. Compared on {record['metric']} after every round (docs/"
        f'statistics.md, "Seed racing"). Trials run: {record["trials"]} of at most '
        f"{record['max_trials']}, the baseline's included.",
        "",
        *markdown_table(["Configuration", "Rounds", "Seeds", "Outcome"], rows),
    ]


def run_race(design: RaceDesign, scores) -> RaceOutcome:
    """The race on complete ``scores`` (candidates, max_seeds; seeds in round order), each
    candidate seeing only the seeds of the rounds it was in."""
    scores = np.asarray(scores, dtype=float)
    cumulative = np.asarray(design.cumulative_seeds)
    alive = np.ones(len(scores), dtype=bool)
    dropped_after = np.full(len(scores), -1)
    trials, start = 0, 0
    for index, seeds in enumerate(cumulative):
        trials += int(alive.sum()) * int(seeds - start)
        start = seeds
        ran = np.where(alive, seeds, cumulative[dropped_after])
        seen = np.where(np.arange(seeds) < ran[:, None], scores[:, :seeds], np.nan)
        best, dropped = race_round(design, index, seen, alive)
        for elimination in dropped:
            alive[elimination.candidate] = False
            dropped_after[elimination.candidate] = index
        if alive.sum() == 1:
            break
    return RaceOutcome(best, trials, index + 1, dropped_after)


def survivors_by_round(design: RaceDesign, kept_share: float) -> list[int]:
    """Candidates running each round when every tested round keeps ``kept_share`` of its
    candidates (to the nearest, at least 1); the race ends early when 1 is left."""
    running, counts = design.candidates, []
    for _ in design.round_seeds:
        counts.append(running)
        if running == 1:
            break
        running = max(1, int(np.floor(running * kept_share + 0.5)))
    return counts


def race_trials(design: RaceDesign, kept_share: float = 1.0) -> int:
    """Candidate trials of a race in which every tested round keeps ``kept_share`` of its
    candidates: 1.0 (no eliminations) gives the worst case, candidates x max_seeds."""
    counts = survivors_by_round(design, kept_share)
    return sum(count * seeds for count, seeds in zip(counts, design.round_seeds))
