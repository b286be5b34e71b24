"""RS-syntax (huang2021 Sec. 5): copies that differ from the original only by swaps of
adjacent words, at the rate p; and the dictionary scale of ding2022 Table 6."""

import random

import pytest

from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.synonyms import scaled_table
from xlt_core.data.word_order import swap_adjacent
from xlt_core.objectives import build_objective
from xlt_core.objectives.smoothing import SyntacticAugmentation


def recovered_swaps(original: list[str], copy: list[str]) -> tuple[int, int]:
    """(swaps, decisions) read back from a copy of distinct words; fails unless the copy is
    the original with disjoint adjacent pairs swapped."""
    rebuilt, swaps, decisions, i = list(original), 0, 0, 0
    while i < len(original) - 1:
        decisions += 1
        if copy[i] != original[i]:
            rebuilt[i], rebuilt[i + 1] = rebuilt[i + 1], rebuilt[i]
            swaps += 1
            i += 2
        else:
            i += 1
    assert rebuilt == copy, (original, copy)
    return swaps, decisions


@pytest.mark.parametrize("p", [0.1, 0.3])
def test_copies_differ_by_adjacent_swaps_at_rate_p(p):
    rng = random.Random(0)
    swaps = decisions = words = 0
    while words < 10_000:
        sentence = [f"w{words + k}" for k in range(rng.randint(3, 30))]
        copy = swap_adjacent(" ".join(sentence), p, rng).split(" ")
        s, d = recovered_swaps(sentence, copy)
        swaps, decisions, words = swaps + s, decisions + d, words + len(sentence)
    assert abs(swaps / decisions - p) <= 0.02


def test_swap_with_probability_one_swaps_every_disjoint_pair():
    assert swap_adjacent("a b c d e", 1.0, random.Random(0)) == "b a d c e"


def test_rs_syntax_trains_on_m_perturbed_copies_only():
    examples = [PairExample("a b c d", "e f g h", 1), PairExample("i j k", "l m n", 0)]
    config = TrialConfig.from_dict({"method": "rs_syntax", "m": 3, "swap_probability": 0.5})
    objective = build_objective(config, pad_id=0, synonyms=None)
    assert isinstance(objective, SyntacticAugmentation)
    copies = objective.training_examples(examples, seed=1)
    assert len(copies) == 6
    assert [c.label for c in copies] == [1, 1, 1, 0, 0, 0]
    assert copies == objective.training_examples(examples, seed=1)  # seeded
    for copy, example in zip(copies, [examples[0]] * 3 + [examples[1]] * 3):
        recovered_swaps(example.sentence1.split(" "), copy.sentence1.split(" "))
        recovered_swaps(example.sentence2.split(" "), copy.sentence2.split(" "))
    assert any(c.sentence1 != examples[0].sentence1 for c in copies[:3])


def test_dictionary_scale_keeps_nested_floor_of_entries_same_for_every_seed():
    table = {f"w{i}": [f"n{i}"] for i in range(49_975)}
    # ding2022 Table 6's dictionary sizes at 0.75, 0.5 and 0.25.
    for scale, size in ((0.75, 37_481), (0.5, 24_987), (0.25, 12_493)):
        kept = scaled_table(table, scale)
        assert len(kept) == size
        assert kept == scaled_table(table, scale)
        assert all(kept[word] == table[word] for word in kept)
    assert scaled_table(table, 1.0) is table
    assert set(scaled_table(table, 0.25)) < set(scaled_table(table, 0.5))  # nested


def test_dictionary_scale_names_the_configuration_only_where_it_is_not_the_default():
    full = TrialConfig.from_dict({"method": "ear", "tiny_layers": 6})
    half = TrialConfig.from_dict({"method": "ear", "dictionary_scale": 0.5})
    assert "dictionary_scale" not in full.config_label()
    assert half.config_label().endswith("dictionary_scale=0.5")
    assert full.config_key() != half.config_key()
    finetune = TrialConfig.from_dict({"method": "finetune", "dictionary_scale": 0.5})
    assert "dictionary_scale" not in finetune.hyperparameter_names()
    with pytest.raises(Exception, match="dictionary_scale"):
        TrialConfig.from_dict({"dictionary_scale": 0})
