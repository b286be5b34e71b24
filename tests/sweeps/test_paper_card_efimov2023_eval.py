"""efimov2023's QA and XSR paper presets (sweeps/adjust_qa.py, sweeps/adjust_xsr.py) against
the paper's card (sweeps/papers/efimov2023.yaml): every trial holds each setting the card
fixes (or its declared departure's `ours`); the QA preset evaluates what Table 4 reports
(MLQA's test split and cross-lingual directions, TyDi QA Russian, XQuAD) under keys the
reproduction view matches to Table 4's rows; the XSR preset compares the three encoders of
Table 5, each fine-tuned on QA."""

import dataclasses

import pytest
from paper_card_checks import PAPER_TEXTS, misquoted, preset_mismatches, spec_mismatches

from analysis.papers import load_published_results, matching_cells
from sweeps import adjust_qa, adjust_xsr
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import load_card
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import TrialConfig
from xlt_core.data.examples import QAExample
from xlt_core.tasks import TASKS, qa

CARD = load_card("efimov2023")
SCRIPTS = {"adjust_qa": adjust_qa, "adjust_xsr": adjust_xsr}
PAPER_LANGUAGES = ("es", "ru", "vi", "hi")  # L97, Tables 4 and 5
ENCODERS = ["none", "adjusted", "adjusted_continual"]


def _trials(script) -> list[TrialConfig]:
    spec = experiment_spec(script, "paper", None)
    return [trial_config(spec.base, point, seed) for point in spec.points for seed in spec.seeds]


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_trial_of_the_paper_preset_holds_the_cards_settings(name):
    assert preset_mismatches(SCRIPTS[name], "paper") == []
    trials = _trials(SCRIPTS[name])
    assert [t.adaptation for t in trials[::5]] == ENCODERS
    assert [t.seed for t in trials[:5]] == [1, 2, 3, 4, 5]  # L125: five runs
    # What the card holds is HuggingFace's run_qa.py budget and the paper's, read back by hand.
    for trial in trials:
        assert (trial.learning_rate, trial.epochs, trial.max_seq_length) == (3e-5, 2.0, 384)
        assert (trial.batch_size, trial.warmup_ratio, trial.precision) == (32, 0.0, "fp32")
        assert trial.target_langs == PAPER_LANGUAGES
        assert (trial.model, trial.data_source) == ("bert-base-multilingual-cased", "hub")
    assert qa._stride(trials[0]) == 128  # run_qa.py's --doc_stride 128


def test_a_trial_that_leaves_the_card_is_named():
    spec = experiment_spec(adjust_qa, "paper", None)
    points = [*spec.points]
    points[2] = {**points[2], "continual_alpha": 0.1}
    spec = dataclasses.replace(spec, base={**spec.base, "mlqa_split": "dev"}, points=points)
    found = spec_mismatches(spec, CARD)
    assert any("mlqa_split='dev', card 'test'" in line for line in found)
    assert any("continual_alpha=0.1, card 0.01" in line for line in found)
    # mlqa_split in each of the 3 points' trials, continual_alpha in the continual point's
    assert len(found) == (3 + 1) * len(spec.seeds)


def test_the_qa_preset_reads_mlqa_test_and_the_xsr_preset_fine_tunes_on_qa():
    (qa_trial, *_), (xsr_trial, *_) = _trials(adjust_qa), _trials(adjust_xsr)
    assert (qa_trial.task, qa_trial.mlqa_split) == ("qa", "test")
    assert xsr_trial.task == "xsr" and xsr_trial.selection_metric() == "dev/pooled/mrr"
    departures = {d.setting for d in CARD.departures("adjust_xsr")}
    assert {"XSR's QA fine-tuning", "XSR layer choice"} <= departures
    assert "XSR layer choice" not in {d.setting for d in CARD.departures("adjust_qa")}


def _paper_qa_keys(monkeypatch) -> set[str]:
    """`<set>/<lang>` of every evaluation set an adjust_qa paper trial builds (hub data
    stubbed: only which sets and directions are read matters here)."""
    stub = [QAExample("1", "q", "c", ("c",), 0)]
    monkeypatch.setattr(qa, "load_eval_set", lambda *args: stub)
    monkeypatch.setattr(qa, "load_training", lambda *args: stub)
    return {"/".join(key) for key in TASKS["qa"]._evaluation_sets(_trials(adjust_qa)[0])}


def test_every_table_4_cell_meets_a_metric_of_the_qa_preset(monkeypatch):
    keys = _paper_qa_keys(monkeypatch)
    published = load_published_results()
    table = published[(published["paper"] == "efimov2023") & (published["table"] == "Table 4")]
    matched = 0
    for split in ("xquad", "mlqa", "tydiqa"):
        for adaptation in ENCODERS:
            cells = matching_cells(
                published,
                "qa",
                "bert-base-multilingual-cased",
                split,
                "f1",
                "finetune",
                adaptation,
                {},
            )
            cells = cells[cells["paper"] == "efimov2023"]
            assert {f"{split}/{lang}" for lang in cells["our_lang"]} <= keys
            matched += len(cells)
    assert matched == len(table) == 66  # every printed cell: 72 less Russian TyDi QA's 6 "–"
    assert {"mlqa/es-en", "mlqa/en-hi", "tydiqa/ru", "xquad/vi-en"} <= keys


def test_mlqas_cells_meet_both_normalisations_and_the_other_sets_one():
    """Table 4's MLQA cells are read against `f1` (MLQA's normalisation) and `f1_squad`
    (SQuAD v1.1's, what the released evaluation scores MLQA with); XQuAD's and TyDi QA's
    `f1_squad` is their `f1`, compared once."""
    published = load_published_results()

    def met(split: str, metric: str):
        cells = matching_cells(
            published, "qa", MBERT, split, metric, "finetune", "adjusted", {"epochs": 2.0}
        )
        return cells[(cells["paper"] == "efimov2023") & (cells["budget"] == "")]

    mlqa = met("mlqa", "f1")
    assert len(mlqa) == 9 and set(mlqa["task"]) == {"mlqa"}  # es, vi, hi x three parts
    assert met("mlqa", "f1_squad")["line"].tolist() == mlqa["line"].tolist()
    assert met("xquad", "f1_squad").empty and met("tydiqa", "f1_squad").empty
    # the card says which the paper's figures came from: the released squad.py
    (departure,) = [d for d in CARD.departures("adjust_qa") if d.setting.startswith("QA answer")]
    assert "data/metrics/squad.py" in departure.paper
    assert "`mlqa/<lang>/f1_squad`" in departure.reason


MBERT = "bert-base-multilingual-cased"


def test_every_table_5_cell_meets_a_metric_of_the_xsr_preset():
    published = load_published_results()
    (trial, *_) = _trials(adjust_xsr)
    for adaptation in ENCODERS:
        cells = matching_cells(
            published, "xsr", trial.model, "test", "mrr", "finetune", adaptation, {}
        )
        assert sorted(cells["our_lang"]) == sorted(trial.target_langs)


def test_every_quote_of_the_qa_and_xsr_sections_is_on_its_line_of_the_paper():
    if not (PAPER_TEXTS / CARD.text).is_file():
        pytest.skip(f"the paper text {PAPER_TEXTS / CARD.text} is missing")
    assert misquoted(CARD) == []
