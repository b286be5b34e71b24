"""XSR: reciprocal ranks and MRR on a worked example, layer choice, padding-free mean
pooling, the Tatoeba reader, the settings XSR refuses, and an XSR trial's QA fine-tuning
before retrieval (efimov2023 L119)."""

import numpy as np
import pytest
import torch
from tiny_trials import TINY_TRIAL

from xlt_core.adjustment import tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.tatoeba import available_tatoeba_languages, load_tatoeba
from xlt_core.errors import ConfigError, DataError
from xlt_core.models import load_model, tiny_tokenizer
from xlt_core.preflight import check_resources
from xlt_core.reporting import ListReporter
from xlt_core.tasks import TASKS, retrieval
from xlt_core.tasks.retrieval import (
    choose_layer,
    layer_sentence_vectors,
    mrr_per_layer,
    reciprocal_ranks,
)
from xlt_core.trial import run_trial


def test_mrr_on_a_worked_example():
    # Three queries, three English candidates; the gold candidate of query i is candidate i.
    queries = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    candidates = torch.tensor([[2.0, 0.1], [1.0, 0.0], [-1.0, 0.2]])
    # cosines: q0 -> c0 0.9988, c1 1.0 (more similar than gold): rank 2
    #          q1 -> c1 0.0 < c0 0.0499, c2 0.196: rank 3
    #          q2 -> c2 -0.555, below c0 and c1: rank 3
    ranks = reciprocal_ranks(queries, candidates)
    np.testing.assert_allclose(ranks, [1 / 2, 1 / 3, 1 / 3])
    assert ranks.mean() == pytest.approx((1 / 2 + 1 / 3 + 1 / 3) / 3)


def test_cosine_ignores_length_and_ties_do_not_push_gold_down():
    queries = torch.tensor([[1.0, 0.0], [0.0, 3.0]])
    candidates = torch.tensor([[5.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(reciprocal_ranks(queries, candidates), [1.0, 1.0])
    tied = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(reciprocal_ranks(tied, tied), [1.0, 1.0])


def test_per_layer_ranks_and_layer_choice():
    identity = torch.eye(3)
    shuffled = identity[[1, 2, 0]]
    # layer 0 retrieves nothing right first, layer 1 everything
    ranks = mrr_per_layer(torch.stack([identity, identity]), torch.stack([shuffled, identity]))
    assert ranks.shape == (2, 3)
    np.testing.assert_allclose(ranks[1], 1.0)
    assert ranks[0].max() < 1.0
    assert choose_layer(ranks.mean(axis=1)) == 1
    assert choose_layer([0.3, 0.5, 0.5]) == 1  # a tie goes to the lower layer


def test_mean_pooling_ignores_padding(tmp_path):
    from tiny_models import tiny_bert

    tokenizer = tiny_tokenizer(
        ["the cat sat on the mat", "a dog ran far away from home"] * 5, 120, tmp_path
    )
    encoder = tiny_bert(len(tokenizer), hidden_size=16)
    sentences = ["the cat", "a dog ran far away from home"]
    together = layer_sentence_vectors(encoder, tokenizer, sentences, 32, 8, torch.device("cpu"))
    alone = layer_sentence_vectors(encoder, tokenizer, sentences[:1], 32, 8, torch.device("cpu"))
    assert together.shape == (3, 2, 16)  # embeddings + 2 layers, 2 sentences
    torch.testing.assert_close(together[:, 0], alone[:, 0], atol=1e-5, rtol=1e-5)
    ids = tokenizer(sentences[:1])["input_ids"]
    with torch.no_grad():
        hidden = encoder(torch.tensor(ids), output_hidden_states=True).hidden_states[2]
    torch.testing.assert_close(alone[2, 0], hidden[0].mean(dim=0), atol=1e-5, rtol=1e-5)


def test_local_tatoeba_pairs(shared_data):
    assert {"de", "es", "vi", "zh"} <= set(available_tatoeba_languages("local", str(shared_data)))
    pairs = load_tatoeba("local", "de", str(shared_data))
    assert len(pairs) == 1000 and pairs.english[0] == "Mary said she didn't know where Tom was."
    assert pairs.queries[0].startswith("Maria sagte")
    assert len(pairs.select(100)) == 900


def test_misaligned_files_are_named(tmp_path):
    (tmp_path / "tatoeba").mkdir()
    (tmp_path / "tatoeba" / "tatoeba.deu-eng.deu").write_text("a\nb\n")
    (tmp_path / "tatoeba" / "tatoeba.deu-eng.eng").write_text("a\n")
    with pytest.raises(DataError, match="tatoeba.deu-eng.deu has 2 lines"):
        load_tatoeba("local", "de", str(tmp_path))
    with pytest.raises(DataError, match="no Tatoeba code known for language 'xx'"):
        load_tatoeba("local", "xx", str(tmp_path))


def test_xsr_fine_tunes_only_and_a_tiny_model_needs_parallel_data():
    with pytest.raises(ConfigError, match="task=xsr supports method finetune"):
        check_resources(
            TrialConfig.from_dict({"task": "xsr", "method": "adv", "parallel_data": "synthetic"})
        )
    with pytest.raises(ConfigError, match="parallel_data"):
        TrialConfig.from_dict({"task": "xsr", "method": "finetune"})


def test_local_xsr_needs_the_qa_training_file_it_fine_tunes_on(tmp_path):
    (tmp_path / "tatoeba").mkdir()
    for side in ("spa", "eng"):
        (tmp_path / "tatoeba" / f"tatoeba.spa-eng.{side}").write_text("a\nb\n")
    config = TrialConfig.from_dict(
        {
            "task": "xsr",
            "data_source": "local",
            "data_dir": str(tmp_path),
            "target_langs": "es",
            "parallel_data": "synthetic",
        }
    )
    with pytest.raises(ConfigError, match="data_dir.*tydiqa.goldp.en.train.json"):
        check_resources(config)


XSR_TRIAL = {
    **TINY_TRIAL,
    "task": "xsr",
    "data_source": "synthetic",
    "parallel_data": "synthetic",
    "parallel_max_sentences": 60,
    "target_langs": "es",
    "learning_rate": 1e-3,
    "adjust_learning_rate": 1e-3,
    "max_train_examples": 48,
    "max_eval_examples": 16,
    "max_seq_length": 64,
}


def _retrieval_encoders(monkeypatch) -> list[dict]:
    """The weights of every encoder retrieval reads, recorded as it reads them."""
    seen, real = [], retrieval.layer_sentence_vectors

    def recording(encoder, *args, **kwargs):
        seen.append({k: v.detach().clone() for k, v in encoder.state_dict().items()})
        return real(encoder, *args, **kwargs)

    monkeypatch.setattr(retrieval, "layer_sentence_vectors", recording)
    return seen


def test_xsr_retrieves_with_the_encoder_fine_tuned_on_qa(tmp_path, monkeypatch):
    config = TrialConfig.from_dict(
        {**XSR_TRIAL, "cache_dir": str(tmp_path / "cache"), "save_model_dir": str(tmp_path / "m")}
    )
    encoders, reporter = _retrieval_encoders(monkeypatch), ListReporter()
    result = run_trial(config, reporter)
    # It trained on QA (the start/end loss), selected on QA's English dev F1, then retrieved.
    assert reporter.reports and all("train/ce" in metrics for _, metrics in reporter.reports)
    assert {"dev/en/f1", "dev/pooled/mrr", "test/es/mrr", "xsr_layer/es"} <= set(result.metrics)
    # The QA model the trial saved (its best dev checkpoint) is the encoder retrieval read ...
    from transformers import BertForQuestionAnswering

    trained = BertForQuestionAnswering.from_pretrained(str(tmp_path / "m")).base_model
    assert encoders and all(
        torch.equal(weights[name], value)
        for weights in encoders
        for name, value in trained.state_dict().items()
    )
    # ... and not the original encoder (the trial's initialisation: same texts, same seed),
    # which gives other sentence vectors.
    task = TASKS["xsr"]
    texts = task.training_texts(task.load_training(config)) + tokenizer_texts(config)
    original, tokenizer = load_model(config, 2, texts, head="question_answering")
    initial = original.base_model.state_dict()
    assert {name: value.shape for name, value in initial.items()} == {
        name: value.shape for name, value in encoders[0].items()
    }
    assert not all(torch.equal(value, encoders[0][name]) for name, value in initial.items())
    sentences = list(load_tatoeba("synthetic", "es").queries[:4])
    before, after = (
        layer_sentence_vectors(model, tokenizer, sentences, 64, 4, torch.device("cpu"))
        for model in (original.base_model, trained)
    )
    assert not torch.allclose(before[-1], after[-1])


def test_adjusted_continual_xsr_aligns_during_its_qa_fine_tuning(tmp_path):
    config = TrialConfig.from_dict(
        {**XSR_TRIAL, "adaptation": "adjusted_continual", "cache_dir": str(tmp_path)}
    )
    reporter = ListReporter()
    result = run_trial(config, reporter)
    logged = {key for _, metrics in reporter.reports for key in metrics}
    assert {"train/ce", "train/align", "train/reg"} <= logged
    assert result.metrics["adjust/steps"] >= 1
    assert 0 < result.metrics["test/es/mrr"] <= 1
