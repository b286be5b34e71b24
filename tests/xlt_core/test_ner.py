"""NER: entity-level F1 (checked against seqeval) and token-level F1 (checked against
sklearn) on worked examples, a trial logging both, first-subword labels, and the local PAN-X
reader."""

import numpy as np
import pytest
from seqeval.metrics import f1_score
from sklearn.metrics import f1_score as sklearn_f1
from tiny_trials import TINY_TRIAL

from xlt_core.config import TrialConfig
from xlt_core.data.ner import NER_LABELS, TaggedSentence, load_ner
from xlt_core.errors import DataError
from xlt_core.models import tiny_tokenizer
from xlt_core.reporting import ListReporter
from xlt_core.tasks.token_classification import (
    IGNORE,
    encode_tokens,
    entity_counts,
    f1_from_counts,
    score_tags,
    token_counts,
)
from xlt_core.trial import run_trial

ids = lambda tags: [NER_LABELS.index(t) for t in tags]  # noqa: E731


def test_entity_f1_on_a_worked_example():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "O"], ["O", "O"]]
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "B-LOC"], ["O", "O"]]
    # Sentence 1: PER right, LOC missed and ORG spurious; sentence 2: ORG right, LOC spurious.
    assert [entity_counts(g, p) for g, p in zip(gold, predicted)] == [
        [1, 1, 1],
        [1, 1, 0],
        [0, 0, 0],
    ]
    # tp=2, fp=2, fn=1: precision 1/2, recall 2/3, F1 = 2*2 / (2*2 + 2 + 1) = 4/7
    scored = score_tags([ids(p) for p in predicted], [ids(g) for g in gold])
    assert scored["value"] == pytest.approx(4 / 7)
    assert scored["value"] == pytest.approx(f1_score(gold, predicted))
    assert scored["metric"] == "f1" and scored["counts"] == [[1, 1, 1], [1, 1, 0], [0, 0, 0]]
    assert f1_from_counts(np.array(scored["counts"])) == pytest.approx(4 / 7)


def test_token_f1_on_a_worked_example():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "O"], ["O", "O"]]
    predicted = [["B-PER", "O", "O", "B-ORG"], ["I-ORG", "O", "B-LOC"], ["O", "O"]]
    # Words, O left out: B-PER right; I-PER missed; B-LOC read as B-ORG (a false positive and
    # a false negative); B-ORG read as I-ORG (the same); a spurious B-LOC.
    counts = [token_counts(ids(g), ids(p)) for g, p in zip(gold, predicted)]
    assert counts == [[1, 1, 2], [0, 2, 1], [0, 0, 0]]
    # tp=1, fp=3, fn=3: F1 = 2*1 / (2*1 + 3 + 3) = 1/4. Entity level differs: only ORG is
    # right (I-ORG opens it), the cut PER is wrong: tp=1, fp=3, fn=2, F1 = 2/7.
    scored = score_tags([ids(p) for p in predicted], [ids(g) for g in gold])
    assert scored["token_f1"] == pytest.approx(1 / 4)
    flat = lambda rows: [tag for row in rows for tag in row]  # noqa: E731
    entity_tags = [tag for tag in NER_LABELS if tag != "O"]
    expected = sklearn_f1(flat(gold), flat(predicted), labels=entity_tags, average="micro")
    assert scored["token_f1"] == pytest.approx(expected)
    assert scored["value"] == pytest.approx(f1_score(gold, predicted)) == pytest.approx(2 / 7)


def test_a_wrong_boundary_is_a_wrong_entity():
    assert entity_counts(["B-PER", "I-PER"], ["B-PER", "O"]) == [0, 1, 1]
    # an I- tag that starts an entity opens one (CoNLL convention, as seqeval does)
    assert entity_counts(["B-LOC"], ["I-LOC"]) == [1, 0, 0]


def test_labels_sit_on_first_subwords(tmp_path):
    tokenizer = tiny_tokenizer(
        ["Zuccalmaglio lives in Berlin"] * 3 + ["a b c d e f"] * 5, 110, tmp_path
    )
    sentence = TaggedSentence(
        ("Zuccalmaglio", "lives", "in", "Berlin"), tuple(ids(["B-PER", "O", "O", "B-LOC"]))
    )
    encoded = encode_tokens(tokenizer, [sentence], 64)
    labels, first = encoded.labels[0], encoded.first_subword[0]
    assert [labels[p] for p in first] == list(sentence.tags)
    assert sum(label != IGNORE for label in labels) == 4
    assert labels[0] == IGNORE and labels[-1] == IGNORE  # [CLS], [SEP]


def test_local_panx_reader(tmp_path):
    (tmp_path / "panx").mkdir()
    (tmp_path / "panx" / "dev-xx.tsv").write_text(
        "Anton\tB-PER\nWilhelm\tI-PER\n.\tO\n\nParis\tB-LOC\n", encoding="utf-8"
    )
    sentences = load_ner("local", "test", "xx", str(tmp_path))  # local test reads dev files
    assert sentences[0].words == ("Anton", "Wilhelm", ".") and sentences[1].tags == (
        NER_LABELS.index("B-LOC"),
    )
    (tmp_path / "panx" / "dev-yy.tsv").write_text("Anton\tB-PERSON\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"dev-yy.tsv:1: expected token<TAB>tag"):
        load_ner("local", "dev", "yy", str(tmp_path))


def test_a_ner_trial_logs_entity_and_token_level_f1(tmp_path):
    config = TrialConfig.from_dict(
        {
            **TINY_TRIAL,
            "task": "ner",
            "data_source": "synthetic",
            "max_train_examples": 32,
            "max_eval_examples": 16,
            "learning_rate": 1e-3,
            "cache_dir": str(tmp_path / "cache"),
        }
    )
    result = run_trial(config, ListReporter())
    for split, lang in [("dev", "en"), *(("test", lang) for lang in config.target_langs)]:
        scores = result.example_scores[f"{split}-{lang}"]
        counts = [token_counts(g, p) for g, p in zip(scores["labels"], scores["predictions"])]
        # Each logged value is the one its artifact's predictions give.
        assert result.metrics[f"{split}/{lang}/token_f1"] == pytest.approx(
            f1_from_counts(np.asarray(counts))
        )
        assert result.metrics[f"{split}/{lang}/f1"] == pytest.approx(
            f1_from_counts(np.asarray(scores["counts"]))
        )
