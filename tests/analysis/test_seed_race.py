"""The seed race (analysis/seed_race.py) on cases computed by hand: its leader, its tests (the
seed-blocked pooled variance and the paired one), its Bonferroni level, when it ends, its
trial counts, and its level on a null landscape."""

import json

import numpy as np
import pytest
from scipy import stats

from analysis.seed_race import (
    PAIRED,
    RACE_TAG,
    RaceDesign,
    leader,
    pooled_variance,
    race_round,
    race_section,
    race_trials,
    run_race,
    survivors_by_round,
)

# Three candidates on two seeds: A leads (mean 11), B trails it by 0.75, C by 5.5.
SCORES = np.array([[10.0, 12.0], [9.0, 11.5], [5.0, 6.0]])
ALIVE = np.ones(3, dtype=bool)


def test_the_level_splits_alpha_over_the_tested_rounds_and_opponents():
    design = RaceDesign(candidates=3)  # rounds (2, 1, 1, 1): 3 tested, 2 opponents each
    assert design.level == pytest.approx(0.05 / 6)
    assert design.cumulative_seeds == (2, 3, 4, 5) and design.max_seeds == 5
    assert RaceDesign(candidates=1).level == 0.05
    assert "at 0.00833 (alpha 0.05 split over 3 rounds x 2 opponents" in design.describe()


@pytest.mark.parametrize(
    "settings",
    [{"candidates": 0}, {"candidates": 2, "round_seeds": (1, 1)}, {"candidates": 2, "alpha": 1},
     {"candidates": 2, "test": "wilcoxon"}, {"candidates": 2, "round_seeds": (2, 0)}],
)  # fmt: skip
def test_a_design_it_cannot_run_is_refused(settings):
    with pytest.raises(ValueError):
        RaceDesign(**settings)


def test_the_pooled_variance_is_the_block_layouts_residual():
    # Row means 11, 10.25, 5.5; seed means 8, 9.8333; grand mean 8.9167. Residuals
    # +-1/12, +-1/3, +-5/12: sum of squares 2 (1/144 + 16/144 + 25/144) = 7/12 on 2 df.
    assert pooled_variance(SCORES, ALIVE) == pytest.approx((7 / 24, 2.0))
    # A candidate out of the race, or one missing a seed, takes no part.
    assert pooled_variance(SCORES, np.array([True, True, False])) == pytest.approx((1 / 16, 1.0))
    missing = SCORES.copy()
    missing[2, 1] = np.nan
    assert pooled_variance(missing, ALIVE) == pytest.approx((1 / 16, 1.0))


def test_a_round_drops_the_candidate_clearly_worse_than_the_leader():
    design = RaceDesign(candidates=3)
    best, dropped = race_round(design, 0, SCORES, ALIVE)
    assert best == 0
    # C: mean difference -5.5, standard error sqrt(2 x 7/24 / 2) = 0.540, t = -10.18 on 2 df.
    (elimination,) = dropped
    assert (elimination.candidate, elimination.round, elimination.seeds) == (2, 0, 2)
    assert elimination.t == pytest.approx(-5.5 / np.sqrt(7 / 24))
    assert elimination.p == pytest.approx(stats.t.cdf(-5.5 / np.sqrt(7 / 24), 2))
    assert elimination.p < design.level
    assert elimination.record()["round"] == 1


def test_the_paired_test_uses_each_pairs_own_variance_and_keeps_c_on_one_df():
    # C - A: differences -5, -6: standard error 0.5, t = -11 on 1 df, p = 0.029 > 0.0083.
    assert race_round(RaceDesign(candidates=3, test=PAIRED), 0, SCORES, ALIVE) == (0, [])
    assert stats.t.cdf(-11, 1) > 0.05 / 6


def test_the_last_round_drops_nobody_and_names_the_leader():
    design = RaceDesign(candidates=3, round_seeds=(2,))
    assert race_round(design, 0, SCORES, ALIVE) == (0, [])


def test_the_leader_is_the_best_mean_over_its_own_seeds_in_the_race():
    scores = np.array([[1.0, np.nan], [0.0, 1.0], [5.0, 5.0]])
    assert leader(scores, np.array([True, True, False])) == 0
    assert leader(scores, ALIVE) == 2


def test_constant_differences_drop_the_worse_and_keep_the_tied():
    scores = np.array([[3.0, 4.0], [3.0, 4.0], [2.0, 3.0]])
    best, dropped = race_round(RaceDesign(candidates=3), 0, scores, ALIVE)
    assert best == 0 and [e.candidate for e in dropped] == [2]
    assert dropped[0].t == -np.inf and dropped[0].p == 0


def test_a_race_ends_when_one_candidate_is_left():
    scores = np.array([[10.0, 10.1, 9.9, 10, 10], [0, 0.1, -0.1, 0, 0]])
    outcome = run_race(RaceDesign(candidates=2), scores)
    assert (outcome.winner, outcome.rounds, outcome.trials) == (0, 1, 4)
    assert list(outcome.dropped_after) == [-1, 0]


def test_a_race_without_eliminations_runs_the_worst_case():
    design = RaceDesign(candidates=4)
    outcome = run_race(design, np.zeros((4, 5)))
    assert outcome.trials == race_trials(design) == 4 * 5
    assert (outcome.winner, outcome.rounds) == (0, 4)


def test_a_dropped_candidate_sees_no_later_seeds():
    # Round 1 drops candidate 2; candidate 1, close to 0, runs to the end.
    rng = np.random.default_rng(0)
    scores = np.array([[5.0] * 5, [4.9] * 5, [0.0] * 5]) + rng.normal(0, 0.05, (3, 5))
    outcome = run_race(RaceDesign(candidates=3), scores)
    assert list(outcome.dropped_after)[2] == 0
    assert outcome.trials == 3 * 2 + 2 * 3


def test_the_expected_cost_keeps_a_share_each_round():
    design = RaceDesign(candidates=8)
    assert survivors_by_round(design, 0.5) == [8, 4, 2, 1]
    assert race_trials(design, 0.5) == 8 * 2 + 4 + 2 + 1
    assert survivors_by_round(RaceDesign(candidates=1), 0.5) == [1]


def test_the_best_is_dropped_no_more_often_than_alpha_on_a_null_landscape():
    design = RaceDesign(candidates=4)
    rng = np.random.default_rng(3)
    dropped = [run_race(design, rng.normal(0, 1, (4, 5))).dropped_after[0] >= 0 for _ in range(400)]
    # The bound is 5%; Bonferroni's is conservative: a binomial 400 x 5% would exceed 9%
    # with p < 0.001.
    assert np.mean(dropped) < 0.09


def test_the_report_section_shows_each_configuration_by_round():
    record = {
        "design": "race over seed rounds [2, 1]",
        "metric": "dev/en/accuracy",
        "trials": 9,
        "max_trials": 12,
        "rounds": [
            {"round": 1, "seeds": [0, 1], "running": ["a", "b", "c"], "leader": "a",
             "dropped": {"c": {"round": 1, "seeds": 2, "leader": "a", "t": -9.0, "df": 2.0,
                               "p": 0.006}}},
            {"round": 2, "seeds": [2], "running": ["a", "b"], "leader": "b", "dropped": {}},
        ],
    }  # fmt: skip
    lines = race_section({RACE_TAG: json.dumps(record)})
    assert lines[0] == "## Seed race"
    assert "Trials run: 9 of at most 12" in lines[2]
    assert "| a | 2 | 3 | raced to the last seed |" in lines
    assert "| b | 2 | 3 | won |" in lines
    assert "| c | 1 | 2 | dropped (behind a: t -9.00, p 0.006) |" in lines
    assert race_section({}) == []
