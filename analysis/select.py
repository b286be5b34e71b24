"""Aggregate trials over seeds, pick the best configuration on dev, and test configurations
against the baseline (``*``) and a second reference (``**``)."""

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from analysis.example_scores import PerExampleScores
from analysis.frames import (
    AnalysisError,
    hyperparameter_columns,
    metric_columns,
    param_value,
    run_hyperparameters,
    split_languages,
    tidy_metrics,
)
from analysis.parallel_items import headline_units
from analysis.stats import (
    CORRECTIONS,
    COUNT_STATISTICS,
    DEFAULT_RESAMPLES,
    DEFAULT_TEST,
    LINEARISATIONS,
    MIN_CROSSED_SEEDS,
    SIGNIFICANCE_TESTS,
    run_significance_test,
)
from xlt_schema import BASELINE_METHOD, NO_ADAPTATION, PARALLEL_ITEMS_FIELD, parse_metric_key

DEFAULT_SELECTION_METRIC = "dev/en/accuracy"
DEFAULT_BASELINE_METHOD = BASELINE_METHOD
TEST_SPLIT = "test"
CONFIG_COLUMNS = ["config_key", "config_label", "method", "adaptation"]
SIGNIFICANCE_LEVEL = 0.05
# A comparison on fewer paired seeds claims nothing, whatever its test: one seed cannot
# measure the seed-to-seed variance (a seed-averaged test's p-value then speaks of two
# trained runs, not of their configurations; docs/statistics.md).
MIN_VERDICT_SEEDS = MIN_CROSSED_SEEDS
ONE_SEED = "one seed cannot measure seed-to-seed variance"  # why, in the report's words
DEFAULT_CORRECTION = "holm"
CORRECTION_NAMES = {"holm": "Holm's", "bh": "Benjamini-Hochberg's"}
# Means and stds equal to this many decimals count as tied, so float noise
# ((0.8 + 0.9) / 2 != 0.85) cannot decide ahead of the stated tie-breakers.
_TIE_DECIMALS = 12


@dataclass(frozen=True)
class Selection:
    """The chosen configuration and the evidence it was chosen on."""

    config_key: str
    config_label: str
    method: str
    params: dict
    metric: str
    mean: float
    std: float  # NaN with a single seed
    n_seeds: int
    run_ids: tuple[str, ...]
    adaptation: str = NO_ADAPTATION
    hyperparameters: tuple[str, ...] = ()  # the names among params the sweep recorded as such


def aggregate_over_seeds(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample std and seed count of every metric per configuration."""
    grouped = tidy.groupby([*CONFIG_COLUMNS, "split", "lang", "metric"], sort=True)
    return grouped.agg(
        mean=("value", "mean"), std=("value", "std"), n_seeds=("seed", "nunique")
    ).reset_index()


# Preference among the source-language dev metrics when the caller names none.
_SELECTION_PREFERENCE = ("accuracy", "f1", "exact_match", "mrr")


def default_selection_metric(trials: pd.DataFrame, source_lang: str = "en") -> str:
    """``dev/en/accuracy`` when logged, else the sweep's other English-dev metric (NER's
    f1, QA's f1 before exact_match, retrieval's mrr)."""
    logged = {
        key[2]
        for key in map(parse_metric_key, metric_columns(trials))
        if key[:2] == ("dev", source_lang)
    }
    for metric in (*_SELECTION_PREFERENCE, *sorted(logged)):
        if metric in logged:
            return f"dev/{source_lang}/{metric}"
    raise AnalysisError(
        f"no finished trial logged a dev/{source_lang}/<metric> to select on; "
        f"logged metrics: {', '.join(metric_columns(trials)) or '(none)'}"
    )


def _validate_selection_metric(trials: pd.DataFrame, metric: str) -> tuple[str, str, str]:
    key = parse_metric_key(metric)
    if key is None:
        raise AnalysisError(
            f"selection metric {metric!r} is not of the form <split>/<lang>/<metric>"
        )
    if key[0] == TEST_SPLIT:
        raise AnalysisError(
            f"selection metric {metric!r} is on the test split; select on a dev "
            "split so the test scores stay an unbiased estimate"
        )
    if metric not in trials.columns:
        raise AnalysisError(
            f"no finished trial logged {metric!r}; logged metrics: "
            f"{', '.join(metric_columns(trials)) or '(none)'}"
        )
    return key


def is_baseline(trials: pd.DataFrame, baseline_method: str = DEFAULT_BASELINE_METHOD) -> pd.Series:
    """Per row, whether the run belongs to the baseline: ``baseline_method`` on the
    unadapted encoder (adaptation ``none``). Fine-tuning of an adjusted encoder is not the
    baseline but a configuration compared with it."""
    return (trials["method"] == baseline_method) & (trials["adaptation"] == NO_ADAPTATION)


def complexity(trials: pd.DataFrame) -> dict[str, int]:
    """Per config_key, how many of its hyperparameters are set to a non-zero value.

    A configuration that switches fewer loss terms or perturbations on is the simpler
    one (e.g. EAR with beta=0 is simpler than with beta=0.1). A run's hyperparameters are
    the names its sweep recorded (``xlt.hyperparameters``); a run of an older sweep without
    that tag counts as having none, so the tie-break then falls through to the label.
    """
    first_runs = trials.drop_duplicates("config_key")
    names = run_hyperparameters(first_runs)

    def active(row, name: str) -> bool:
        value = row.get(name)
        parsed = param_value(str(value)) if value is not None and pd.notna(value) else None
        return parsed is not None and parsed != 0

    return {
        row["config_key"]: sum(active(row, name) for name in names[index])
        for index, row in first_runs.iterrows()
    }


def select_best(
    trials: pd.DataFrame,
    metric: str = DEFAULT_SELECTION_METRIC,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
) -> Selection:
    """Best non-baseline configuration by mean ``metric`` over seeds.

    The candidates are every configuration but the baseline (see :func:`is_baseline`).
    Ties go to the lower std over seeds, then to the simpler configuration (fewer
    hyperparameters set to a non-zero value, see :func:`complexity`), then to the
    alphabetically first config_label. When only the baseline finished, the baseline is
    selected.
    """
    split, lang, name = _validate_selection_metric(trials, metric)
    candidates = trials[~is_baseline(trials, baseline_method)]
    if candidates.empty:
        candidates = trials
    scores = aggregate_over_seeds(tidy_metrics(candidates))
    scores = scores[
        (scores["split"] == split) & (scores["lang"] == lang) & (scores["metric"] == name)
    ]
    complexities = complexity(candidates)
    ranked = scores.assign(
        rank_mean=scores["mean"].round(_TIE_DECIMALS),
        rank_std=scores["std"].round(_TIE_DECIMALS),
        rank_complexity=scores["config_key"].map(complexities),
    ).sort_values(
        ["rank_mean", "rank_std", "rank_complexity", "config_label"],
        ascending=[False, True, True, True],
        na_position="last",
    )
    if ranked.empty:
        raise AnalysisError(f"no candidate configuration has a value for {metric!r}")
    best = ranked.iloc[0]

    runs = trials[trials["config_key"] == best["config_key"]].sort_values("seed")
    first_run = runs.iloc[0]  # runs of one config_key share every hyperparameter
    params = {
        column: param_value(first_run[column])
        for column in hyperparameter_columns(trials)
        if pd.notna(first_run[column])
    }
    return Selection(
        config_key=best["config_key"],
        config_label=best["config_label"],
        method=best["method"],
        params=params,
        metric=metric,
        mean=float(best["mean"]),
        std=float(best["std"]),
        n_seeds=int(best["n_seeds"]),
        run_ids=tuple(runs["run_id"]),
        adaptation=best["adaptation"],
        hyperparameters=run_hyperparameters(runs.iloc[:1]).iloc[0],
    )


def baseline_config_key(
    trials: pd.DataFrame, baseline_method: str = DEFAULT_BASELINE_METHOD
) -> str:
    """The config_key of the single baseline configuration of the sweep: method
    ``baseline_method`` with adaptation ``none``."""
    baseline = trials[is_baseline(trials, baseline_method)]
    if baseline.empty:
        configurations = ", ".join(
            sorted({f"{m}/{a}" for m, a in zip(trials["method"], trials["adaptation"])})
        )
        raise AnalysisError(
            f"the sweep has no finished baseline runs (method {baseline_method!r}, "
            f"adaptation {NO_ADAPTATION!r}); method/adaptation with finished runs: "
            f"{configurations}"
        )
    labels = sorted(baseline["config_label"].unique())
    if len(labels) > 1 or baseline["config_key"].nunique() > 1:
        raise AnalysisError(
            f"baseline method {baseline_method!r} (adaptation {NO_ADAPTATION!r}) has several "
            f"configurations ({', '.join(labels)}); expected exactly one to compare against"
        )
    return baseline["config_key"].iloc[0]


def _run_ids_by_seed(trials: pd.DataFrame, config_key: str) -> dict[int, str]:
    runs = trials[trials["config_key"] == config_key]
    if runs.empty:
        raise AnalysisError(f"no finished trial has config_key {config_key!r}")
    repeated = sorted(set(runs.loc[runs["seed"].duplicated(), "seed"].tolist()))
    if repeated:
        raise AnalysisError(
            f"config {runs['config_label'].iloc[0]!r} has several finished runs "
            f"for seed(s) {repeated}; cannot pair runs by seed"
        )
    return dict(zip(runs["seed"].tolist(), runs["run_id"]))


def resolve_config(trials: pd.DataFrame, name: str, role: str = "reference") -> str:
    """The config_key named by ``name``: a config_label, a config_key, or a method or an
    adaptation with exactly one configuration in the sweep (e.g. ``adjusted`` for the
    adjusted model when no other configuration of the sweep is adjusted)."""
    for column in ("config_label", "config_key"):
        matches = trials.loc[trials[column] == name, "config_key"].unique()
        if len(matches) == 1:
            return matches[0]
    for column in ("method", "adaptation"):
        named = trials[trials[column] == name]
        labels = sorted(named["config_label"].unique())
        if len(labels) == 1:
            return named["config_key"].iloc[0]
        if len(labels) > 1:
            raise AnalysisError(
                f"{role} {name!r} is a{'n' if column == 'adaptation' else ''} {column} with "
                f"several configurations ({', '.join(labels)}); name one by its config label"
            )
    known = sorted(trials["config_label"].unique())
    raise AnalysisError(
        f"{role} {name!r} matches no finished configuration; give a method or adaptation "
        f"with one configuration, a config label or a config key; labels: {', '.join(known)}"
    )


def paired_run_ids(
    trials: pd.DataFrame, system_key: str, reference_key: str
) -> tuple[list[str], list[str], list[int]]:
    """The run ids of two configurations on the seeds both finished, in seed order, and
    those seeds: the pairing of every paired comparison."""
    system_runs = _run_ids_by_seed(trials, system_key)
    reference_runs = _run_ids_by_seed(trials, reference_key)
    seeds = sorted(system_runs.keys() & reference_runs.keys())
    if not seeds:
        raise AnalysisError(
            f"config {system_key!r} (seeds {sorted(system_runs)}) and config "
            f"{reference_key!r} (seeds {sorted(reference_runs)}) share no seed "
            "to pair runs on"
        )
    return [system_runs[seed] for seed in seeds], [reference_runs[seed] for seed in seeds], seeds


def _seed_list(seeds: list[int]) -> str:
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def seeds_left_out(trials: pd.DataFrame, system_key: str, reference_key: str) -> str:
    """The sentence naming the seeds :func:`paired_run_ids` leaves out of a comparison of the
    two configurations, and why (the other has no run on them); "" when it leaves none."""
    runs = {key: _run_ids_by_seed(trials, key) for key in (system_key, reference_key)}
    labels = {key: trials.loc[trials["config_key"] == key, "config_label"].iloc[0] for key in runs}
    paired = sorted(runs[system_key].keys() & runs[reference_key].keys())
    parts = []
    for key, other in ((system_key, reference_key), (reference_key, system_key)):
        alone = sorted(runs[key].keys() - runs[other].keys())
        if alone:
            verb = "were" if len(alone) > 1 else "was"
            it = "them" if len(alone) > 1 else "it"
            parts.append(
                f"{_seed_list(alone)} of {labels[key]} {verb} left out: {labels[other]} has "
                f"no run on {it}"
            )
    if not parts:
        return ""
    count = f"{len(paired)} seed{'s' if len(paired) > 1 else ''}"
    return f"{count} paired ({', '.join(map(str, paired))}); {'; '.join(parts)}"


def _check_choice(name: str, value: str, allowed) -> None:
    if value not in allowed:
        raise AnalysisError(f"{name}={value!r} is not one of {', '.join(allowed)}")


def tested_counts(
    scores: PerExampleScores, system_ids, reference_ids, split: str, lang: str, test: str
) -> tuple[tuple, str] | None:
    """Both configurations' per-example counts and the name of the statistic the test
    compares on them, when ``test`` is the crossed or the permutation test and the artifacts
    hold counts of a COUNT_STATISTICS metric (NER's f1); else None (the test compares
    per-example scores)."""
    if test not in ("permutation", "crossed"):
        return None
    system = scores.counts(system_ids, split, lang)
    reference = scores.counts(reference_ids, split, lang)
    if system and reference and system[1] in COUNT_STATISTICS:
        return (system[0], reference[0]), system[1]
    return None


def _paired_languages(trials: pd.DataFrame, keys: tuple[str, str], split: str, test: str):
    """The checked inputs of a comparison of the configurations ``keys`` (system, reference)
    on ``split``: both sides' run ids paired by seed, the languages."""
    _check_choice("significance_test", test, SIGNIFICANCE_TESTS)
    system_ids, reference_ids, _ = paired_run_ids(trials, *keys)
    languages = split_languages(trials, split)
    if not languages:
        raise AnalysisError(f"no finished trial logged a metric on the {split!r} split")
    return (system_ids, reference_ids), languages


def compare_configs(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    system_key: str,
    reference_key: str,
    split: str = TEST_SPLIT,
    test: str = DEFAULT_TEST,
    correction: str = DEFAULT_CORRECTION,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Per single language of ``split``: one configuration vs another on the seeds both ran.

    Columns: lang, metric (what the per-example artifact scores), system_mean and
    reference_mean (mean per-example score over examples and seeds; with counts, the
    statistic of the counts summed over examples and seeds, e.g. pooled entity F1), the fields of
    :class:`analysis.stats.PairedTestResult`, then p_holm, p_bh (adjusted over the
    languages of this comparison), p_corrected (by ``correction``: holm, bh or none),
    significant (p_corrected < 0.05; never on one seed, see :func:`_with_corrections`) and
    seeds_left_out (:func:`seeds_left_out`). Artifacts with per-example ``counts`` and a
    metric in COUNT_STATISTICS (NER's f1) are tested on those counts when ``test`` is
    the crossed (through their linearised contributions) or the permutation test.
    """
    _check_choice("correction", correction, (*CORRECTIONS, "none"))
    run_ids, languages = _paired_languages(trials, (system_key, reference_key), split, test)
    rows = [
        _language_comparison(scores, run_ids, split, lang, test, n_resamples, seed)
        for lang in languages
    ]
    table = _with_corrections(pd.DataFrame(rows), correction)
    table["seeds_left_out"] = seeds_left_out(trials, system_key, reference_key)
    return table


def _language_comparison(
    scores: PerExampleScores,
    run_ids: tuple[list, list],
    split: str,
    lang: str,
    test: str,
    n_resamples: int,
    seed: int,
) -> dict:
    """One row of :func:`compare_configs`: the system's runs vs the reference's on ``lang``."""
    system_ids, reference_ids = run_ids
    system = scores.scores(system_ids, split, lang)
    reference = scores.scores(reference_ids, split, lang)
    metric = scores.payload(system_ids[0], split, lang).get("metric")
    counts, statistic = None, None
    tested = tested_counts(scores, system_ids, reference_ids, split, lang, test)
    if tested:
        counts, statistic = tested[0], COUNT_STATISTICS[tested[1]]
    result = run_significance_test(test, system, reference, counts, statistic, n_resamples, seed)
    if counts is None:
        means = float(system.mean()), float(reference.mean())
    else:  # the quantity the test compares, so that the means and their difference agree
        means = tuple(float(statistic(part.sum(axis=(0, 1)))) for part in counts)
    return {
        "lang": lang,
        "metric": metric,
        "system_mean": means[0],
        "reference_mean": means[1],
        **asdict(result),
    }


def _language_units(scores: PerExampleScores, run_ids: tuple[list, list], split: str, lang: str):
    """Both configurations' (seeds, examples) units of one language whose mean is its metric:
    the per-example scores, or for pooled count metrics (NER's f1) each sentence's
    linearised contribution (:data:`analysis.stats.LINEARISATIONS`)."""
    system_ids, reference_ids = run_ids
    tested = tested_counts(scores, system_ids, reference_ids, split, lang, "crossed")
    if tested is None:
        return scores.scores(system_ids, split, lang), scores.scores(reference_ids, split, lang)
    (system, reference), name = tested
    linearise = LINEARISATIONS.get(COUNT_STATISTICS[name])
    if linearise is None:
        raise AnalysisError(f"the pooled metric {name!r} has no linearisation to average")
    return linearise(system), linearise(reference)


def compare_average(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    system_key: str,
    reference_key: str,
    split: str = TEST_SPLIT,
    test: str = DEFAULT_TEST,
) -> dict:
    """One configuration vs another on the mean of ``split``'s per-language metrics (the
    papers' headline average over the languages), with ``test``.

    The units (:func:`analysis.parallel_items.headline_units`): where the split's artifacts
    declare its languages translations of one item set (XNLI, PAWS-X, XQuAD), each item's
    mean over its translations, so that a method's effect on an item counts once; else each
    language's (seeds, examples) units weighted by (all examples) / (languages x its
    examples) and concatenated. Either way their mean is the mean of the languages' metrics
    and a seed's run shifts its units in every language together. Keys: languages, units
    (what the units are, in words), system_mean, reference_mean, the fields of
    PairedTestResult and seeds_left_out (:func:`seeds_left_out`).
    """
    run_ids, languages = _paired_languages(trials, (system_key, reference_key), split, test)
    units = [_language_units(scores, run_ids, split, lang) for lang in languages]
    parallel = declared_parallel(scores, run_ids, split, languages)
    system, reference, description = headline_units(units, languages, parallel)
    result = run_significance_test(test, system, reference)
    return {
        "languages": languages,
        "units": description,
        "system_mean": float(system.mean()),
        "reference_mean": float(reference.mean()),
        **asdict(result),
        "seeds_left_out": seeds_left_out(trials, system_key, reference_key),
    }


def declared_parallel(
    scores: PerExampleScores, run_ids: tuple[list, list], split: str, languages: list[str]
) -> bool | None:
    """Whether the compared runs' artifacts on ``split`` declare its languages translations
    of one item set (xlt_schema.PARALLEL_ITEMS_FIELD): True when every one does, None when
    any predates the declaration (0.5.0 and earlier), else False."""
    declared = {
        scores.payload(run_id, split, lang).get(PARALLEL_ITEMS_FIELD)
        for ids in run_ids
        for run_id in ids
        for lang in languages
    }
    if None in declared:
        return None
    return declared == {True}


def _with_corrections(table: pd.DataFrame, correction: str) -> pd.DataFrame:
    """p_holm, p_bh, p_corrected (by ``correction``) and significant, over the rows that can
    claim: a row on fewer than MIN_VERDICT_SEEDS seeds (or without a p-value: the crossed
    test on one seed) takes no corrected p-value (NaN), is never significant and does not
    count in the others' correction."""
    claims = table["p_value"].notna() & (table["n_seeds"] >= MIN_VERDICT_SEEDS)
    for name, correct in CORRECTIONS.items():
        table[f"p_{name}"] = np.nan
        if claims.any():
            table.loc[claims, f"p_{name}"] = correct(table.loc[claims, "p_value"].to_numpy())
    table["p_corrected"] = (
        table["p_value"].where(claims) if correction == "none" else table[f"p_{correction}"]
    )
    table["significant"] = table["p_corrected"] < SIGNIFICANCE_LEVEL
    return table


def compare_to_baseline(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    config_key: str,
    split: str = TEST_SPLIT,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    **options,
) -> pd.DataFrame:
    """:func:`compare_configs` against the baseline; ``reference_mean`` is ``baseline_mean``."""
    baseline_key = baseline_config_key(trials, baseline_method)
    table = compare_configs(scores, trials, config_key, baseline_key, split, **options)
    return table.rename(columns={"reference_mean": "baseline_mean"})


def significance_marks(
    scores: PerExampleScores,
    trials: pd.DataFrame,
    baseline_key: str,
    reference_key: str | None,
    splits: list[str],
    correction: str = DEFAULT_CORRECTION,
    **options,
) -> pd.DataFrame:
    """Which configuration beats whom where: one row per (config_key, split, lang, against).

    Every configuration but the baseline is compared with the baseline (``against`` =
    ``baseline``, mark ``*``) and, when a reference is given, every configuration but the
    baseline and the reference with the reference (``against`` = ``reference``, mark
    ``**``). A paper-style table shows every mark of its split and metric at once, so the
    p-values are corrected (``correction``) over all of them: its configurations x
    languages, against the baseline and the reference alike (``family``: how many tests
    that is; ``correction``: the method). ``mark`` is set where the corrected p-value is
    below 0.05, whatever the sign of the difference (the table's means show the direction).
    """
    tables = []
    for config_key in sorted(trials["config_key"].unique()):
        for against, against_key in (("baseline", baseline_key), ("reference", reference_key)):
            if against_key is None or config_key in (baseline_key, against_key):
                continue
            for split in splits:
                table = compare_configs(
                    scores, trials, config_key, against_key, split, correction="none", **options
                )
                table.insert(0, "config_key", config_key)
                table.insert(1, "split", split)
                table.insert(2, "against", against)
                tables.append(table)
    if not tables:
        return pd.DataFrame(columns=["config_key", "split", "against", "lang", "mark"])
    return _marked(pd.concat(tables, ignore_index=True), correction)


def _marked(marks: pd.DataFrame, correction: str) -> pd.DataFrame:
    """The marks' p-values corrected per split and metric (one paper-style table), with
    ``family``, ``correction`` and ``mark``."""
    _check_choice("correction", correction, (*CORRECTIONS, "none"))
    families = []
    for _, family in marks.groupby(["split", "metric"], dropna=False, sort=False):
        family = _with_corrections(family.copy(), correction)
        family["family"] = int(family["p_corrected"].notna().sum())
        families.append(family)
    marks = pd.concat(families).sort_index()
    marks["correction"] = correction
    symbols = np.where(marks["against"] == "baseline", "*", "**")
    marks["mark"] = np.where(marks["significant"], symbols, "")
    return marks


def marks_note(marks: pd.DataFrame, split: str, metric: str) -> str:
    """The sentence of a paper-style table (``split``, ``metric``) on what its marks mean and
    what they are corrected over."""
    meaning = "* significant vs the baseline, ** vs the reference"
    if marks.empty:
        return f"{meaning} (none tested)."
    shown = marks[
        (marks["split"] == split) & (marks["metric"].isna() | (marks["metric"] == metric))
    ]
    tests = int(shown["family"].max()) if not shown.empty else 0
    if tests == 0:
        return f"{meaning}: none tested for a claim ({ONE_SEED})."
    against = (
        "against the baseline and the reference alike"
        if (shown["against"] == "reference").any()
        else "against the baseline"
    )
    scope = f"the table's {tests} tests (its configurations x languages, {against})"
    correction = shown["correction"].iloc[0]
    if correction == "none":
        return f"{meaning}: p < {SIGNIFICANCE_LEVEL} uncorrected, over {scope}."
    method = CORRECTION_NAMES[correction]
    return f"{meaning}: p < {SIGNIFICANCE_LEVEL} after {method} correction over {scope}."
