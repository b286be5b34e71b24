"""The adjustment losses (Eq. 1) against a hand computation, and the adjustment stage on a
tiny model: aligned pairs move together while the regulariser bounds the source drift."""

import copy

import pytest
import torch
from tiny_models import tiny_bert

from xlt_core.adjustment import adjust
from xlt_core.data.alignment import AlignedPairs, aligned_pairs
from xlt_core.data.parallel import load_parallel
from xlt_core.models import tiny_tokenizer
from xlt_core.objectives.alignment import (
    ContinualAlignment,
    alignment_losses,
    make_batch,
)

CPU = torch.device("cpu")


def hand_pairs():
    # Two sentence pairs of different lengths (so padding is exercised); ids are arbitrary.
    return AlignedPairs(
        source_ids=[[2, 10, 11, 12, 3], [2, 13, 14, 3]],
        target_ids=[[2, 20, 21, 22, 23, 3], [2, 24, 3]],
        source_spans=[[(1, 2), (2, 4)], [(1, 3)]],
        target_spans=[[(1, 3), (3, 4), (4, 5)], [(1, 2)]],
        links=[[(0, 2), (1, 0)], [(0, 0)]],
    )


def word_vector(encoder, ids, span):
    hidden = encoder(input_ids=torch.tensor([ids])).last_hidden_state[0]
    return hidden[span[0] : span[1]].mean(dim=0)


def test_alignment_losses_match_a_hand_computation():
    encoder, frozen = tiny_bert(40, seed=0), tiny_bert(40, seed=1)
    pairs = hand_pairs()
    align, reg = alignment_losses(encoder, frozen, make_batch(pairs, [0, 1], pad_id=0))
    linked = [(0, 0, 2), (0, 1, 0), (1, 0, 0)]  # (pair, source word, target word)
    source = torch.stack(
        [word_vector(encoder, pairs.source_ids[k], pairs.source_spans[k][i]) for k, i, _ in linked]
    )
    target = torch.stack(
        [word_vector(encoder, pairs.target_ids[k], pairs.target_spans[k][j]) for k, _, j in linked]
    )
    every_source_word = [(0, 0), (0, 1), (1, 0)]
    current = torch.stack(
        [
            word_vector(encoder, pairs.source_ids[k], pairs.source_spans[k][i])
            for k, i in every_source_word
        ]
    )
    original = torch.stack(
        [
            word_vector(frozen, pairs.source_ids[k], pairs.source_spans[k][i])
            for k, i in every_source_word
        ]
    )
    assert align.item() == pytest.approx(((source - target) ** 2).mean().item(), rel=1e-5)
    assert reg.item() == pytest.approx(((current - original) ** 2).mean().item(), rel=1e-5)
    # a frozen copy of the encoder itself gives no regularisation
    _, zero = alignment_losses(encoder, copy.deepcopy(encoder), make_batch(pairs, [0, 1], pad_id=0))
    assert zero.item() == pytest.approx(0.0, abs=1e-10)


def test_continual_objective_adds_weighted_alignment_parts():
    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.base_model = tiny_bert(40, seed=0)

    class ConstantTask:
        def loss(self, model, batch):
            value = torch.tensor(2.0)
            return value, {"ce": value}

    model, frozen = Head(), tiny_bert(40, seed=1)
    pairs = hand_pairs()
    objective = ContinualAlignment(
        ConstantTask(),
        pairs,
        frozen,
        alpha=0.5,
        reg_weight=3.0,
        pad_id=0,
        seed=0,
        pairs_per_step=16,
    )
    loss, parts = objective.loss(model, {})
    align, reg = alignment_losses(model.base_model, frozen, make_batch(pairs, [0, 1], pad_id=0))
    assert set(parts) == {"ce", "align", "reg"}
    assert parts["align"].item() == pytest.approx(
        align.item(), rel=1e-5
    )  # both pairs sampled (16 > 2)
    assert loss.item() == pytest.approx(2.0 + 0.5 * align.item() + 3.0 * reg.item(), rel=1e-5)


@pytest.fixture(scope="module")
def synthetic_pairs(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    corpus = load_parallel("synthetic", "en", "de", max_sentences=400)
    tokenizer = tiny_tokenizer([*corpus.source, *corpus.target], 400, cache)
    pairs = aligned_pairs(corpus, tokenizer, 32, cache)
    return pairs.select(range(300)), pairs.select(range(300, len(pairs))), tokenizer


def run_adjustment(synthetic_pairs, reg_weight):
    train, held_out, tokenizer = synthetic_pairs
    encoder = tiny_bert(len(tokenizer))
    frozen = copy.deepcopy(encoder)
    metrics = adjust(
        encoder,
        frozen,
        train,
        held_out,
        tokenizer.pad_token_id,
        epochs=2,
        learning_rate=1e-3,
        batch_size=16,
        reg_weight=reg_weight,
        seed=0,
        device=CPU,
    )
    return metrics


def test_adjustment_pulls_aligned_words_together_and_the_regulariser_bounds_drift(synthetic_pairs):
    regularised = run_adjustment(synthetic_pairs, reg_weight=1.0)
    free = run_adjustment(synthetic_pairs, reg_weight=0.0)
    for metrics in (regularised, free):
        assert (
            metrics["adjust/aligned_distance_after"]
            < 0.7 * metrics["adjust/aligned_distance_before"]
        )
    # held-out English vectors stay closer to the original model's with the regulariser
    assert regularised["adjust/source_drift"] < 0.8 * free["adjust/source_drift"]
