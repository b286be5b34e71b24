"""The replaced EAR targets of ding2022 Tables 4 / A.4 against hand computations on a tiny
model: NT (Gaussian noise on the copies' word embeddings instead of EPT) and SRPT (the
mean-pooled hidden states of a middle layer pulled together instead of APT)."""

import pytest
import torch
from test_ear_loss import (
    COPIES,
    LAYERS,
    ORIGINALS,
    hand_ce,
    hand_pool,
    separate_forward,
)
from tiny_models import tiny_pair_classifier

import xlt_core.objectives.ear as ear
from xlt_core.config import TrialConfig
from xlt_core.objectives import build_objective
from xlt_core.objectives.ear import AugmentedPairTrainingSet, EARNoiseTarget, EARSentencePull


def augmented_batch():
    return AugmentedPairTrainingSet(ORIGINALS, COPIES, m=1, pad_id=0).batch([0, 1])


@pytest.mark.parametrize("layer", [2, 3])
def test_srpt_loss_parts_match_hand_computation(layer):
    model = tiny_pair_classifier(LAYERS)
    alpha, beta = 0.7, 2.5
    objective = EARSentencePull(alpha=alpha, beta=beta, layer=layer, m=1, synonyms={}, pad_id=0)
    batch = augmented_batch()
    width = batch["input_ids"].shape[1]
    with torch.no_grad():
        loss, parts = objective.loss(model, dict(batch))
        out_x, mask_x = separate_forward(model, ORIGINALS, width)
        out_a, mask_a = separate_forward(model, COPIES, width)

    assert set(parts) == {"ce", "robust_ce", "ept", "srpt"}
    labels = ORIGINALS.labels
    assert parts["ce"].item() == pytest.approx(hand_ce(out_x.logits, labels).item(), abs=1e-5)
    assert parts["robust_ce"].item() == pytest.approx(
        hand_ce(out_a.logits, labels).item(), abs=1e-5
    )
    # hidden_states[layer] is the output of transformer layer `layer` (1-based).
    sent_x = hand_pool(out_x.hidden_states[layer], mask_x)
    sent_a = hand_pool(out_a.hidden_states[layer], mask_a)
    hand_srpt = ((sent_x - sent_a) ** 2).sum() / sent_x.numel()
    assert parts["srpt"].item() == pytest.approx(hand_srpt.item(), rel=1e-5)
    wrong_layer = hand_pool(out_x.hidden_states[layer - 1], mask_x) - hand_pool(
        out_a.hidden_states[layer - 1], mask_a
    )
    assert parts["srpt"].item() != pytest.approx((wrong_layer**2).mean().item(), rel=1e-3)
    pooled_x = hand_pool(out_x.hidden_states[0], mask_x)
    pooled_a = hand_pool(out_a.hidden_states[0], mask_a)
    hand_ept = -((pooled_x - pooled_a) ** 2).sum() / pooled_x.numel()
    assert parts["ept"].item() == pytest.approx(hand_ept.item(), abs=1e-6)
    total = parts["ce"] + parts["robust_ce"] + alpha * parts["ept"] + beta * parts["srpt"]
    assert loss.item() == pytest.approx(total.item(), abs=1e-6)


def forward_with_word_embeddings(model, encoded, width, noise):
    """x or x^a alone, padded to `width`, with `noise` added to its real tokens' word embeddings."""
    batch = {
        k: torch.nn.functional.pad(v, (0, width - v.shape[1]))
        for k, v in augmented_batch().items()
        if k != "labels"
    }
    rows = slice(0, 2) if encoded is ORIGINALS else slice(2, 4)
    ids, mask = batch["input_ids"][rows], batch["attention_mask"][rows]
    embeddings = model.get_input_embeddings()(ids) + noise * mask.unsqueeze(-1)
    return model(
        inputs_embeds=embeddings,
        attention_mask=mask,
        token_type_ids=batch["token_type_ids"][rows],
        output_attentions=True,
    )


def test_nt_loss_parts_match_hand_computation():
    model = tiny_pair_classifier(LAYERS)
    beta, sigma, seed, layer = 2.5, 0.3, 7, 2
    objective = EARNoiseTarget(
        0.0, beta, layer, 1, synonyms={}, pad_id=0, noise_sigma=sigma, seed=seed
    )
    batch = augmented_batch()
    width = batch["input_ids"].shape[1]
    with torch.no_grad():
        loss, parts = objective.loss(model, dict(batch))
        # The same draw by hand: N(0, 1) from a generator seeded with the trial's seed, in
        # the shape of the copies' word embeddings, scaled by sigma.
        shape = (2, width, model.config.hidden_size)
        noise = sigma * torch.randn(shape, generator=torch.Generator().manual_seed(seed))
        out_x = forward_with_word_embeddings(model, ORIGINALS, width, torch.zeros(shape))
        out_a = forward_with_word_embeddings(model, COPIES, width, noise)
        out_clean = forward_with_word_embeddings(model, COPIES, width, torch.zeros(shape))

    assert set(parts) == {"ce", "robust_ce", "apt"}
    labels = ORIGINALS.labels
    assert parts["ce"].item() == pytest.approx(hand_ce(out_x.logits, labels).item(), abs=1e-5)
    assert parts["robust_ce"].item() == pytest.approx(
        hand_ce(out_a.logits, labels).item(), abs=1e-5
    )
    # The noise reaches the copies: their loss differs from the clean copies'.
    assert parts["robust_ce"].item() != pytest.approx(
        hand_ce(out_clean.logits, labels).item(), abs=1e-4
    )
    att_x, att_a = out_x.attentions[layer - 1], out_a.attentions[layer - 1]
    hand_apt = ((att_x - att_a) ** 2).sum() / att_x.numel()
    assert parts["apt"].item() == pytest.approx(hand_apt.item(), rel=1e-5)
    total = parts["ce"] + parts["robust_ce"] + beta * parts["apt"]
    assert loss.item() == pytest.approx(total.item(), abs=1e-6)


def test_nt_noise_is_zero_on_padding_and_scaled_by_sigma(monkeypatch):
    objective = EARNoiseTarget(0.0, 1.0, 1, 1, synonyms={}, pad_id=0, noise_sigma=0.5, seed=0)
    model = tiny_pair_classifier(LAYERS)
    batch = augmented_batch()
    seen = []
    monkeypatch.setattr(
        ear, "forward_embedded", lambda model, batch, embeddings, **outputs: seen.append(embeddings)
    )
    objective.forward(model, dict(batch))
    clean = model.get_input_embeddings()(batch["input_ids"])
    noise = (seen[0] - clean).detach()
    mask = batch["attention_mask"].bool()
    assert torch.all(noise[:2] == 0)  # the originals are not perturbed
    assert torch.all(noise[2:][~mask[2:]] == 0)  # nor the copies' padding
    assert noise[2:][mask[2:]].std().item() == pytest.approx(0.5, rel=0.25)


@pytest.mark.parametrize(
    ("method", "cls"), [("ear_nt", EARNoiseTarget), ("ear_srpt", EARSentencePull)]
)
def test_variants_are_objectives_looked_up_by_name(method, cls):
    config = TrialConfig.from_dict(
        {"method": method, "beta": 0.3, "layer": 2, "noise_sigma": 0.05, "tiny_layers": 2}
    )
    objective = build_objective(config, pad_id=0, synonyms={"good": ["fine"]})
    assert isinstance(objective, cls)
    assert objective.beta == 0.3 and objective.layer == 2
    if method == "ear_nt":
        assert objective.noise_sigma == 0.05 and "alpha" not in config.hyperparameter_names()


def test_noise_sigma_must_be_positive():
    from xlt_core.errors import ConfigError

    with pytest.raises(ConfigError, match="noise_sigma"):
        TrialConfig.from_dict({"method": "ear_nt", "noise_sigma": 0})
