"""The paper's model path offline: a checkpoint saved locally with mBERT's exact
configuration (bert-base-multilingual-cased: 119,547-token cased WordPiece vocabulary,
768 hidden, 12 layers, 12 heads, 3,072 intermediate, 512 positions, 2 token types) and
random weights is loaded through the production `from_pretrained` path: one whole trial
(one EAR step and evaluation), then every objective's loss and gradients on one batch.
The numbers are meaningless (random weights, two examples); what is tested is that every
piece fits mBERT's shapes and vocabulary."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoConfig, BertConfig, BertForMaskedLM, BertTokenizerFast

from benchmarks.workload import MBERT_BASE
from xlt_core import trial
from xlt_core.config import METHODS, TrialConfig
from xlt_core.data.loading import load_synonyms
from xlt_core.models import load_model
from xlt_core.objectives import build_objective
from xlt_core.tasks import TASKS
from xlt_core.trial import run_trial

pytestmark = pytest.mark.slow

MBERT = MBERT_BASE  # bert-base-multilingual-cased's config.json dimensions
# mBERT's vocabulary starts [PAD], [unused1..99], [UNK], [CLS], [SEP], [MASK].
SPECIAL_TOKENS = ["[PAD]", *(f"[unused{i}]" for i in range(1, 100)), "[UNK]", "[CLS]", "[SEP]"]
SPECIAL_TOKENS.append("[MASK]")

TRAIN = [
    ("The film was a good movie .", "The movie was fine .", "entailment"),
    ("A man walks to the big house .", "Nobody walks .", "contradiction"),
    ("The people liked the old car .", "The car was red .", "neutral"),
    ("She bought a small dog .", "She has a dog .", "entailment"),
]
TEST_ES = [
    ("El perro corre en el parque .", "Un animal corre .", "entailment"),
    ("La casa es grande .", "La casa es pequeña .", "contradiction"),
]


def _vocabulary(texts: list[str]) -> list[str]:
    """119,547 WordPiece entries: mBERT's special tokens, the words and characters of the
    test data (so no [UNK] is needed), and generated entries up to mBERT's size."""
    words = {word for text in texts for word in text.split()}
    characters = {ch for text in texts for ch in text if not ch.isspace()}
    known = [*sorted(words | characters), *sorted(f"##{ch}" for ch in characters)]
    entries = [*SPECIAL_TOKENS, *dict.fromkeys(known)]
    filler = MBERT["vocab_size"] - len(entries)
    return entries + [f"tok{i}" if i % 2 else f"##tok{i}" for i in range(filler)]


class _Reporter:
    """Keeps the metrics and no checkpoint (each would be mBERT's weights and optimizer)."""

    def __init__(self):
        self.reports = []

    def report(self, step, metrics, checkpoint_dir=None):
        self.reports.append((step, dict(metrics)))

    def latest_checkpoint(self):
        return None


@pytest.fixture(scope="module")
def mbert_checkpoint(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mbert-shaped")
    texts = [text for rows in (TRAIN, TEST_ES) for row in rows for text in row[:2]]
    vocabulary = {token: index for index, token in enumerate(_vocabulary(texts))}
    BertTokenizerFast(vocab=vocabulary, do_lower_case=False).save_pretrained(directory)
    config = BertConfig(**MBERT, architectures=["BertForMaskedLM"])
    BertForMaskedLM(config).save_pretrained(directory)  # random weights, ~0.7 GB
    return directory


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Local XNLI files in the XTREME layout: real English, so EAR and RS-DA draw synonym
    copies from the shipped counter-fitted table, as the paper presets do."""
    directory = tmp_path_factory.mktemp("xnli-data") / "xnli"
    directory.mkdir()
    lines = ["\t".join(row) for row in TRAIN]
    (directory / "train-en.tsv").write_text("premise\thypo\tlabel\n" + "\n".join(lines) + "\n")
    for name in ("dev-en.tsv", "test-en.tsv"):
        (directory / name).write_text("\n".join(lines[:2]) + "\n")
    (directory / "test-es.tsv").write_text("\n".join("\t".join(r) for r in TEST_ES) + "\n")
    return directory.parent


def test_checkpoint_has_mberts_exact_configuration_and_vocabulary(mbert_checkpoint):
    config = AutoConfig.from_pretrained(mbert_checkpoint)
    assert {name: getattr(config, name) for name in MBERT} == MBERT
    tokenizer = BertTokenizerFast.from_pretrained(mbert_checkpoint)
    assert len(tokenizer) == MBERT["vocab_size"]
    assert (tokenizer.pad_token_id, tokenizer.unk_token_id, tokenizer.cls_token_id) == (0, 100, 101)
    encoded = tokenizer("The film was a good movie .", "El perro corre .")["input_ids"]
    assert tokenizer.unk_token_id not in encoded  # cased WordPiece, every piece known


def _config(mbert_checkpoint, data_dir, method: str) -> TrialConfig:
    return TrialConfig.from_dict(
        {
            "model": str(mbert_checkpoint),
            "task": "xnli",
            "data_source": "local",
            "data_dir": str(data_dir),
            "target_langs": "es",
            "method": method,
            "seed": 1,
            "batch_size": 2,
            "epochs": 1.0,
            "max_train_examples": 2,  # one step: ~30-60 s on two shared cores
            "max_seq_length": 16,
            "learning_rate": 2e-5,
            "m": 1,
            "layer": 6,
        }
    )


def test_a_trial_trains_and_evaluates_on_the_mbert_shaped_checkpoint(
    mbert_checkpoint, data_dir, monkeypatch
):
    """The whole trial once (EAR: the objective that needs eager attention probabilities)."""
    loaded = []

    def load_model_spy(*args, **kwargs):
        model, tokenizer = load_model(*args, **kwargs)
        loaded.append((model.config, len(tokenizer)))
        return model, tokenizer

    load_model = trial.load_model
    monkeypatch.setattr(trial, "load_model", load_model_spy)
    reporter = _Reporter()
    result = run_trial(_config(mbert_checkpoint, data_dir, "ear"), reporter)

    ((model_config, vocabulary),) = loaded
    assert {name: getattr(model_config, name) for name in MBERT} == MBERT
    assert vocabulary == MBERT["vocab_size"]
    ((step, curve),) = reporter.reports  # one evaluation, after the step
    assert step == 1
    assert {"train/loss", "train/ce", "train/ept", "train/apt"} <= set(curve)
    assert all(math.isfinite(value) for value in curve.values())
    for key in ("dev/en/accuracy", "test/en/accuracy", "test/es/accuracy"):
        assert 0.0 <= result.metrics[key] <= 1.0
    assert len(result.example_scores["test-es"]["scores"]) == len(TEST_ES)


@pytest.fixture(scope="module")
def loaded_mbert(mbert_checkpoint, data_dir):
    """The checkpoint loaded once through the production path (`models.load_model`)."""
    config = _config(mbert_checkpoint, data_dir, "finetune")
    task = TASKS["xnli"]
    examples = task.load_training(config)
    model, tokenizer = load_model(
        config, task.num_labels(config), task.training_texts(examples), head=task.head
    )
    return model, tokenizer, examples


@pytest.mark.parametrize("method", METHODS)
def test_every_objective_computes_its_loss_and_gradients_on_mberts_shapes(
    mbert_checkpoint, data_dir, loaded_mbert, method
):
    """Each objective's loss and backward pass on mBERT's shapes and vocabulary (the
    optimiser step and evaluation, the same for every objective, run in the trial above)."""
    model, tokenizer, examples = loaded_mbert
    config = _config(mbert_checkpoint, data_dir, method)
    task = TASKS["xnli"]
    objective = build_objective(config, tokenizer.pad_token_id, load_synonyms(config))
    training_set = objective.training_set(
        examples, task.encoder(config, tokenizer, examples), config.seed
    )
    model.train()
    model.zero_grad()
    loss, parts = objective.loss(model, training_set.batch(range(min(2, len(training_set)))))
    loss.backward()
    assert math.isfinite(loss.item()) and all(math.isfinite(p.item()) for p in parts.values())
    gradient = model.get_input_embeddings().weight.grad
    assert gradient is not None and torch.isfinite(gradient).all() and gradient.abs().sum() > 0
