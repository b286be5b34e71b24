"""Each part of the EAR loss against a hand computation on a tiny model."""

import math

import pytest
import torch
from tiny_models import tiny_pair_classifier

from xlt_core.batching import pad_batch, rows
from xlt_core.objectives.ear import (
    EAR,
    AugmentedPairTrainingSet,
    attention_pull,
    embedding_push,
    masked_mean,
)
from xlt_core.objectives.finetune import FineTune
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs, PairTrainingSet

LAYERS = 4


# Originals and synonym copies of different lengths, so padding matters.
ORIGINALS = EncodedPairs(
    [[2, 5, 6, 3, 7, 3], [2, 8, 3, 9, 10, 11, 3]],
    [[0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]],
    [0, 2],
)
COPIES = EncodedPairs(
    [[2, 12, 6, 3, 7, 3], [2, 8, 13, 14, 3, 9, 3]],
    [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 1, 1]],
    [0, 2],
)


def separate_forward(model, encoded, width):
    """x alone (not batched with x^a), padded to the same width by hand."""
    batch = pad_batch(rows(encoded, range(len(encoded))), pad_id=0)
    pad = width - batch["input_ids"].shape[1]
    batch = {k: torch.nn.functional.pad(v, (0, pad)) for k, v in batch.items()}
    return model(**batch, output_hidden_states=True, output_attentions=True), batch[
        "attention_mask"
    ]


def hand_ce(logits, labels):
    return sum(-torch.log_softmax(logits[i], dim=-1)[labels[i]] for i in range(len(labels))) / len(
        labels
    )


def hand_pool(hidden, mask):
    pooled = []
    for i in range(hidden.shape[0]):
        real = [hidden[i, t] for t in range(hidden.shape[1]) if mask[i, t] == 1]
        pooled.append(sum(real) / len(real))
    return torch.stack(pooled)


@pytest.mark.parametrize("layer", [1, 3, 4])
def test_ear_loss_parts_match_hand_computation(layer):
    model = tiny_pair_classifier(LAYERS)
    alpha, beta = 0.7, 2.5
    objective = EAR(alpha=alpha, beta=beta, layer=layer, m=1, synonyms={}, pad_id=0)
    batch = AugmentedPairTrainingSet(ORIGINALS, COPIES, m=1, pad_id=0).batch([0, 1])
    width = batch["input_ids"].shape[1]
    with torch.no_grad():
        loss, parts = objective.loss(model, dict(batch))
        out_x, mask_x = separate_forward(model, ORIGINALS, width)
        out_a, mask_a = separate_forward(model, COPIES, width)

    labels = ORIGINALS.labels
    assert parts["ce"].item() == pytest.approx(hand_ce(out_x.logits, labels).item(), abs=1e-5)
    assert parts["robust_ce"].item() == pytest.approx(
        hand_ce(out_a.logits, labels).item(), abs=1e-5
    )

    pooled_x = hand_pool(out_x.hidden_states[0], mask_x)
    pooled_a = hand_pool(out_a.hidden_states[0], mask_a)
    hand_ept = -((pooled_x - pooled_a) ** 2).sum() / pooled_x.numel()
    assert parts["ept"].item() == pytest.approx(hand_ept.item(), abs=1e-6)
    assert parts["ept"].item() < 0  # the push term rewards distance

    # "layer 3" of the paper is transformers' attentions[2].
    att_x, att_a = out_x.attentions[layer - 1], out_a.attentions[layer - 1]
    hand_apt = ((att_x - att_a) ** 2).sum() / att_x.numel()
    assert parts["apt"].item() == pytest.approx(hand_apt.item(), rel=1e-5)
    other = out_x.attentions[layer % LAYERS], out_a.attentions[layer % LAYERS]
    assert not math.isclose(
        parts["apt"].item(), (((other[0] - other[1]) ** 2).mean()).item(), rel_tol=1e-3
    )

    total = parts["ce"] + parts["robust_ce"] + alpha * parts["ept"] + beta * parts["apt"]
    assert loss.item() == pytest.approx(total.item(), abs=1e-6)


def test_masked_mean_ignores_padding():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    assert masked_mean(hidden, torch.tensor([[1, 1, 0]])).tolist() == [[2.0, 3.0]]


def test_embedding_push_and_attention_pull_on_known_values():
    a = torch.zeros(1, 2, 2)
    b = torch.ones(1, 2, 2) * 2.0
    mask = torch.ones(1, 2, dtype=torch.long)
    assert embedding_push(a, b, mask, mask).item() == pytest.approx(-4.0)
    assert attention_pull(
        torch.zeros(1, 1, 2, 2), torch.full((1, 1, 2, 2), 0.5)
    ).item() == pytest.approx(0.25)


def test_augmented_batch_pairs_each_copy_with_its_original():
    originals = EncodedPairs([[2, 5, 3], [2, 6, 3]], [[0, 0, 0], [0, 0, 0]], [1, 2])
    copies = EncodedPairs(
        [[2, 7, 3], [2, 8, 3], [2, 9, 3], [2, 10, 3]], [[0] * 3] * 4, [1, 1, 2, 2]
    )
    batch = AugmentedPairTrainingSet(originals, copies, m=2, pad_id=0).batch([3, 0])
    assert batch["input_ids"][:, 1].tolist() == [
        6,
        5,
        10,
        7,
    ]  # originals of copies 3 and 0, then the copies
    assert batch["labels"].tolist() == [2, 1]


def test_finetune_loss_is_cross_entropy():
    model = tiny_pair_classifier(LAYERS)
    batch = PairTrainingSet(ORIGINALS, pad_id=0).batch([0, 1])
    with torch.no_grad():
        loss, parts = FineTune().loss(model, dict(batch))
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
    assert loss.item() == pytest.approx(hand_ce(logits, ORIGINALS.labels).item(), abs=1e-6)
    assert set(parts) == {"ce"}
