"""The reproduction view: an mBERT sweep with synthetic scores in a temporary MLflow store is
reported beside the published cells it matches, with hand-computed verdicts."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from fake_sweeps import log_scored_trial, trial_tags
from mlflow import MlflowClient
from mlflow.entities import Param
from reproduction_trials import trials_in_memory
from scipy import stats
from tracking_stores import tracking_store

from analysis.compare import compare_sweeps
from analysis.departures import departures_section
from analysis.frames import tidy_metrics
from analysis.papers import (
    PAPER_SIGNIFICANCE,
    budget_difference,
    load_published_results,
    published_epochs,
)
from analysis.plots import fit_gain_against_distance, load_language_distances
from analysis.report import report_sweep
from analysis.report_plots import (
    GRID_FIGURE_METHODS,
    best_per_method,
    language_responses,
    pair_differences,
)
from analysis.reproduction import (
    ABOVE,
    BELOW,
    NOT_DEV_SELECTED,
    NOT_SIGNIFICANT,
    ONE_SEED,
    OTHER_BUDGET,
    REPRODUCED,
    SIGNIFICANT,
    compare_row,
    reproduction_frames,
    reproduction_section,
    verdict,
    with_paper_significance,
)
from analysis.select import aggregate_over_seeds
from xlt_schema import PARENT_ROLE, ROLE_TAG

MBERT = "bert-base-multilingual-cased"
N = 100  # examples per set: a score of k correct is exactly k percent
SEEDS = (1, 2, 3)
SELECTED = "ear alpha=1 beta=0.1 layer=6 m=1"
GRID_POINT = "ear alpha=1 beta=0.5 layer=6 m=1"
OFF_GRID = "ear alpha=0.1 beta=1 layer=6 m=1"
# label -> (method, hyperparameters, percent correct per metric key and seed)
CONFIGS = {
    "finetune": (
        "finetune",
        {},
        {
            "dev/en": (80, 81, 82),
            "test/en": (80, 82, 84),  # 82 ± 2
            "test/es": (70, 71, 72),  # 71 ± 1
            "test/de": (74, 75, 76),  # 75 ± 1
            "test/en-es": (69, 70, 71),  # 70 ± 1
            "test/es-en": (76, 77, 78),  # 77 ± 1
        },
    ),
    SELECTED: (
        "ear",
        {"alpha": "1", "beta": "0.1", "layer": "6", "m": "1"},
        {
            "dev/en": (84, 85, 86),
            "test/en": (83, 84, 85),
            "test/es": (78, 79, 80),
            "test/de": (72, 73, 74),
            "test/en-es": (70, 71, 72),
            "test/es-en": (70, 71, 72),
        },
    ),
    GRID_POINT: (
        "ear",
        {"alpha": "1", "beta": "0.5", "layer": "6", "m": "1"},
        {
            "dev/en": (82, 83, 84),
            "test/en": (85, 86, 87),
            "test/es": (75, 76, 77),
            "test/de": (69, 70, 71),
            "test/en-es": (70, 71, 72),
            "test/es-en": (70, 71, 72),
        },
    ),
    OFF_GRID: (
        "ear",
        {"alpha": "0.1", "beta": "1", "layer": "6", "m": "1"},
        {
            "dev/en": (81, 82, 83),
            "test/en": (81, 82, 83),
            "test/es": (71, 72, 73),
            "test/de": (71, 72, 73),
            "test/en-es": (70, 71, 72),
            "test/es-en": (70, 71, 72),
        },
    ),
}
HYPERPARAMETERS = ("alpha", "beta", "layer", "m")
# The mBERT sweep's budgets: the baseline at XTREME's 5 epochs (huang2021's rows), EAR at
# ding2022's one epoch (its EAR rows), so that each meets its papers' rows.
EPOCHS = {"finetune": 5.0}
EAR_EPOCHS = 1.0


def _make_sweep(
    root,
    model: str,
    configs: dict = CONFIGS,
    experiment: str = "ear_xnli",
    names: tuple[str, ...] = HYPERPARAMETERS,
    test: str = "ttest",
    epochs: dict[str, float] = EPOCHS,
    default_epochs: float = EAR_EPOCHS,
) -> str:
    """A finished sweep (EAR x XNLI unless ``configs`` says otherwise) of ``model`` as the
    sweeps layer logs it; ``names``: the hyperparameter params every run logs; ``epochs``
    per label (else ``default_epochs``)."""
    uri = tracking_store(root)
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment(experiment, artifact_location=(root / "a").as_uri())
    parent = client.create_run(experiment_id, tags={ROLE_TAG: PARENT_ROLE}).info.run_id
    client.log_batch(
        parent,
        params=[
            Param("significance_test", test),
            Param("base.task", "xnli"),
            Param("base.model", model),
        ],
    )
    for label, (method, hyperparameters, percents) in configs.items():
        tags = trial_tags(parent, label, method, hyperparameters=hyperparameters)
        for index, seed in enumerate(SEEDS):
            scores = {
                key: [1.0] * correct[index] + [0.0] * (N - correct[index])
                for key, correct in percents.items()
            }
            params = {
                "method": method,
                "adaptation": "none",
                "seed": str(seed),
                "task": "xnli",
                "model": model,
                "source_lang": "en",
                "dictionary_scale": "1.0",
                "epochs": str(epochs.get(label, default_epochs)),
                **{name: hyperparameters.get(name, "none") for name in names},
            }
            log_scored_trial(client, experiment_id, tags, scores, params)
    client.set_terminated(parent)
    return uri


@pytest.fixture(scope="module")
def mbert_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("mbert")
    uri = _make_sweep(root, MBERT)
    report = report_sweep(uri, "ear_xnli", out_dir=str(root / "out"), register=False)
    payload = json.loads(open(report.json_path, encoding="utf-8").read())
    return report, pd.DataFrame(payload["reproduction"])


def test_verdict_reads_the_paper_against_our_mean_plus_minus_two_std():
    assert verdict(82.0, 2.0, 80.8) == REPRODUCED
    assert verdict(82.0, 2.0, 86.0) == REPRODUCED  # the edge is inside
    assert verdict(82.0, 2.0, 86.1) == ABOVE  # the paper scored higher than we did
    assert verdict(82.0, 2.0, 77.9) == BELOW  # we scored higher
    assert verdict(82.0, math.nan, 82.0) == ONE_SEED


def test_average_row_uses_the_printed_average_only_when_we_have_every_language():
    cells = pd.DataFrame(
        {
            "lang": ["en", "es", "avg"],
            "our_lang": ["en", "es", "avg"],
            "value": [80.0, 70.0, 74.0],
            "printed": ["80.0", "70.0", "74.0"],
        }
    )
    runs = pd.DataFrame({"test/en/accuracy": [0.80, 0.82], "test/es/accuracy": [0.70, 0.72]})
    identity = {"split": "test", "metric": "accuracy"}
    rows = compare_row(runs, cells, identity)
    assert [row["lang"] for row in rows] == ["en", "es", "avg"]
    average = rows[-1]
    assert (average["paper_printed"], average["paper_average"]) == ("74.0", "printed")
    assert average["ours_mean"] == pytest.approx(76.0)
    assert average["ours_std"] == pytest.approx(math.sqrt(2))
    only_en = compare_row(runs.drop(columns="test/es/accuracy"), cells, identity)
    assert only_en[-1]["paper_printed"] == "80.0"
    assert only_en[-1]["paper_average"].startswith(
        "mean of the paper's cells in the languages we have (1 of 2)"
    )


def test_report_shows_the_matching_published_rows(mbert_report):
    report, _ = mbert_report
    markdown = report.markdown
    # ding2022 copies huang2021's mBERT* row: one row, shown under the paper that printed it
    # first, both named
    assert (
        "| paper: finetune [hu2020] (huang2021, Table 2; = ding2022 Table 1) "
        "| 80.8 | 70.0 | 73.5 | 74.8 |" in markdown
    )
    assert "| paper: finetune [reproduce] (huang2021, Table 2) | 82.3 | 70.8 | 74.3 | 75.8 |" in (
        markdown
    )
    # efimov2023 fine-tunes 2 epochs: the 5-epoch baseline is named beside the row, not met
    assert "| paper: finetune (efimov2023" not in markdown
    assert (
        "- baseline `finetune` vs efimov2023 Table 2 (`finetune`): another training budget: "
        "epochs 5 (the paper's 2)" in markdown
    )
    assert "| paper: ear [alpha=1 beta=0.5 layer=6] (ding2022, Table A.2) " in markdown
    assert "| paper: ear [alpha=0.6 beta=0.1 layer=6]" not in markdown  # no such point ran
    assert "-APT" not in markdown  # ablations we do not run match nothing


def _rows(frame, label, paper, table, setting=""):
    chosen = frame[
        (frame["config_label"] == label)
        & (frame["paper"] == paper)
        & (frame["table"] == table)
        & (frame["setting"] == setting)
    ]
    return chosen.set_index("lang")


def test_baseline_against_huang2021s_copy_of_hu2020_also_in_ding2022_table_1(mbert_report):
    report, frame = mbert_report
    assert _rows(frame, "finetune", "ding2022", "Table 1").empty  # folded into its origin
    rows = _rows(frame, "finetune", "huang2021", "Table 2", "hu2020")
    assert rows["verdict"].to_dict() == {
        "en": REPRODUCED,  # 80.8 in 82 ± 4
        "de": BELOW,  # 70.0 under 75 - 2
        "es": ABOVE,  # 73.5 over 71 + 2
        "avg": REPRODUCED,  # (80.8 + 70.0 + 73.5) / 3 = 74.77 in 76 ± 2.67
    }
    assert rows.loc["es", "difference"] == pytest.approx(71.0 - 73.5)
    assert rows.loc["avg", "ours_std"] == pytest.approx(4 / 3)
    assert rows.loc["avg", "paper_value"] == pytest.approx((80.8 + 70.0 + 73.5) / 3)
    assert rows.loc["en", "also_in"] == "ding2022 Table 1"
    assert (
        "### Baseline `finetune` vs huang2021 Table 2 (`finetune`, hu2020), test accuracy"
        in report.markdown
    )
    assert "| en | 82.00 ± 2.00 | 80.8 | +1.20 | reproduced | 3 |" in report.markdown
    assert "| de | 75.00 ± 1.00 | 70.0 | +5.00 | below | 3 |" in report.markdown
    assert "| avg | 76.00 ± 1.33 | 74.8 | +1.23 | reproduced | 3 |" in report.markdown
    assert "efimov2023 averages 5 seeds, huang2021 10" in report.markdown


def test_baseline_against_other_papers_and_the_two_language_grid(mbert_report):
    report, frame = mbert_report
    reproduce = _rows(frame, "finetune", "huang2021", "Table 2", "reproduce")
    assert reproduce["verdict"].to_dict() == {
        "en": REPRODUCED,  # 82.3
        "de": BELOW,  # 70.8
        "es": ABOVE,  # 74.3
        "avg": REPRODUCED,  # 75.8 in 76 ± 2.67
    }
    assert _rows(frame, "finetune", "efimov2023", "Table 2").empty  # 2 epochs, ours 5
    grid = _rows(frame, "finetune", "huang2021", "Table 7", "generalized")
    assert grid["verdict"].to_dict() == {
        "en-en": REPRODUCED,  # 82.3 against test/en, 82 ± 2
        "en-es": REPRODUCED,  # 70.3 in 70 ± 2
        "de-de": BELOW,  # 70.8 against test/de, under 75 - 2
        "es-en": BELOW,  # 73.5 under 77 - 2
        "es-es": ABOVE,  # 74.3 against test/es, over 71 + 2
        "avg": REPRODUCED,  # 74.24 in 75 ± 2.4 (per seed: 73.8, 75, 76.2)
    }
    assert grid.loc["avg", "paper_value"] == pytest.approx((82.3 + 70.3 + 70.8 + 73.5 + 74.3) / 5)
    assert grid.loc["avg", "ours_std"] == pytest.approx(1.2)
    # the grid as a matrix: row = first sentence's language, cells Δ and the verdict's mark
    assert "| es | +3.5 ↓ | -3.3 ↑ | – |" in report.markdown


def test_selected_and_grid_points_against_their_published_cells(mbert_report):
    report, frame = mbert_report
    table_1 = _rows(frame, SELECTED, "ding2022", "Table 1")
    assert set(table_1["role"]) == {"selected"}
    assert table_1["verdict"].to_dict() == {
        "en": REPRODUCED,  # 83.2 in 84 ± 2
        "de": REPRODUCED,  # 72.9 in 73 ± 2
        "es": BELOW,  # 75.7 under 79 - 2
        "avg": REPRODUCED,  # 77.27 in 78.67 ± 2
    }
    # ding2022 repeats the row in Tables 3, 4 (printed in another language order) and 5
    assert table_1.loc["en", "also_in"] == (
        "ding2022 Table 3 [EPT+APT], ding2022 Table 4 [EPT+APT], ding2022 Table 5 [source=en]"
    )
    a2 = _rows(frame, SELECTED, "ding2022", "Table A.2", "alpha=1 beta=0.1 layer=6")
    assert a2.loc["en", "paper_printed"] == "83.23"
    assert a2.loc["en", "also_in"] == "ding2022 Table A.3 [alpha=1 beta=0.1 layer=6]"
    point = _rows(frame, GRID_POINT, "ding2022", "Table A.2", "alpha=1 beta=0.5 layer=6")
    assert set(point["role"]) == {"published point"}
    assert point["verdict"].to_dict() == {
        "en": BELOW,  # 83.01 under 86 - 2: we scored higher
        "de": ABOVE,  # 72.95 over 70 + 2: the paper scored higher
        "es": REPRODUCED,  # 75.87 in 76 ± 2
        "avg": REPRODUCED,  # (83.01 + 72.95 + 75.87) / 3 = 77.28 in 77.33 ± 2
    }
    assert "| en | 86.000 ± 1.000 | 83.01 | +2.990 | below | 3 |" in report.markdown
    # other configurations meet only the rows that fix their hyperparameters: none for the
    # released scripts' point
    assert set(frame.loc[frame["config_label"] == GRID_POINT, "table"]) == {"Table A.2"}
    assert OFF_GRID not in set(frame["config_label"])


def test_a_model_no_paper_used_matches_nothing(tmp_path):
    uri = _make_sweep(tmp_path, "tiny")
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "out"), register=False)
    assert "No published result matches this sweep (task `xnli`, model `tiny`)" in (report.markdown)
    assert "| paper:" not in report.markdown
    payload = json.loads(open(report.json_path, encoding="utf-8").read())
    assert payload["reproduction"] == []


def test_every_comparison_is_against_a_shipped_cell(mbert_report):
    _, frame = mbert_report
    published = load_published_results()
    printed = set(
        zip(published["paper"], published["table"], published["lang"], published["printed"])
    )
    cells = frame[frame["paper_average"] == ""]
    for row in cells.itertuples(index=False):
        assert (row.paper, row.table, row.paper_lang, row.paper_printed) in printed


def test_adjusted_encoders_and_mrr_are_read_in_the_papers_names_and_units():
    """An XSR sweep of efimov2023 (no MLflow): adaptation `adjusted` is the paper's `adjust`,
    and MRR is compared as the fraction the paper prints."""
    rows = []
    for label, adaptation, mrr in (
        ("finetune", "none", (0.53, 0.55)),
        ("adj", "adjusted", (0.40, 0.42)),
    ):
        for seed, value in zip((1, 2), mrr):
            rows.append(
                {
                    "run_id": f"{label}{seed}",
                    "config_key": label,
                    "config_label": label,
                    "method": "finetune",
                    "adaptation": adaptation,
                    "seed": seed,
                    "hyperparameters": (),
                    "task": "xsr",
                    "model": MBERT,
                    "epochs": "2.0",  # SQuAD's, run_qa.py's (efimov2023 L127)
                    "test/hi/mrr": value,
                }
            )
    frame, _ = reproduction_frames(
        pd.DataFrame(rows), load_published_results(), "xsr", MBERT, ("finetune", "adj")
    )
    frame = frame.set_index(["config_key", "lang"])
    # baseline 0.54 ± 0.0141 against the printed 0.49: below our range (we scored higher)
    assert frame.loc[("finetune", "hi"), ["method", "paper_printed", "verdict"]].tolist() == [
        "finetune",
        "0.49",
        BELOW,
    ]
    assert frame.loc[("finetune", "hi"), "ours_mean"] == pytest.approx(0.54)
    # adjusted 0.41 ± 0.0141 against the printed 0.56: above our range
    assert frame.loc[("adj", "hi"), ["method", "paper_printed", "verdict"]].tolist() == [
        "adjust",
        "0.56",
        ABOVE,
    ]


def test_compare_shows_the_papers_main_table_rows_beside_ours(tmp_path):
    uri = _make_sweep(tmp_path, MBERT)
    comparison = compare_sweeps(uri, ["ear_xnli"], str(tmp_path / "out"))
    (table,) = [t for t in comparison.tables if t.title == "xnli test accuracy (%)"]
    labels = [label for label, _ in table.rows]
    assert labels[:2] == ["ear_xnli: finetune (baseline)", f"ear_xnli: {SELECTED}"]
    rows = dict(table.rows)
    # The papers' chosen configurations only: no grid point, no two-language grid.
    assert rows["paper: finetune [hu2020] (huang2021, Table 2; = ding2022 Table 1)"][:3] == [
        "80.8",
        "70.0",
        "73.5",
    ]
    assert not any("alpha=" in label for label in labels if label.startswith("paper:"))
    tiny = _make_sweep(tmp_path / "tiny", "tiny")
    (tiny_table,) = [
        t
        for t in compare_sweeps(tiny, ["ear_xnli"], str(tmp_path / "t")).tables
        if t.title == "xnli test accuracy (%)"
    ]
    assert not any(label.startswith("paper:") for label, _ in tiny_table.rows)


def test_report_draws_our_two_language_grid_beside_the_papers(mbert_report):
    report, frame = mbert_report
    names = {Path(path).name for path in report.plot_paths}
    assert "generalized_baseline_vs_huang2021_Table_7.png" in names
    with open(next(p for p in report.plot_paths if "huang2021_Table_7" in p), "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "![generalized_baseline_vs_huang2021_Table_7]" in report.markdown


# A robust XNLI sweep of mBERT: the baseline, ADV at two radii and RS-RP at Enc(x), ADV at
# the word embeddings (not the paper's method), RS-DA with the paper's m = 3.
ROBUST_NAMES = ("epsilon", "adv_steps", "adv_step_scale", "perturbation_site", "m", "rs_da_variant")
_ENC = {"perturbation_site": "encoder_output"}
ROBUST = {
    "finetune": CONFIGS["finetune"],
    "adv epsilon=0.01": ("adv", {"epsilon": "0.01", **_ENC}, CONFIGS[OFF_GRID][2]),
    "adv epsilon=0.1": ("adv", {"epsilon": "0.1", **_ENC}, CONFIGS[GRID_POINT][2]),
    "adv epsilon=0.01 perturbation_site=word_embeddings": (
        "adv",
        {"epsilon": "0.01", "perturbation_site": "word_embeddings"},
        CONFIGS[OFF_GRID][2],
    ),
    "rs_rp epsilon=0.01": ("rs_rp", {"epsilon": "0.01", **_ENC}, CONFIGS[OFF_GRID][2]),
    "rs_da m=3": ("rs_da", {"m": "3", "rs_da_variant": "released"}, CONFIGS[SELECTED][2]),
}


@pytest.fixture(scope="module")
def robust_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("robust")
    # RS-DA on Robust-XLT's released one epoch, the budget its rows trained (analysis.papers)
    uri = _make_sweep(
        root,
        MBERT,
        ROBUST,
        "robust_xnli",
        ROBUST_NAMES,
        "bootstrap",
        epochs={"rs_da m=3": 1.0},
        default_epochs=5.0,
    )
    report = report_sweep(uri, "robust_xnli", out_dir=str(root / "out"), register=False)
    payload = json.loads(open(report.json_path, encoding="utf-8").read())
    return report, pd.DataFrame(payload["reproduction"])


def test_a_robust_sweep_meets_every_huang2021_row_of_its_methods(robust_report):
    """All four of huang2021's XNLI rows (the reproduced baseline, ADV, RS-RP, RS-DA), each
    met by the configuration English dev selects among those of its method (the paper
    searched epsilon on English dev), whichever the report selects."""
    report, frame = robust_report
    table_2 = frame[(frame["paper"] == "huang2021") & (frame["table"] == "Table 2")]
    met = set(zip(table_2["config_label"], table_2["method"], table_2["setting"]))
    assert met == {
        ("finetune", "finetune", "hu2020"),
        ("finetune", "finetune", "reproduce"),
        ("adv epsilon=0.1", "adv", ""),  # English dev 83 ± 1 over epsilon=0.01's 82 ± 1
        ("rs_rp epsilon=0.01", "rs_rp", ""),
        ("rs_da m=3", "rs_da", ""),
    }
    for method in ("finetune`, reproduce", "adv`", "rs_rp`", "rs_da`"):
        assert f"vs huang2021 Table 2 (`{method})" in report.markdown
    # the word-embedding site is not the paper's ADV: it meets no row
    assert not frame["config_label"].str.contains("word_embeddings").any()
    # a row's numbers against a configuration that is neither baseline nor selection
    adv = _rows(frame, "adv epsilon=0.1", "huang2021", "Table 2")
    assert set(adv["role"]) == {"published point"}
    assert adv.loc["es", "paper_printed"] == "74.4"  # mBERT-ADV es, huang2021 L124
    assert adv.loc["es", "ours_mean"] == pytest.approx(76.0)
    assert adv.loc["es", "verdict"] == REPRODUCED  # 74.4 in 76 ± 2
    # RS-DA's generalized grid (Table 9) and its copy in ding2022 Table 1 are met too
    rs_da = frame[frame["config_label"] == "rs_da m=3"]
    assert {"Table 2", "Table 9"} <= set(rs_da.loc[rs_da["paper"] == "huang2021", "table"])
    assert (rs_da["also_in"] == "ding2022 Table 1").any()


def _trials(
    configs: dict,
    names=HYPERPARAMETERS,
    epochs: dict[str, float] = EPOCHS,
    default_epochs: float = EAR_EPOCHS,
) -> pd.DataFrame:
    """Trials built in memory (no MLflow) as the sweeps log them: two seeds each, the
    budgets as in ``_make_sweep``."""
    return trials_in_memory(configs, names, epochs, default_epochs)


def _frames(
    configs: dict, baseline: str, selected: str, names=HYPERPARAMETERS, **budgets
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``reproduction_frames`` on ``_trials``."""
    trials = _trials(configs, names, **budgets)
    published = load_published_results()
    return reproduction_frames(trials, published, "xnli", MBERT, (baseline, selected))


def _frame(configs: dict, baseline: str, selected: str, names=HYPERPARAMETERS) -> pd.DataFrame:
    return _frames(configs, baseline, selected, names)[0]


def test_a_selected_ablation_meets_its_ablation_row_and_never_the_full_methods():
    no_ept = "ear alpha=0 beta=0.1 layer=6 m=1"
    configs = {
        "finetune": CONFIGS["finetune"],
        no_ept: (
            "ear",
            {"alpha": "0", "beta": "0.1", "layer": "6", "m": "1"},
            CONFIGS[SELECTED][2],
        ),
    }
    frame = _frame(configs, "finetune", no_ept)
    ablation = frame[frame["config_label"] == no_ept]
    assert set(ablation["role"]) == {"selected"}
    assert set(zip(ablation["table"], ablation["setting"])) == {("Table 3", "-EPT")}


def test_an_average_only_row_is_compared_on_our_average_over_the_papers_languages():
    """ding2022 Table 6 prints one number per dictionary scale (lang avg, over XNLI's 15
    languages): ours is the mean over the languages of those we have, here en, es, de."""
    half = "ear alpha=1 beta=0.1 layer=6 m=1 dictionary_scale=0.5"
    point = {"alpha": "1", "beta": "0.1", "layer": "6", "m": "1", "dictionary_scale": "0.5"}
    configs = {"finetune": CONFIGS["finetune"], half: ("ear", point, CONFIGS[SELECTED][2])}
    frame = _frame(configs, "finetune", half, (*HYPERPARAMETERS, "dictionary_scale"))
    (row,) = frame[(frame["table"] == "Table 6")].itertuples(index=False)
    assert (row.setting, row.lang, row.paper_printed) == (
        "dictionary_scale=0.5 dictionary_size=24987",
        "avg",
        "68.218",
    )
    # seed 1: (83 + 78 + 72) / 3, seed 2: (84 + 79 + 73) / 3
    assert row.ours_mean == pytest.approx((233 / 3 + 236 / 3) / 2)
    assert row.ours_std == pytest.approx(math.sqrt(2) * 0.5)
    assert row.verdict == BELOW  # the paper's 68.218 lies under our 78.17 - 2 x 0.71
    assert row.paper_average == (
        "printed (the paper prints only its average, over 15 languages); "
        "ours over the 3 of them we have"
    )


def test_gain_against_distance_is_a_least_squares_line_over_the_languages_both_have():
    """A worked example: distances 0, 1, 2, 3 and gains 1, 3, 2, 5 (given out of order, one
    language without a distance): mean x 1.5, mean y 2.75, Sxy 5.5, Sxx 5, Syy 8.75, so
    slope 1.1, intercept 2.75 - 1.1 x 1.5 = 1.1, r = 5.5 / sqrt(5 x 8.75) = 0.8315."""
    distances = {"en": 0.0, "de": 1.0, "zh": 2.0, "ja": 3.0}
    gains = {"ja": 5.0, "en": 1.0, "zh": 2.0, "de": 3.0, "xx": 9.0}
    fit = fit_gain_against_distance(gains, distances)
    assert fit.languages == ("en", "de", "zh", "ja")  # sorted by distance, xx left out
    assert fit.gains == (1.0, 3.0, 2.0, 5.0)
    assert fit.slope == pytest.approx(1.1)
    assert fit.intercept == pytest.approx(1.1)
    assert fit.rvalue == pytest.approx(5.5 / math.sqrt(5 * 8.75))
    assert fit_gain_against_distance({"en": 1.0, "de": 2.0}, distances) is None  # two points


def test_the_packaged_distances_cover_xnli_and_pawsx():
    distances = load_language_distances()
    xnli = "en ar bg de el es fr hi ru sw th tr ur vi zh".split()
    assert set(distances) == set(xnli) | {"ja", "ko"}
    assert distances["en"] == 0.0 and all(d > 0 for lang, d in distances.items() if lang != "en")
    # the paper's nearest and farthest PAWS-X languages keep their places (its Tables 4-6)
    assert distances["de"] < distances["zh"] < distances["ja"]
    with pytest.raises(ValueError, match="columns: syntactic, phonological, inventory"):
        load_language_distances(column="genetic")


def test_a_robust_report_draws_gain_against_distance_per_method(robust_report):
    report, _ = robust_report
    names = {Path(path).name for path in report.plot_paths}
    assert {"gain_vs_distance_adv.png", "gain_vs_distance_rs_rp.png"} <= names
    assert "gain_vs_distance_rs_da.png" in names
    with open(next(p for p in report.plot_paths if p.endswith("rs_da.png")), "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    # what the RS-DA figure draws, by hand: gains (points) en 84-82, de 73-75, es 79-71
    distances = load_language_distances()
    fit = fit_gain_against_distance({"en": 2.0, "de": -2.0, "es": 8.0}, distances)
    assert fit.languages == ("en", "de", "es")  # 0 < 0.1808 < 0.2669 (featural)
    assert "![gain_vs_distance_rs_da]" in report.markdown


def test_an_ear_sweep_draws_no_distance_plot(mbert_report):
    report, _ = mbert_report
    assert not any("gain_vs_distance" in path for path in report.plot_paths)


def _met(frame: pd.DataFrame, label: str) -> set:
    rows = frame[frame["config_label"] == label]
    return set(zip(rows["paper"], rows["table"], rows["setting"]))


def test_ear_xnlis_one_epoch_baseline_does_not_silently_meet_five_epoch_rows():
    """ear_xnli's paper preset trains every configuration one epoch (ding2022 L1740): its
    baseline meets no published baseline (huang2021's and ding2022's copies of them train 5,
    efimov2023's 2) and the report names each row with the difference of budget."""
    configs = {"finetune": CONFIGS["finetune"], SELECTED: CONFIGS[SELECTED]}
    frame, not_compared = _frames(configs, "finetune", SELECTED, epochs={})
    assert _met(frame, "finetune") == set()
    assert ("ding2022", "Table 1", "") in _met(frame, SELECTED)  # EAR's own one epoch
    baseline = not_compared[not_compared["config_label"] == "finetune"]
    assert set(zip(baseline["paper"], baseline["table"], baseline["setting"])) == {
        ("huang2021", "Table 2", "hu2020"),
        ("huang2021", "Table 2", "reproduce"),
        ("huang2021", "Table 7", "generalized"),
        ("efimov2023", "Table 2", ""),
    }  # ding2022 Table 1's copy of hu2020 is folded into huang2021's row
    assert set(baseline["reason"]) == {OTHER_BUDGET}
    huang = baseline[baseline["paper"] == "huang2021"]
    assert set(huang["detail"]) == {"epochs 1 (the paper's 5)"}
    lines = reproduction_section(frame, "xnli", MBERT, not_compared)
    assert (
        "- baseline `finetune` vs huang2021 Table 2 (`finetune`, reproduce): another training "
        "budget: epochs 1 (the paper's 5)" in lines
    )


def test_a_two_epoch_baseline_meets_efimov2023_only_and_a_sample_meets_nothing():
    """adjust_xnli's baseline (run_xnli.py's 2 epochs) meets efimov2023 Table 2, none of
    the 5-epoch rows; a run on a training sample or without logged epochs meets no row."""
    configs = {"finetune": CONFIGS["finetune"], SELECTED: CONFIGS[SELECTED]}
    frame, _ = _frames(configs, "finetune", SELECTED, epochs={"finetune": 2.0})
    assert _met(frame, "finetune") == {("efimov2023", "Table 2", "")}
    efimov = _rows(frame, "finetune", "efimov2023", "Table 2")
    assert efimov["verdict"].to_dict() == {"es": ABOVE, "avg": ABOVE}  # 74.20 over 71 + 2
    assert budget_difference("efimov2023", "xnli", "finetune", {"epochs": 2.0}) == ""
    # robust_xnli's 5-epoch baseline does not meet efimov2023's mixed-language row
    assert budget_difference("efimov2023", "mixed-xnli", "finetune", {"epochs": 5.0}) == (
        "epochs 5 (the paper's 2)"
    )
    assert budget_difference("huang2021", "xnli", "adv", {}) == (
        "epochs not logged (the paper's 5)"
    )
    assert budget_difference(
        "ding2022", "xnli", "ear", {"epochs": 1.0, "max_train_examples": 200}
    ) == ("max_train_examples 200 (the paper's whole training set)")


def test_the_published_budgets_are_the_cards_epochs():
    """Each paper card's experiment trains on the budget its published rows are read with
    (a departure of epochs would be the only reason to differ: none is declared)."""
    from sweeps.spec.paper_cards import load_card

    rows = {
        ("ding2022", "ear_xnli", "xnli", "ear"),
        ("ding2022", "ear_pawsx", "pawsx", "ear"),
        ("huang2021", "robust_xnli", "xnli", "adv"),
        ("huang2021", "robust_pawsx", "pawsx", "adv"),
        ("efimov2023", "adjust_xnli", "xnli", "adjust"),
        ("efimov2023", "adjust_ner", "ner", "adjust"),
        ("efimov2023", "adjust_qa", "xquad", "adjust"),
        ("efimov2023", "adjust_xsr", "tatoeba", "adjust"),
    }
    for paper, experiment, task, method in rows:
        card = load_card(paper)
        epochs = card.trial_settings(experiment)["epochs"]
        assert published_epochs(paper, task, method) == epochs, (paper, experiment)
        assert "epochs" not in {d.setting for d in card.departures(experiment)}
    # ding2022's baselines follow Hu et al. 2020 (L1740); RS-DA's rows, huang2021's and
    # ding2022's, Robust-XLT's released budget: the huang2021 card's released epochs
    assert published_epochs("ding2022", "xnli", "finetune") == 5.0
    huang = load_card("huang2021")
    for task, experiment in (("xnli", "robust_xnli"), ("pawsx", "robust_pawsx")):
        released = huang.trial_settings(experiment, "released")["epochs"]
        assert published_epochs("huang2021", task, "rs_da") == released
        assert published_epochs("ding2022", task, "rs_da") == released


def _robust_configs(dev_of_small_epsilon: tuple[int, int, int]) -> dict:
    configs = dict(ROBUST)
    method, hyperparameters, percents = configs["adv epsilon=0.01"]
    configs["adv epsilon=0.01"] = (
        method,
        hyperparameters,
        {**percents, "dev/en": dev_of_small_epsilon},
    )
    return configs


@pytest.mark.parametrize(
    ("dev", "owner", "other"),
    [
        ((81, 82, 83), "adv epsilon=0.1", "adv epsilon=0.01"),  # 0.1's dev 82-84 ranks first
        ((90, 91, 92), "adv epsilon=0.01", "adv epsilon=0.1"),
    ],
)
def test_only_the_dev_selected_epsilon_meets_huang2021s_adv_row(dev, owner, other):
    """huang2021 searched epsilon on English dev (L144) and printed one ADV row: of our ADV
    radii at Enc(x) only the one English dev ranks first meets it, whichever scores higher
    on test; the other is named as not compared."""
    frame, not_compared = _frames(
        _robust_configs(dev), "finetune", owner, ROBUST_NAMES, default_epochs=5.0
    )
    assert ("huang2021", "Table 2", "") in _met(frame, owner)
    assert _met(frame, other) == set()
    (skipped,) = not_compared[
        (not_compared["config_label"] == other) & (not_compared["table"] == "Table 2")
    ].itertuples(index=False)
    assert (skipped.method, skipped.reason) == ("adv", NOT_DEV_SELECTED)
    assert skipped.detail == f"`{owner}` meets it (best on the selection metric)"
    # RS-RP has one radius here: it meets its row with no contest
    assert ("huang2021", "Table 2", "") in _met(frame, "rs_rp epsilon=0.01")


def test_only_the_released_rs_da_variant_meets_the_rs_da_rows():
    """huang2021's RS-DA trains on the m copies only (uclanlp/Robust-XLT perturb.py):
    `keep_originals` is not the published method and meets no row."""
    kept = "rs_da m=3 rs_da_variant=keep_originals"
    configs = {
        "finetune": CONFIGS["finetune"],
        kept: ("rs_da", {"m": "3", "rs_da_variant": "keep_originals"}, CONFIGS[SELECTED][2]),
        "rs_da m=3": ("rs_da", {"m": "3", "rs_da_variant": "released"}, CONFIGS[SELECTED][2]),
    }
    released_budget = {kept: 1.0, "rs_da m=3": 1.0}  # Robust-XLT's, the rows' budget
    frame, not_compared = _frames(
        configs, "finetune", kept, ROBUST_NAMES, epochs=released_budget, default_epochs=5.0
    )
    assert _met(frame, kept) == set()
    assert kept not in set(not_compared["config_label"])  # not a match at all
    assert {("huang2021", "Table 2", ""), ("huang2021", "Table 9", "generalized")} <= _met(
        frame, "rs_da m=3"
    )


def test_each_paper_reads_significance_its_own_way():
    """The same uncorrected p = 0.03 (Holm over three languages: 0.09, not significant by
    the report's default): efimov2023 marks it either way (L143), huang2021 only an
    improvement (its captions), ding2022 tests none."""
    identity = {"config_key": "adj", "split": "test", "metric": "accuracy", "p_value": math.nan}
    frame = pd.DataFrame(
        [
            {**identity, "paper": "efimov2023", "lang": "es", "paper_significance": ""},
            {**identity, "paper": "efimov2023", "lang": "hi", "paper_significance": ""},
            {**identity, "paper": "huang2021", "lang": "es", "paper_significance": ""},
            {**identity, "paper": "huang2021", "lang": "hi", "paper_significance": ""},
            {**identity, "paper": "ding2022", "lang": "es", "paper_significance": ""},
            {**identity, "paper": "efimov2023", "lang": "avg", "paper_significance": ""},
        ]
    )
    marks = pd.DataFrame(
        {
            "config_key": ["adj", "adj", "adj"],
            "split": ["test"] * 3,
            "against": ["baseline"] * 3,
            "lang": ["es", "hi", "ru"],
            "metric": ["accuracy"] * 3,
            "system_mean": [0.75, 0.60, 0.70],  # es a gain, hi a loss
            "reference_mean": [0.70, 0.65, 0.70],
            "p_value": [0.03, 0.03, 0.9],
            "p_holm": [0.09, 0.09, 0.9],
        }
    )
    read = with_paper_significance(frame, marks)
    assert read["paper_significance"].tolist() == [
        SIGNIFICANT,  # efimov2023: a gain at p <= 0.05
        SIGNIFICANT,  # efimov2023: a loss at p <= 0.05 is marked too
        SIGNIFICANT,  # huang2021: an improvement
        NOT_SIGNIFICANT,  # huang2021: a loss is not underlined
        "",  # ding2022 tests none
        "",  # averages are not tested
    ]
    assert read["p_value"].tolist()[:5] == [0.03] * 5
    assert math.isnan(read["p_value"].iloc[5])
    assert PAPER_SIGNIFICANCE["efimov2023"].threshold == 0.05


def test_the_reproduction_view_gives_the_uncorrected_p_value_of_the_reports_test(tmp_path):
    """The selected EAR vs the baseline on es by the paired t-test: per-example scores
    averaged over the 3 seeds, then scipy's ttest_rel (no correction over languages)."""
    uri = _make_sweep(tmp_path, MBERT)
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "out"), significance_test="ttest")
    frame = pd.DataFrame(
        json.loads(open(report.json_path, encoding="utf-8").read())["reproduction"]
    )

    def per_example(percents):
        return np.mean([[1.0] * k + [0.0] * (N - k) for k in percents], axis=0)

    expected = {
        lang: stats.ttest_rel(
            per_example(CONFIGS[SELECTED][2][f"test/{lang}"]),
            per_example(CONFIGS["finetune"][2][f"test/{lang}"]),
        ).pvalue
        for lang in ("en", "de", "es")
    }
    rows = _rows(frame, SELECTED, "ding2022", "Table 1")
    assert rows.loc[["en", "de", "es"], "p_value"].to_dict() == pytest.approx(expected)
    assert expected["de"] > 0.05  # Holm would not decide it either way: the raw p is shown
    assert set(rows["paper_significance"]) == {""}  # ding2022 tests none
    assert math.isnan(rows.loc["avg", "p_value"])  # averages are not tested
    baseline = _rows(frame, "finetune", "huang2021", "Table 2", "reproduce")
    assert baseline["p_value"].isna().all()  # the baseline is not tested against itself
    assert (
        f"| es | 79.00 ± 1.00 | 75.7 | +3.30 | below | 3 | – (p = {expected['es']:.3g}) |"
        in report.markdown
    )
    assert "efimov2023 marks a difference with an uncorrected p <= 0.05 (L143)" in (report.markdown)


def test_a_robust_report_draws_rs_rp_and_rs_das_grids_as_huang2021_figs_4_and_5(robust_report):
    """Figs. 4-5 draw RS-RP and RS-DA minus mBERT over every language pair: each method's
    configuration best on English dev, not only the selection."""
    report, _ = robust_report
    names = {Path(path).name for path in report.plot_paths}
    assert {"transfer_heatmap_rs_rp.png", "transfer_heatmap_rs_da.png"} <= names
    assert "transfer_heatmap_adv.png" not in names  # the paper draws no ADV grid
    trials = _trials(ROBUST, ROBUST_NAMES, default_epochs=5.0)
    analysis = SimpleNamespace(
        trials=trials,
        seed_means=aggregate_over_seeds(tidy_metrics(trials)),
        baseline_key="finetune",
        selection=SimpleNamespace(metric="dev/en/accuracy"),
    )
    assert best_per_method(analysis, GRID_FIGURE_METHODS) == {
        "rs_da": "rs_da m=3",
        "rs_rp": "rs_rp epsilon=0.01",
    }
    differences = pair_differences(analysis, "accuracy", "rs_da m=3").set_index("lang")
    # by hand: RS-DA's means (seeds 1, 2) minus the baseline's, the diagonal from test/<lang>
    # where the language is in a logged pair (de is in none)
    assert differences["difference"].to_dict() == pytest.approx(
        {
            "en-es": 0.705 - 0.695,
            "es-en": 0.705 - 0.765,
            "en-en": 0.835 - 0.81,
            "es-es": 0.785 - 0.705,
        }
    )


def test_an_ear_report_draws_each_language_against_each_hyperparameter(mbert_report):
    """ding2022 Fig. 6 draws XNLI languages one by one against the dictionary's scale: the
    report draws every test language against every varied hyperparameter."""
    report, _ = mbert_report
    assert "hyperparameter_response_per_language.png" in {
        Path(path).name for path in report.plot_paths
    }
    means, varied = language_responses(_trials(CONFIGS), "accuracy")
    assert varied == ["alpha", "beta"]
    es = means[means["lang"] == "es"].dropna(subset=["beta"]).set_index("beta")["value"]
    # beta 0.1 (selected), 0.5 (grid point), 1 (off-grid): the mean of seeds 1 and 2
    assert es.to_dict() == pytest.approx({0.1: 0.785, 0.5: 0.755, 1.0: 0.715})
    assert means.loc[means["lang"] == "de", "value"].count() == 4  # the baseline too


def test_the_departures_section_declares_the_figures_no_report_draws():
    """ding2022's t-SNE figures and efimov2023's Hindi-English Fig. 1 are not drawn: the
    report of a sweep of that card says so where it lists the departures."""
    ding = departures_section({"paper": "ding2022", "citation": "Ding", "departures": []})
    assert "Figures of the paper this report does not draw:" in ding
    assert any(line.startswith("- Figs. 3-5 (t-SNE") for line in ding)
    efimov = departures_section({"paper": "efimov2023", "citation": "E", "departures": []})
    assert any("Fig. 1 (Hindi-English" in line for line in efimov)
    huang = departures_section({"paper": "huang2021", "citation": "H", "departures": []})
    assert "Figures of the paper this report does not draw:" not in huang
