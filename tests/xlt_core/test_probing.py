"""Probing: related/unrelated word-pair distances against a hand computation, the random
partners' constraints, and on a tiny model: adjustment brings related pairs closer."""

import copy
import json
from pathlib import Path

import pytest
import torch
from tiny_models import tiny_bert

from xlt_core.adjustment import adjust
from xlt_core.data.parallel import load_parallel
from xlt_core.data.word_alignment import AlignedPairs, aligned_pairs
from xlt_core.models import tiny_tokenizer
from xlt_core.probing import Probe, pair_distances, unrelated_partners

CPU = torch.device("cpu")


def hand_pairs():
    # Three sentence pairs; pair 2's only target word has the same ids as pair 0's first link's.
    return AlignedPairs(
        source_ids=[[2, 10, 11, 12, 3], [2, 13, 14, 3], [2, 15, 3]],
        target_ids=[[2, 20, 21, 22, 23, 3], [2, 24, 3], [2, 23, 3]],
        source_spans=[[(1, 2), (2, 4)], [(1, 3)], [(1, 2)]],
        target_spans=[[(1, 3), (3, 4), (4, 5)], [(1, 2)], [(1, 2)]],
        links=[[(0, 2), (1, 0)], [(0, 0)], [(0, 0)]],
    )


def word_vector(encoder, ids, span):
    hidden = encoder(input_ids=torch.tensor([ids])).last_hidden_state[0]
    return hidden[span[0] : span[1]].mean(dim=0)


def test_unrelated_partners_come_from_other_sentences_and_are_not_the_translation():
    pairs = hand_pairs()
    # links in order: (pair 0, target ids [23]), (pair 0, [20, 21]), (pair 1, [24]), (pair 2, [23])
    for seed in range(20):
        partners = unrelated_partners(pairs, seed)
        assert partners[0] in (2,)  # not pair 0, and link 3's word [23] is link 0's translation
        assert partners[1] in (2, 3)
        assert partners[2] in (0, 1, 3)
        assert partners[3] in (1, 2)  # link 0 is in another pair but has the same word [23]
    with pytest.raises(ValueError, match="two sentence pairs"):
        unrelated_partners(pairs.select([0]), 0)


def test_pair_distances_match_a_hand_computation():
    pairs, encoder = hand_pairs(), tiny_bert(40)
    related, unrelated = pair_distances(encoder, pairs, pad_id=0, device=CPU, seed=3)
    partners = unrelated_partners(pairs, 3)
    with torch.no_grad():
        links = [(0, 0, 2), (0, 1, 0), (1, 0, 0), (2, 0, 0)]  # (pair, source word, target word)
        source = [
            word_vector(encoder, pairs.source_ids[k], pairs.source_spans[k][i]) for k, i, _ in links
        ]
        target = [
            word_vector(encoder, pairs.target_ids[k], pairs.target_spans[k][j]) for k, _, j in links
        ]
    for n in range(4):
        assert related[n] == pytest.approx((source[n] - target[n]).norm().item(), rel=1e-5)
        assert unrelated[n] == pytest.approx(
            (source[n] - target[partners[n]]).norm().item(), rel=1e-5
        )


def test_adjustment_lowers_related_distances_and_the_histograms_are_written(tmp_path):
    corpus = load_parallel("synthetic", "en", "es", max_sentences=300)
    tokenizer = tiny_tokenizer([*corpus.source, *corpus.target], 400, tmp_path / "cache")
    pairs = aligned_pairs(corpus, tokenizer, 32, tmp_path / "cache")
    train, held_out = pairs.select(range(250)), pairs.select(range(250, len(pairs)))
    encoder = tiny_bert(len(tokenizer))
    probe = Probe(held_out, tokenizer.pad_token_id, tmp_path / "probing", CPU, seed=0)
    probe.record("original", encoder)
    adjust(
        encoder,
        copy.deepcopy(encoder),
        train,
        held_out,
        tokenizer.pad_token_id,
        epochs=1,
        learning_rate=1e-3,
        batch_size=16,
        reg_weight=1.0,
        seed=0,
        device=CPU,
    )
    probe.record("adjusted", encoder)

    assert (
        probe.metrics["probing/adjusted_related_l2"]
        < 0.7 * probe.metrics["probing/original_related_l2"]
    )
    # adjustment separates translations from random words more than the random encoder does
    gap = {
        name: probe.metrics[f"probing/{name}_unrelated_l2"]
        - probe.metrics[f"probing/{name}_related_l2"]
        for name in ("original", "adjusted")
    }
    assert gap["adjusted"] > gap["original"]
    assert set(probe.figures) == {
        "probing/original.png",
        "probing/adjusted.png",
        "probing/original_distances.json",
        "probing/adjusted_distances.json",
    }
    for name in ("original", "adjusted"):
        with open(probe.figures[f"probing/{name}.png"], "rb") as png:
            assert png.read(8) == b"\x89PNG\r\n\x1a\n"
        distances = json.loads(Path(probe.figures[f"probing/{name}_distances.json"]).read_text())
        assert len(distances["related"]) == len(distances["unrelated"]) > 0
        mean = sum(distances["related"]) / len(distances["related"])
        assert mean == pytest.approx(probe.metrics[f"probing/{name}_related_l2"], rel=1e-6)


def test_a_probe_without_pairs_records_nothing():
    probe = Probe(None, 0, None, CPU)
    probe.record("original", tiny_bert(40))
    assert probe.figures == {} and probe.metrics == {}
