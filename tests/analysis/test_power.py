"""Power and the minimum detectable difference (analysis/power.py), checked against the
sweep's own t-test on simulated XNLI-like runs and its permutation test on simulated NER-like
entity counts."""

import dataclasses

import numpy as np
import pytest
from scipy import optimize, stats

# The fake sweeps of the report tests, their fixtures, and their names.
from test_registry_reports import BEST, FEW_KEYS, _make_sweep, store  # noqa: F401
from test_registry_reports import SEEDS as SWEEP_SEEDS
from test_report import EXPERIMENT, GOOD_LABEL, sweep  # noqa: F401

from analysis.power import (
    VarianceComponents,
    crossed_power,
    minimum_detectable_difference,
    permutation_power,
    seeds_needed,
    ttest_power,
    variance_components,
)
from analysis.seed_simulation import XnliLike
from analysis.stats import (
    crossed_test_batch,
    entity_f1,
    f1_contributions,
    permutation_test_batch,
    ttest_batch,
)

EXAMPLES = 1000
SEEDS = 5


@pytest.fixture(scope="module")
def pilot() -> VarianceComponents:
    """The components of a long pilot (2,000 seeds), so that their estimation error is small
    next to the tolerance of the check."""
    system, baseline = XnliLike().runs(np.random.default_rng(11), 1, 2000, EXAMPLES, 0.0)
    return variance_components(system[0], baseline[0])


def _rejection_rate(difference: float, repeats: int, seed: int) -> float:
    model = XnliLike()
    gain = model.gain_for(difference) if difference else 0.0
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(repeats // 500):
        system, baseline = model.runs(rng, 500, SEEDS, EXAMPLES, gain)
        rejected += np.count_nonzero(ttest_batch(system, baseline).p_value < 0.05)
    return rejected / repeats


def test_the_test_rejects_80_percent_at_the_minimum_detectable_difference(pilot):
    difference = minimum_detectable_difference(pilot, SEEDS, test="ttest")
    assert 0.005 < difference < 0.05  # about 1.5 points on 1,000 examples and 5 seeds
    assert _rejection_rate(difference, 2000, seed=1) == pytest.approx(0.80, abs=0.04)


def test_the_stated_false_positive_rate_under_seed_variance_holds(pilot):
    stated = ttest_power(0.0, pilot, SEEDS)
    assert stated > 0.08  # the seed-averaged t-test never sees the run-level term
    assert _rejection_rate(0.0, 2000, seed=2) == pytest.approx(stated, abs=0.03)


def test_without_seed_variance_it_is_the_textbook_paired_t_test_power():
    components = VarianceComponents(
        0.0, example=0.04, seed=0.0, noise=0.0, n_examples=200, n_seeds=3
    )
    ncp = 0.03 * np.sqrt(200) / 0.2
    critical = stats.t.ppf(0.975, 199)
    expected = stats.nct.sf(critical, 199, ncp) + stats.nct.cdf(-critical, 199, ncp)
    assert ttest_power(0.03, components, 3) == pytest.approx(expected, rel=1e-9)
    assert ttest_power(0.0, components, 3) == pytest.approx(0.05, abs=1e-9)
    # Normal approximation of the minimum detectable difference: (z_.975 + z_.8) sd / sqrt(n).
    mdd = minimum_detectable_difference(components, 3, test="ttest")
    assert mdd == pytest.approx((1.96 + 0.8416) * 0.2 / np.sqrt(200), rel=0.01)


def test_seeds_needed_is_the_first_count_that_reaches_the_power(pilot):
    seeds = seeds_needed(0.015, pilot, test="ttest")
    assert seeds is not None and seeds > 1
    assert ttest_power(0.015, pilot, seeds) >= 0.8 > ttest_power(0.015, pilot, seeds - 1)
    assert seeds_needed(1e-5, pilot, max_seeds=20, test="ttest") is None


def test_variance_components_recover_planted_ones():
    rng = np.random.default_rng(3)
    seeds, examples = 400, 2000
    example = rng.normal(0, 0.3, (1, examples))
    seed = rng.normal(0, 0.02, (seeds, 1))
    noise = rng.normal(0, 0.5, (seeds, examples))
    components = variance_components(0.01 + example + seed + noise, np.zeros((seeds, examples)))
    assert components.example == pytest.approx(0.09, rel=0.1)
    assert components.seed == pytest.approx(0.0004, rel=0.2)
    assert components.noise == pytest.approx(0.25, rel=0.02)
    assert components.mean_difference == pytest.approx(
        0.01 + example.mean() + seed.mean(), abs=1e-3
    )


def test_one_seed_is_refused_with_what_is_needed():
    with pytest.raises(ValueError, match="at least 2 paired seeds"):
        variance_components(np.zeros((1, 10)), np.zeros((1, 10)))
    with pytest.raises(ValueError, match="shaped"):
        variance_components(np.zeros((2, 10)), np.zeros((2, 9)))


def test_a_seed_variance_that_swamps_the_test_has_no_minimum_detectable_difference(pilot):
    swamped = dataclasses.replace(pilot, seed=1.0)
    assert ttest_power(0.0, swamped, SEEDS) > 0.8
    assert np.isnan(minimum_detectable_difference(swamped, SEEDS, test="ttest"))


def test_the_seed_aware_test_rejects_80_percent_at_its_minimum_detectable_difference(pilot):
    """The default test's power model (crossed_power) against the test itself on the same
    simulation: 5% at no difference, 80% +- 4% at its MDD (2,000 repeats each)."""
    assert crossed_power(0.0, pilot, SEEDS) == pytest.approx(0.05, abs=0.002)
    difference = minimum_detectable_difference(pilot, SEEDS)  # the default: crossed
    # The seed term it sees makes the MDD larger than the seed-averaged t-test's.
    assert difference > minimum_detectable_difference(pilot, SEEDS, test="ttest")
    model, rng = XnliLike(), np.random.default_rng(21)
    gain = model.gain_for(difference)
    rejected = 0
    for _ in range(4):
        system, baseline = model.runs(rng, 500, SEEDS, EXAMPLES, gain)
        rejected += np.count_nonzero(crossed_test_batch(system, baseline).p_value < 0.05)
    assert rejected / 2000 == pytest.approx(0.80, abs=0.04)


def test_the_report_states_the_power_and_the_seeds_for_a_target(sweep, tmp_path, capsys):  # noqa: F811
    from analysis.__main__ import main

    out = tmp_path / "report"
    code = main(
        [
            "report",
            "--experiment",
            EXPERIMENT,
            "--tracking-uri",
            sweep.tracking_uri,
            "--parent-run",
            sweep.parent_run_id,
            "--out",
            str(out),
            "--no-register",
            "--target-difference",
            "0.5",
        ]
    )
    assert code == 0, capsys.readouterr().err
    markdown = (out / "report.md").read_text(encoding="utf-8")
    section = markdown.split("## Power and the minimum detectable difference")[1].split("\n## ")[0]
    assert "Seeds for 0.5 points" in section
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|")[:2]): line
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
    }
    assert (GOOD_LABEL, "dev/en") in rows and (GOOD_LABEL, "test/es") in rows
    system = np.stack([sweep.scores[(GOOD_LABEL, seed, "test", "es")] for seed in (0, 1)])
    baseline = np.stack([sweep.scores[("finetune", seed, "test", "es")] for seed in (0, 1)])
    # The default test's MDD, at the seed variance's 90% upper bound (with 2 seeds, 1 df).
    components = variance_components(system, baseline)
    expected = minimum_detectable_difference(components.conservative(), 2)
    assert components.seed_upper >= components.seed
    cells = [cell.strip() for cell in rows[GOOD_LABEL, "test/es"].strip("|").split("|")]
    assert cells[2] == "2"
    seed_std = f"{100 * np.sqrt(components.seed):.2f}"
    assert cells[4] == f"{seed_std} (≤ {100 * np.sqrt(components.seed_upper):.2f})"
    assert cells[5] == f"{100 * expected:.2f}"


def test_a_dry_run_states_the_power_from_a_pilot_sweep(sweep, capsys):  # noqa: F811
    from sweeps import ear_xnli
    from sweeps.cli import main

    argv = ["--dry-run", "--tracking-uri", sweep.tracking_uri, "--set", "seeds=0,1,2,3"]
    assert main(ear_xnli, [*argv, "--pilot", EXPERIMENT, "--target-difference", "0.5"]) == 0
    out = capsys.readouterr().out
    assert f"Power for 4 seeds, from pilot sweep {EXPERIMENT} (parent run " in out
    assert f"{sweep.parent_run_id}, 2 seeds run there)" in out
    assert f"| {GOOD_LABEL} | test/es | 4 |" in out
    assert "| Seeds for 0.5 points |" in out


def test_a_dry_run_without_a_pilot_says_it_needs_one(capsys):
    from sweeps import ear_xnli
    from sweeps.cli import main

    assert main(ear_xnli, ["--dry-run"]) == 0
    assert (
        "Power: not stated: it needs a pilot sweep (--pilot EXPERIMENT" in capsys.readouterr().out
    )


def test_an_unknown_pilot_is_refused_naming_the_flag(sweep, capsys):  # noqa: F811
    from sweeps import ear_xnli
    from sweeps.cli import main

    argv = ["--dry-run", "--tracking-uri", sweep.tracking_uri, "--pilot", "nope"]
    assert main(ear_xnli, argv) == 2
    assert "invalid setting --pilot='nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- NER: pooled F1


def test_f1_contributions_by_hand():
    # Three sentences, [tp, fp, fn]: pooled TP 3, FP 2, FN 2, so F1 = 6 / 10 = 0.6. With
    # y = 2 tp, x = 2 tp + fp + fn and mean(x) = 10 / 3, a contribution is
    # 0.6 + (y - 0.6 x) / mean(x): 0.6 + (4 - 3) * 0.3 = 0.9, 0.6 + (2 - 1.8) * 0.3 = 0.66,
    # 0.6 + (0 - 1.2) * 0.3 = 0.24; their mean is the pooled F1.
    counts = np.array([[[2, 0, 1], [1, 1, 0], [0, 1, 1]]])
    contributions = f1_contributions(counts)
    assert contributions == pytest.approx(np.array([[0.9, 0.66, 0.24]]), abs=1e-12)
    assert contributions.mean() == pytest.approx(entity_f1(counts.sum(axis=(0, 1))))
    # The influence is F1's derivative in a sentence's weight (times the 3 sentences).
    step = 1e-6
    for sentence in range(3):
        weights = np.ones(3)
        weights[sentence] += step
        moved = entity_f1((weights[:, None] * counts[0]).sum(axis=0))
        assert (moved - 0.6) / step * 3 == pytest.approx(contributions[0, sentence] - 0.6, rel=1e-4)
    # Nothing to find and nothing predicted: F1 is 0 and no sentence moves it.
    assert np.all(f1_contributions(np.zeros((2, 4, 3))) == 0)
    with pytest.raises(ValueError, match=r"\[tp, fp, fn\]"):
        f1_contributions(np.zeros((2, 4, 2)))


@dataclasses.dataclass(frozen=True)
class NerLike:
    """Sentences with Binomial(2, 0.8) entities (about CoNLL-2003's 1.6 per sentence). An
    entity is found when its ease (shared by every run of both systems) + the system's own ease
    of it (shared by that system's seeds: two models make different consistent errors) + the
    run's shift + the prediction's noise + the system's gain > 0, a probit model as
    analysis.seed_simulation.XnliLike; a sentence has a false positive when its confusability
    + the run's shift + noise passes a threshold. Entity F1 about 85%, a run's F1 varies by
    about 0.8 points from seed to seed on 500 sentences."""

    ease: float = 1.0  # the ease's mean; its std is 1
    own_std: float = 0.3
    seed_std: float = 0.06
    noise_std: float = 0.5
    spurious: float = 1.3  # the threshold of the confusability (std 1) for a false positive

    def _scale(self, own: float) -> float:
        return float(np.sqrt(1 + own**2 + self.seed_std**2 + self.noise_std**2))

    def f1(self, gain: float = 0.0) -> float:
        """The expected pooled F1 (the ratio of the expected counts, large test sets)."""
        entities = 2 * 0.8
        found = entities * stats.norm.cdf((self.ease + gain) / self._scale(self.own_std))
        false_positives = stats.norm.sf(self.spurious / self._scale(0.0))
        return float(2 * found / (found + entities + false_positives))

    def gain_for(self, difference: float) -> float:
        base = self.f1()
        return float(optimize.brentq(lambda g: self.f1(g) - base - difference, -5, 5))

    def runs(self, rng, repeats: int, seeds: int, sentences: int, gain: float):
        """(system, baseline) [tp, fp, fn] counts, each (repeats, seeds, sentences, 3), paired
        by seed and sentence; a fresh test set for every repeat."""
        entity = rng.random((repeats, 1, sentences, 2)) < 0.8
        ease = rng.standard_normal((repeats, 1, sentences, 2)) + self.ease
        confusability = rng.standard_normal((repeats, 1, sentences))

        def run(offset: float) -> np.ndarray:
            own = self.own_std * rng.standard_normal(ease.shape)
            shift = self.seed_std * rng.standard_normal((repeats, seeds, 1))
            noise = self.noise_std * rng.standard_normal((repeats, seeds, sentences, 2))
            tp = (entity & (ease + own + shift[..., None] + noise + offset > 0)).sum(axis=-1)
            spurious = self.noise_std * rng.standard_normal((repeats, seeds, sentences))
            fp = confusability + shift + spurious > self.spurious
            return np.stack([tp, fp, entity.sum(axis=-1) - tp], axis=-1).astype(float)

        return run(gain), run(0.0)


SENTENCES = 500
REPEATS = 1000
RESAMPLES = 200


@pytest.fixture(scope="module")
def ner_pilot() -> VarianceComponents:
    """The components of the linearised F1 differences of a 1,000-seed pilot."""
    system, baseline = NerLike().runs(np.random.default_rng(11), 1, 1000, SENTENCES, 0.0)
    return variance_components(f1_contributions(system[0]), f1_contributions(baseline[0]))


def _permutation_rejection_rate(difference: float, seed: int) -> float:
    """How often the sweep's permutation test on pooled entity F1 (RESAMPLES permutations)
    rejects at 0.05 over REPEATS simulated comparisons of SEEDS seeds."""
    model = NerLike()
    gain = model.gain_for(difference) if difference else 0.0
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(REPEATS // 250):
        system, baseline = model.runs(rng, 250, SEEDS, SENTENCES, gain)
        result = permutation_test_batch(system, baseline, RESAMPLES, statistic=entity_f1)
        rejected += np.count_nonzero(result.p_value < 0.05)
    return rejected / REPEATS


def _binomial_se(rate: float) -> float:
    return float(np.sqrt(rate * (1 - rate) / REPEATS))


def test_the_permutation_test_on_entity_f1_rejects_80_percent_at_its_mdd(ner_pilot):
    difference = minimum_detectable_difference(ner_pilot, SEEDS, test="permutation")
    assert 0.005 < difference < 0.03  # about 1.3 F1 points on 500 sentences and 5 seeds
    # 1,000 repeats: the binomial SE at 80% is 1.26 points, so +- 4 is 3.2 SE (the first
    # assert keeps REPEATS large enough for that). The p-value of 200 permutations,
    # (1 + #) / 201, rejects a little less often than the exact test: 79.5% under the model.
    assert 4 > 3 * 100 * _binomial_se(0.8)
    assert _permutation_rejection_rate(difference, seed=21) == pytest.approx(0.80, abs=0.04)


def test_the_stated_false_positive_rate_of_the_pooled_permutation_test_holds(ner_pilot):
    stated = permutation_power(0.0, ner_pilot, SEEDS)
    # Pooling 5 seeds x 500 sentences, the test takes a sentence's 5 runs for independent
    # units and never sees the run-level term: far above 5%.
    assert stated > 0.1
    # 3 binomial SEs of 1,000 repeats (1.2 points at 18%), plus half a point for the pilot's
    # own estimation error (the stated rate moves by about that between pilots).
    tolerance = 3 * _binomial_se(stated) + 0.005
    assert _permutation_rejection_rate(0.0, seed=22) == pytest.approx(stated, abs=tolerance)


def test_without_example_or_seed_terms_it_is_the_paired_z_test():
    components = VarianceComponents(
        0.0, example=0.0, seed=0.0, noise=0.04, n_examples=200, n_seeds=3
    )
    assert permutation_power(0.0, components, 3) == pytest.approx(0.05, abs=1e-9)
    mdd = minimum_detectable_difference(components, 3, test="permutation")
    assert mdd == pytest.approx((1.96 + 0.8416) * 0.2 / np.sqrt(600), rel=0.01)
    assert seeds_needed(mdd * 1.001, components, test="permutation") == 3
    assert seeds_needed(mdd * 0.999, components, test="permutation") == 4


def test_the_report_gives_the_power_of_the_ner_permutation_test(store, tmp_path):  # noqa: F811
    from analysis.report import report_sweep

    uri, _, _, stored = _make_sweep(store, "power_ner", "permutation", True, None, FEW_KEYS)
    # The paper's test, by name (the default is the seed-aware crossed test).
    report = report_sweep(
        uri,
        "power_ner",
        out_dir=str(tmp_path / "out"),
        register=False,
        significance_test="permutation",
    )
    section = report.markdown.split("## Power and the minimum detectable difference")[1]
    section = section.split("\n## ")[0]
    assert "Not computed" not in section and "permutation on units pooled over seeds" in section
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|")[:2]): line
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
    }
    assert (BEST, "dev/en") in rows and (BEST, "test/es") in rows

    def contributions(label):
        return f1_contributions(
            np.array([stored[label, seed, "test", "es"]["counts"] for seed in SWEEP_SEEDS])
        )

    components = variance_components(contributions(BEST), contributions("finetune"))
    # The figures assume the seed variance at its upper bound.
    components = components.conservative()
    expected = minimum_detectable_difference(components, len(SWEEP_SEEDS), test="permutation")
    cells = [cell.strip() for cell in rows[BEST, "test/es"].strip("|").split("|")]
    assert cells[2] == str(len(SWEEP_SEEDS))
    pooled = [
        entity_f1(
            np.sum([stored[label, seed, "test", "es"]["counts"] for seed in SWEEP_SEEDS], (0, 1))
        )
        for label in (BEST, "finetune")
    ]
    assert cells[3] == f"{100 * (pooled[0] - pooled[1]):+.2f}"
    assert cells[5] == f"{100 * expected:.2f}"
    assert cells[6] == f"{permutation_power(0.0, components, len(SWEEP_SEEDS)):.1%}"
