"""A trial's model as an MLflow transformers model (sweeps/records/model_logging.py): MLflow's own
loaders open it and it predicts with the task's label names."""

import logging

import mlflow
import pandas as pd
import transformers

from sweeps.records.model_logging import save_mlflow_models
from xlt_core.data.examples import XNLI_LABELS
from xlt_core.models import tiny_tokenizer

PAIRS = [("the cat sat on the mat", "a cat sits"), ("a dog ran in the park", "nobody ran")]


def save_tiny_classifier(folder, tmp_path):
    texts = [text for pair in PAIRS for text in pair] * 20
    tokenizer = tiny_tokenizer(texts, 120, tmp_path / "cache")
    config = transformers.BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
    )
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def test_the_trained_model_loads_with_mlflows_loaders_and_names_its_labels(tmp_path):
    save_tiny_classifier(tmp_path / "trained", tmp_path)
    save_mlflow_models(tmp_path / "trained", tmp_path / "model", "xnli")
    pipeline = mlflow.transformers.load_model(str(tmp_path / "model"))
    predicted = pipeline(
        [{"text": premise, "text_pair": hypothesis} for premise, hypothesis in PAIRS]
    )
    assert len(predicted) == 2
    assert {row["label"] for row in predicted} <= set(XNLI_LABELS)
    model = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    frame = pd.DataFrame(PAIRS, columns=["text", "text_pair"])
    scored = model.predict(frame)
    assert list(scored["label"]) == [row["label"] for row in predicted]
    assert scored["score"].between(0, 1).all()
    assert [c.name for c in model.metadata.signature.inputs.inputs] == ["text", "text_pair"]


def test_language_stages_become_one_model_each_and_nothing_saved_gives_nothing(tmp_path):
    for lang in ("es", "ru"):
        save_tiny_classifier(tmp_path / "trained" / lang, tmp_path)
    save_mlflow_models(tmp_path / "trained", tmp_path / "model", "xnli")
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["es", "ru"]
    assert (tmp_path / "model" / "ru" / "MLmodel").is_file()
    save_mlflow_models(tmp_path / "absent", tmp_path / "none", "xnli")
    assert not (tmp_path / "none").exists()


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_the_model_has_its_own_card_and_mlflow_warns_of_no_hub_card_or_licence(tmp_path):
    # MLflow looked a card and licence up on the hub by the model's path before, and warned at
    # every trial that it found neither (issue 45).
    save_tiny_classifier(tmp_path / "trained", tmp_path)
    records = Records()
    mlflow_logger = logging.getLogger("mlflow")
    mlflow_logger.addHandler(records)
    try:
        save_mlflow_models(tmp_path / "trained", tmp_path / "model", "xnli")
    finally:
        mlflow_logger.removeHandler(records)
    warnings = [r.getMessage() for r in records.records if r.levelno >= logging.WARNING]
    assert warnings == []
    assert "xlt-sweeps trial" in (tmp_path / "model" / "model_card.md").read_text()
    data = (tmp_path / "model" / "model_card_data.yaml").read_text()
    assert "pipeline_tag: text-classification" in data
