"""ADV, RS-RP and RS-DA on a tiny model: the ball, the ascent, the noise, the copies; ADV and
RS-RP at both perturbation sites (the encoder's output, huang2021's Enc(x), and the word
embeddings), each against a hand computation."""

import random

import pytest
import torch
import torch.nn.functional as F
from tiny_models import NO_DROPOUT, tiny_bert, tiny_pair_classifier
from transformers import BertForTokenClassification

from xlt_core.config import TrialConfig
from xlt_core.data.examples import PairExample
from xlt_core.data.synonyms import augment_pair
from xlt_core.errors import ConfigError
from xlt_core.objectives import build_objective
from xlt_core.objectives.adversarial import Adversarial
from xlt_core.objectives.perturbation import (
    forward_embedded,
    forward_perturbed,
    site_like,
    word_embeddings,
)
from xlt_core.objectives.smoothing import RandomPerturbation, SynonymAugmentation
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs, PairTrainingSet

# Rows of different lengths, so that the batch has padding.
ENCODED = EncodedPairs(
    [[2, 5, 6, 3, 7, 3], [2, 8, 3, 9, 10, 11, 3], [2, 12, 13, 3, 14, 3], [2, 15, 3, 16, 3]],
    [[0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1]],
    [0, 2, 1, 2],
)


SITES = ("encoder_output", "word_embeddings")


def batch():
    return PairTrainingSet(ENCODED, pad_id=0).batch([0, 1, 2, 3])


def encoder_output(model, b):
    """Enc(x): the encoder's last hidden states, computed apart from the model's head."""
    inputs = {key: b[key] for key in ("input_ids", "attention_mask", "token_type_ids")}
    return model.bert(**inputs).last_hidden_state


def pair_head(model, hidden):
    """f: BERT's sequence-classification head by hand (pooler on [CLS], then the linear
    classifier; dropout is off in the tiny models)."""
    return model.classifier(model.bert.pooler(hidden))


def perturbed_logits(model, b, delta, site):
    """The logits with delta added at the site, computed by hand."""
    if site == "word_embeddings":
        return forward_embedded(model, b, word_embeddings(model, b) + delta).logits
    return pair_head(model, encoder_output(model, b) + delta)


def clean_and_perturbed_ce(model, b, delta, site="encoder_output"):
    labels = b["labels"]
    clean = F.cross_entropy(perturbed_logits(model, b, torch.zeros_like(delta), site), labels)
    perturbed = F.cross_entropy(perturbed_logits(model, b, delta, site), labels)
    return clean.item(), perturbed.item()


@pytest.mark.parametrize("site", SITES)
def test_forward_perturbed_adds_delta_where_the_site_says(site):
    model, b = tiny_pair_classifier(), batch()
    delta = 0.3 * torch.randn(site_like(model, b, site).shape) * b["attention_mask"].unsqueeze(-1)
    with torch.no_grad():
        got = forward_perturbed(model, b, delta, site)
        expected = perturbed_logits(model, b, delta, site)
        clean = model(**b).logits
    torch.testing.assert_close(got.logits, expected)
    assert not torch.allclose(got.logits, clean)  # delta changed something
    assert got.loss.item() == pytest.approx(F.cross_entropy(expected, b["labels"]).item())
    # the hook is gone afterwards: a plain pass is the clean one again
    torch.testing.assert_close(model(**b).logits, clean)


def test_encoder_output_site_serves_a_token_classifier_too():
    """NER's head reads every token's encoder output: delta reaches each token's logits."""
    model = tiny_bert(50, BertForTokenClassification, num_labels=5, **NO_DROPOUT)
    b = {key: batch()[key] for key in ("input_ids", "attention_mask", "token_type_ids")}
    b["labels"] = torch.zeros_like(b["input_ids"])
    delta = torch.randn(site_like(model, b, "encoder_output").shape)
    with torch.no_grad():
        got = forward_perturbed(model, b, delta, "encoder_output").logits
        hidden = encoder_output(model, b)
        torch.testing.assert_close(got, model.classifier(hidden + delta))


def test_a_model_without_an_encoder_output_is_refused_naming_the_setting():
    class Plain(torch.nn.Module):
        def get_input_embeddings(self):
            return torch.nn.Embedding(50, 4)

    with pytest.raises(ConfigError) as error:
        site_like(Plain(), batch(), "encoder_output")
    assert error.value.field == "perturbation_site"
    assert "'word_embeddings'" in str(error.value) and "Plain" in str(error.value)


def test_adv_one_step_at_encoder_output_is_epsilon_times_the_gradient_sign():
    """FGSM at Enc(x) by hand: delta = epsilon * sign(dCE/dEnc(x)) at real tokens, and the
    loss is CE(f(Enc(x) + delta))."""
    epsilon = 0.05
    model, b = tiny_pair_classifier(seed=1), batch()
    hidden = encoder_output(model, b).detach().requires_grad_(True)
    clean = F.cross_entropy(pair_head(model, hidden), b["labels"])
    (gradient,) = torch.autograd.grad(clean, hidden)
    expected = epsilon * gradient.sign() * b["attention_mask"].unsqueeze(-1)
    objective = Adversarial(epsilon, 1, 1.0, "encoder_output")
    delta, clean_ce = objective.perturbation(model, b)
    torch.testing.assert_close(delta, expected)
    assert clean_ce.item() == pytest.approx(clean.item(), abs=1e-6)
    # BERT's sequence head reads [CLS] alone: the gradient, and so delta, lives there
    assert delta[:, 0].abs().min().item() == pytest.approx(epsilon)
    assert delta[:, 1:].abs().max().item() == 0.0
    loss, parts = objective.loss(model, dict(b))
    by_hand = F.cross_entropy(pair_head(model, encoder_output(model, b) + expected), b["labels"])
    assert loss.item() == pytest.approx(by_hand.item(), abs=1e-6)
    assert parts["adv_ce"] is loss and loss.item() > clean.item()
    loss.backward()  # the whole model trains, the encoder included
    assert model.bert.encoder.layer[0].attention.self.query.weight.grad.abs().sum() > 0


def test_rs_rp_at_encoder_output_is_cross_entropy_of_the_head_on_noisy_enc_x():
    model, b = tiny_pair_classifier(), batch()
    objective = RandomPerturbation(0.2, seed=5, site="encoder_output")
    loss, _ = objective.loss(model, dict(b))
    like = torch.zeros(*b["input_ids"].shape, model.config.hidden_size)
    noise = RandomPerturbation(0.2, seed=5).noise(like, b)
    assert noise.abs().max().item() <= 0.2 and noise.abs().max().item() > 0.15
    by_hand = F.cross_entropy(pair_head(model, encoder_output(model, b) + noise), b["labels"])
    assert loss.item() == pytest.approx(by_hand.item(), abs=1e-6)


def test_inputs_embeds_path_is_the_word_embedding_before_position_and_type():
    """Zero perturbation through `inputs_embeds` reproduces the token-id forward pass, so
    delta is added where the word vectors are, before position/type embeddings."""
    model, b = tiny_pair_classifier(), batch()
    with torch.no_grad():
        by_ids = model(
            input_ids=b["input_ids"],
            token_type_ids=b["token_type_ids"],
            attention_mask=b["attention_mask"],
        ).logits
        by_embeddings = forward_embedded(model, b, word_embeddings(model, b)).logits
    torch.testing.assert_close(by_embeddings, by_ids)
    assert torch.equal(
        word_embeddings(model, b), model.bert.embeddings.word_embeddings.weight[b["input_ids"]]
    )


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("epsilon, steps, scale", [(0.01, 1, 1.0), (0.05, 3, 0.5), (0.001, 5, 0.4)])
def test_adv_perturbation_stays_in_the_ball_and_does_not_lower_the_loss(
    epsilon, steps, scale, site
):
    for seed in range(3):
        model, b = tiny_pair_classifier(seed=seed), batch()
        objective = Adversarial(epsilon, steps, scale, site)
        delta, clean_ce = objective.perturbation(model, b)
        assert delta.abs().max().item() <= epsilon * (1 + 1e-6)
        padding = b["attention_mask"] == 0
        assert padding.any() and delta[padding].abs().max().item() == 0.0
        assert delta[~padding].abs().max().item() == pytest.approx(
            epsilon, rel=1e-6
        )  # it reaches the ball's edge
        with torch.no_grad():
            clean, perturbed = clean_and_perturbed_ce(model, b, delta, site)
        assert clean_ce.item() == pytest.approx(clean, abs=1e-6)
        assert perturbed > clean


def test_adv_loss_is_cross_entropy_on_the_perturbed_input_and_trains_the_embeddings():
    model, b = tiny_pair_classifier(), batch()
    objective = Adversarial(0.01, 2, 0.5, "word_embeddings")
    delta, _ = objective.perturbation(model, b)
    loss, parts = objective.loss(model, dict(b))
    _, perturbed = clean_and_perturbed_ce(model, b, delta, "word_embeddings")
    assert loss.item() == pytest.approx(perturbed, abs=1e-6)
    assert set(parts) == {"adv_ce", "ce"} and parts["adv_ce"] is loss
    loss.backward()
    assert model.bert.embeddings.word_embeddings.weight.grad.abs().sum() > 0


def test_rs_rp_noise_is_uniform_in_the_ball_and_differs_between_steps_and_seeds():
    model, b = tiny_pair_classifier(), batch()
    embeddings = word_embeddings(model, b).detach()
    padding = b["attention_mask"] == 0
    first_seed = RandomPerturbation(0.1, seed=1)
    step1, step2 = first_seed.noise(embeddings, b), first_seed.noise(embeddings, b)
    for noise in (step1, step2):
        assert noise.abs().max().item() <= 0.1
        assert noise[padding].abs().max().item() == 0.0
    assert not torch.equal(step1, step2)
    other_seed = RandomPerturbation(0.1, seed=2).noise(embeddings, b)
    assert not torch.equal(step1, other_seed)
    assert torch.equal(RandomPerturbation(0.1, seed=1).noise(embeddings, b), step1)  # reproducible
    real = step1[~padding]
    # Uniform on [-0.1, 0.1]: mean 0, std 0.1 / sqrt(3), both tails reached.
    assert real.mean().item() == pytest.approx(0.0, abs=0.01)
    assert real.std().item() == pytest.approx(0.1 / 3**0.5, rel=0.1)
    assert real.min().item() < -0.09 and real.max().item() > 0.09


def test_rs_rp_loss_is_cross_entropy_on_the_noisy_input():
    model, b = tiny_pair_classifier(), batch()
    objective = RandomPerturbation(0.05, seed=3, site="word_embeddings")
    loss, parts = objective.loss(model, dict(b))
    noise = RandomPerturbation(0.05, seed=3).noise(word_embeddings(model, b), b)
    _, noisy = clean_and_perturbed_ce(model, b, noise, "word_embeddings")
    assert loss.item() == pytest.approx(noisy, abs=1e-6)
    assert set(parts) == {"ce"}


TABLE = {"big": ["large", "huge"], "dog": ["hound"], "runs": ["sprints"]}
EXAMPLES = [
    PairExample("the big dog runs", "a dog", 0),
    PairExample("cats sleep", "the big cat", 1),
]


@pytest.mark.parametrize("keep_originals", [False, True])
def test_rs_da_yields_m_copies_per_example_for_both_variants(keep_originals):
    m = 3
    objective = SynonymAugmentation(m, keep_originals, TABLE)
    produced = objective.training_examples(EXAMPLES, seed=7)
    rng = random.Random(7)
    expected_copies = [
        copy for example in EXAMPLES for copy in augment_pair(example, TABLE, m, rng)
    ]
    expected = (EXAMPLES if keep_originals else []) + expected_copies
    assert produced == expected
    assert len(produced) == len(EXAMPLES) * (m + 1 if keep_originals else m)
    copies = produced[len(EXAMPLES) :] if keep_originals else produced
    for index, copy in enumerate(copies):
        original = EXAMPLES[index // m]
        assert copy.label == original.label
        for sentence, original_sentence in (
            (copy.sentence1, original.sentence1),
            (copy.sentence2, original.sentence2),
        ):
            for word, original_word in zip(
                sentence.split(" "), original_sentence.split(" "), strict=True
            ):
                assert word in [original_word, *TABLE.get(original_word, [])]
    # Three copies of "big dog runs" with 3 x 2 x 2 choices: not all alike.
    assert len({copy.sentence1 for copy in copies[:m]}) > 1 or m == 1


def test_build_objective_maps_methods_and_settings():
    adv = build_objective(
        TrialConfig.from_dict(
            {"method": "adv", "epsilon": 0.1, "adv_steps": 3, "adv_step_scale": 0.5}
        ),
        0,
        None,
    )
    assert isinstance(adv, Adversarial)
    assert (adv.epsilon, adv.steps, adv.step_scale) == (0.1, 3, 0.5)
    assert adv.site == "encoder_output"  # the paper's Enc(x) unless set otherwise
    rp = build_objective(
        TrialConfig.from_dict(
            {"method": "rs_rp", "epsilon": 1.0, "seed": 4, "perturbation_site": "word_embeddings"}
        ),
        0,
        None,
    )
    assert isinstance(rp, RandomPerturbation)
    assert (rp.epsilon, rp.seed, rp.site) == (1.0, 4, "word_embeddings")
    da = build_objective(
        TrialConfig.from_dict({"method": "rs_da", "m": 3, "rs_da_variant": "keep_originals"}),
        0,
        TABLE,
    )
    assert isinstance(da, SynonymAugmentation)
    assert (da.m, da.keep_originals, da.synonyms) == (3, True, TABLE)
    assert (
        build_objective(TrialConfig.from_dict({"method": "rs_da"}), 0, TABLE).keep_originals
        is False
    )


def test_perturbation_site_is_checked_and_named_only_where_it_applies():
    with pytest.raises(ConfigError) as error:
        TrialConfig.from_dict({"method": "adv", "perturbation_site": "attention"})
    assert "one of encoder_output, word_embeddings" in str(error.value)
    at_words = {"method": "rs_rp", "epsilon": 0.1, "perturbation_site": "word_embeddings"}
    assert (
        TrialConfig.from_dict(at_words).config_label()
        == "rs_rp epsilon=0.1 perturbation_site=word_embeddings"
    )
    assert TrialConfig.from_dict({"method": "rs_rp", "epsilon": 0.1}).config_label() == (
        "rs_rp epsilon=0.1"
    )
    # other methods never name it, whatever its value
    finetune = TrialConfig.from_dict({"perturbation_site": "word_embeddings"})
    assert "perturbation_site" not in finetune.hyperparameter_names()
