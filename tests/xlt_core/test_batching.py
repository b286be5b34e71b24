"""Length-grouped training batches (`train.epoch_batches`, `group_by_length`) and the
token-budget evaluation batches every task predicts with (`token_budget_batches`)."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from tiny_models import NO_DROPOUT, tiny_bert
from transformers import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
)

from xlt_core.batching import token_budget_batches
from xlt_core.config import TrialConfig
from xlt_core.data.squad import QAExample
from xlt_core.errors import ConfigError
from xlt_core.models import tiny_tokenizer
from xlt_core.objectives.ear import AugmentedPairTrainingSet
from xlt_core.reporting import ListReporter
from xlt_core.tasks.extractive_qa import QAFeatures, QATrainingSet, encode_qa, predict_answers
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs, PairTrainingSet, predict
from xlt_core.tasks.retrieval import layer_sentence_vectors
from xlt_core.tasks.token_classification import EncodedTokens, TokenTrainingSet, predict_tags
from xlt_core.train import LENGTH_GROUP_BATCHES, epoch_batches, train

CPU = torch.device("cpu")


def realistic_lengths(size: int, seed: int = 0) -> list[int]:
    """Token counts shaped like XNLI pairs under a WordPiece vocabulary: a long right tail
    around a median of ~40, cut to [8, 128]."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(rng.lognormal(np.log(40), 0.45, size)), 8, 128).astype(int).tolist()


def padded_per_real(batches: list[list[int]], lengths: list[int]) -> float:
    padded = sum(len(b) * max(lengths[i] for i in b) for b in batches)
    return padded / sum(lengths[i] for b in batches for i in b)


# --- training batches -------------------------------------------------------------------


@pytest.mark.parametrize("group", [True, False])
def test_an_epoch_visits_every_item_once_and_keeps_the_last_partial_batch(group):
    size, batch_size = 1003, 8  # three chunks of 400, 400, 203 items; 203 = 25 x 8 + 3
    lengths = realistic_lengths(size) if group else None
    batches = epoch_batches(size, batch_size, seed=3, epoch=1, lengths=lengths)
    assert sorted(i for b in batches for i in b) == list(range(size))
    assert len(batches) == -(-size // batch_size)  # the step count train() plans with
    assert sorted(len(b) for b in batches)[:2] == [3, batch_size]  # one partial batch


def test_grouped_batches_pad_little_on_a_realistic_length_distribution():
    lengths = realistic_lengths(5000)
    grouped = epoch_batches(len(lengths), 32, seed=0, epoch=0, lengths=lengths)
    random = epoch_batches(len(lengths), 32, seed=0, epoch=0)
    assert padded_per_real(grouped, lengths) <= 1.1
    assert padded_per_real(random, lengths) >= 1.3  # the distribution does make padding
    # the batches' lengths are in random order, not sorted across the epoch
    widths = [max(lengths[i] for i in b) for b in grouped]
    assert widths != sorted(widths) and widths != sorted(widths, reverse=True)
    # each batch comes from one chunk of LENGTH_GROUP_BATCHES batches of the permutation
    order = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(0)).tolist()
    chunk_of = {item: k // (LENGTH_GROUP_BATCHES * 32) for k, item in enumerate(order)}
    assert all(len({chunk_of[i] for i in b}) == 1 for b in grouped)


def test_the_order_is_fixed_by_seed_and_epoch():
    lengths = realistic_lengths(500)
    batches = lambda seed, epoch: epoch_batches(500, 16, seed, epoch, lengths)  # noqa: E731
    assert batches(1, 2) == batches(1, 2)
    assert batches(1, 2) != batches(2, 2)
    assert batches(1, 2) != batches(1, 3)


def test_without_grouping_the_order_is_the_former_random_permutation():
    size, batch_size, seed, epoch = 100, 8, 4, 1
    order = torch.randperm(size, generator=torch.Generator().manual_seed(seed * 100_003 + epoch))
    former = [
        order[p * batch_size : (p + 1) * batch_size].tolist() for p in range(-(-size // batch_size))
    ]
    assert epoch_batches(size, batch_size, seed, epoch) == former


class RecordingSet:
    """A training set that records the batches it is asked for."""

    def __init__(self, lengths):
        self._lengths = lengths
        self.visited: list[list[int]] = []

    def __len__(self):
        return len(self._lengths)

    def lengths(self):
        return self._lengths

    def batch(self, indices):
        self.visited.append(list(indices))
        return {"x": torch.tensor([[float(self._lengths[i])] for i in indices]) / 100}


class Interrupted(Exception):
    pass


class SquaredError:
    name = "test"

    def __init__(self, interrupt_at: int | None = None):
        self.calls, self.interrupt_at = 0, interrupt_at

    def loss(self, model, batch):
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise Interrupted
        loss = ((model(batch["x"]) - 1.0) ** 2).mean()
        return loss, {"ce": loss}


def run_training(config, lengths, reporter, interrupt_at=None):
    torch.manual_seed(0)
    model, training_set = torch.nn.Linear(1, 1), RecordingSet(lengths)
    try:
        train(model, SquaredError(interrupt_at), training_set, config, lambda: 0.0, reporter, CPU)
    except Interrupted:
        pass
    return training_set.visited, model


# 100 items in batches of 8: 13 steps per epoch, 26 in all; a checkpoint every 4 steps.
TRAINING = dict(batch_size=8, epochs=2.0, evals_per_epoch=3, learning_rate=1e-2, seed=5)


@pytest.mark.parametrize("group", [True, False])
def test_train_visits_the_epoch_batches(group):
    lengths = realistic_lengths(100)
    config = TrialConfig(**TRAINING, group_by_length=group)
    visited, _ = run_training(config, lengths, ListReporter())
    expected = [
        b for epoch in (0, 1) for b in epoch_batches(100, 8, 5, epoch, lengths if group else None)
    ]
    assert visited == expected


@pytest.mark.parametrize("interrupt_at", [7, 19])  # mid epoch 0 (resumes at 4), mid epoch 1
def test_a_resumed_run_visits_the_batches_of_an_uninterrupted_one(interrupt_at):
    lengths, config = realistic_lengths(100), TrialConfig(**TRAINING)
    whole, whole_model = run_training(config, lengths, ListReporter())
    reporter = ListReporter()
    before, _ = run_training(config, lengths, reporter, interrupt_at)
    resumed_at = reporter.reports[-1][0]
    assert resumed_at < interrupt_at - 1  # steps after the checkpoint are done again
    after, resumed_model = run_training(config, lengths, reporter)
    assert before[:resumed_at] + after == whole
    assert reporter.reports[-1][0] == len(whole) == 26
    for a, b in zip(whole_model.parameters(), resumed_model.parameters()):
        torch.testing.assert_close(a, b)


def test_each_training_set_gives_the_width_its_items_pad_a_batch_to():
    ids = [[1] * n for n in (5, 9, 3, 7)]
    pairs = EncodedPairs(ids, [[0] * len(row) for row in ids], [0, 1, 2, 0])
    tokens = EncodedTokens(ids, [[-100] * len(row) for row in ids], [[1]] * 4, [(0,)] * 4)
    windows = QAFeatures(
        ids, [[0] * len(row) for row in ids], [0] * 4, [[None]] * 4, [0] * 4, [0] * 4
    )
    for training_set in (
        PairTrainingSet(pairs, 0),
        TokenTrainingSet(tokens, 0),
        QATrainingSet(windows, 0),
    ):
        assert training_set.lengths() == [5, 9, 3, 7]
    # EAR: item i stacks copy i over its original i // m, so its width is the longer one.
    copies_ids = [[1] * n for n in (4, 6, 10, 2, 1, 8, 3, 3)]
    copies = EncodedPairs(copies_ids, [[0] * len(r) for r in copies_ids], [0] * 8)
    ear = AugmentedPairTrainingSet(pairs, copies, m=2, pad_id=0)
    assert ear.lengths() == [5, 6, 10, 9, 3, 8, 7, 7]
    for indices in ([0, 1], [2, 4, 7], [3]):
        width = ear.batch(indices)["input_ids"].shape[1]
        assert width == max(ear.lengths()[i] for i in indices)


def test_settings_are_validated():
    assert TrialConfig().group_by_length is True
    assert TrialConfig.from_dict({"group_by_length": "false"}).group_by_length is False
    with pytest.raises(ConfigError, match="group_by_length"):
        TrialConfig.from_dict({"group_by_length": "sometimes"})
    assert TrialConfig().eval_token_budget() == 2 * 32 * 128
    config = TrialConfig.from_dict({"eval_tokens_per_batch": "4096"})
    assert config.eval_token_budget() == 4096
    with pytest.raises(ConfigError, match="eval_tokens_per_batch"):
        TrialConfig.from_dict({"eval_tokens_per_batch": 64})  # below max_seq_length=128


# --- evaluation batches -------------------------------------------------------------------


def test_token_budget_batches_sort_by_length_and_fit_the_budget():
    lengths = realistic_lengths(700, seed=2)
    batches = token_budget_batches(lengths, 16, tokens_per_batch=2048)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(700))
    assert [lengths[i] for i in flat] == sorted(lengths)
    assert all(len(b) * max(lengths[i] for i in b) <= 2048 for b in batches)
    # each batch holds as many rows as fit: one more row would pass the budget
    assert all(
        (len(a) + 1) * lengths[b[0]] > 2048 for a, b in zip(batches, batches[1:], strict=False)
    )
    assert len(batches) < 700 // 16  # short rows share batches the fixed count kept apart
    # default budget: batch_size rows of the longest length, the widest fixed-count batch
    assert token_budget_batches([3, 10, 4], 2) == [[0, 2], [1]]
    assert token_budget_batches([50, 5], 4, tokens_per_batch=20) == [[1], [0]]  # over budget
    assert token_budget_batches([], 4) == []


def tiny_model(model_class, vocab_size: int, **settings):
    # wide initial weights: predictions that differ between examples
    return tiny_bert(vocab_size, model_class, initializer_range=0.3, **NO_DROPOUT, **settings)


def random_rows(count: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [
        [2] + rng.integers(5, 120, size=n - 2).tolist() + [3] for n in rng.integers(4, 60, count)
    ]


# Budgets: one row per batch (no padding at all: the reference), tight, default, everything.
BUDGETS = (1, 200, None, 100_000)


def test_pair_predictions_are_the_same_under_every_budget():
    ids = random_rows(90, seed=0)
    encoded = EncodedPairs(ids, [[0] * len(row) for row in ids], [0] * len(ids))
    model = tiny_model(BertForSequenceClassification, 128, num_labels=3)
    predictions = [predict(model, encoded, 8, 0, CPU, tokens_per_batch=b) for b in BUDGETS]
    assert len(set(predictions[0].tolist())) > 1  # the comparison is not trivial
    for other in predictions[1:]:
        np.testing.assert_array_equal(other, predictions[0])


def test_ner_predictions_are_the_same_under_every_budget():
    ids = random_rows(60, seed=1)
    firsts = [list(range(1, len(row) - 1)) + [-1] for row in ids]  # the last word cut off
    encoded = EncodedTokens(ids, [[-100] * len(row) for row in ids], firsts, [()] * len(ids))
    model = tiny_model(BertForTokenClassification, 128, num_labels=7)
    tags = [predict_tags(model, encoded, 8, 0, CPU, tokens_per_batch=b) for b in BUDGETS]
    assert all(row[-1] == 0 for row in tags[0])  # a word cut off is O
    for other in tags[1:]:
        assert other == tags[0]


def qa_examples() -> list[QAExample]:
    words = [f"w{i}" for i in range(80)]
    return [
        QAExample(
            str(k), "where is " + words[k], " ".join(words[k : k + 10 + 7 * k]), (words[k],), 0
        )
        for k in range(9)
    ]


def test_qa_answers_are_the_same_under_every_budget(tmp_path):
    examples = qa_examples()
    tokenizer = tiny_tokenizer([e.context for e in examples] + ["where is"], 150, tmp_path)
    features = encode_qa(tokenizer, examples, max_length=32, stride=8)
    assert len(features) > len(examples)  # long contexts are split into windows
    model = tiny_model(BertForQuestionAnswering, len(tokenizer))
    pad = tokenizer.pad_token_id
    answers = [
        predict_answers(model, features, examples, 8, pad, CPU, tokens_per_batch=b) for b in BUDGETS
    ]
    assert all(answers[0])
    for other in answers[1:]:
        assert other == answers[0]


class PositionScores(torch.nn.Module):
    """Start and end logits that fall with the position: in every window the best span is
    its first context token, with the same score in every window of equal question."""

    def forward(self, input_ids, **_):
        logits = -torch.arange(input_ids.shape[1], dtype=torch.float).expand(input_ids.shape)
        return SimpleNamespace(start_logits=logits, end_logits=logits)


def test_a_tie_between_windows_goes_to_the_first_window_as_before(tmp_path):
    example = qa_examples()[8]  # 66 context words: several windows, the last one shorter
    tokenizer = tiny_tokenizer([example.context, example.question], 150, tmp_path)
    features = encode_qa(tokenizer, [example], max_length=32, stride=8)
    assert len({len(ids) for ids in features.input_ids}) > 1  # sorting moves windows
    first_window = next(span for span in features.offsets[0] if span is not None)
    answer = predict_answers(PositionScores(), features, [example], 8, 0, CPU, tokens_per_batch=64)
    assert answer == [example.context[first_window[0] : first_window[1]]]


def test_sentence_vectors_are_the_same_under_every_budget_and_in_order(tmp_path):
    sentences = [" ".join(f"w{k}" for k in range(n)) for n in (3, 17, 1, 9, 30, 5, 12, 2)]
    tokenizer = tiny_tokenizer(sentences, 120, tmp_path)
    encoder = tiny_model(BertModel, len(tokenizer))
    vectors = [
        layer_sentence_vectors(encoder, tokenizer, sentences, 64, 2, CPU, tokens_per_batch=b)
        for b in BUDGETS
    ]
    assert vectors[0].shape == (3, len(sentences), 32)
    for other in vectors[1:]:
        torch.testing.assert_close(other, vectors[0], atol=1e-5, rtol=1e-5)
    alone = layer_sentence_vectors(encoder, tokenizer, sentences[4:5], 64, 2, CPU)
    torch.testing.assert_close(vectors[2][:, 4:5], alone, atol=1e-5, rtol=1e-5)
