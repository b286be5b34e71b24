"""The adjustment losses (Eq. 1) against a hand computation, the adjustment stage on a
tiny model (aligned pairs move together while the regulariser bounds the source drift), and
an adjusted trial one language pair at a time: one encoder per target language, adjusted on
that language's pairs only, each language's test score from its own model, resumable."""

import copy

import pytest
import torch
from tiny_models import tiny_bert
from tiny_trials import TINY_TRIAL
from transformers import AutoModelForSequenceClassification

from xlt_core.adjustment import adjust, adjustment_optimiser
from xlt_core.config import TrialConfig
from xlt_core.data.parallel import load_parallel
from xlt_core.data.synthetic import _lexicon
from xlt_core.data.word_alignment import AlignedPairs, aligned_pairs
from xlt_core.models import tiny_tokenizer
from xlt_core.objectives.alignment import (
    ContinualAlignment,
    alignment_losses,
    make_batch,
)
from xlt_core.reporting import ListReporter
from xlt_core.trial import run_trial

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


def test_the_adjustment_optimiser_is_the_released_codes_adam_with_a_constant_rate():
    """efimov2023 L125 ("the Adam optimizer"), the released code as issue 42 quotes it:
    Adam(betas=(0.9, 0.98), eps=1e-9), no weight decay, constant after the warm-up."""
    weight = torch.nn.Parameter(torch.zeros(2))
    optimizer, scheduler = adjustment_optimiser([weight], 5e-5, total_steps=20)
    assert type(optimizer) is torch.optim.Adam  # not AdamW (a subclass of Adam)
    group = optimizer.param_groups[0]
    assert (group["betas"], group["eps"], group["weight_decay"]) == ((0.9, 0.98), 1e-9, 0)
    rates = []
    for _ in range(20):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    # 10% warm-up (2 of 20 steps) from 0, then 5e-5 to the last step: no decay.
    assert rates[:2] == pytest.approx([0.0, 2.5e-5])
    assert rates[2:] == pytest.approx([5e-5] * 18)


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


# --- One pair of languages at a time: an adjusted trial with two targets -----------------

STAGED_TRIAL = {
    **TINY_TRIAL,
    "learning_rate": 1e-3,
    "max_train_examples": 32,
    "max_eval_examples": 16,
    "evals_per_epoch": 2,
    "data_source": "synthetic",
    "parallel_data": "synthetic",
    "parallel_max_sentences": 60,
    "parallel_pool_sentences": 120,
    "adjust_learning_rate": 1e-3,
    "target_langs": "es,de",
    "adaptation": "adjusted",
}


@pytest.fixture
def spied_trial(monkeypatch):
    """Runs an adjusted trial recording, per adjustment call, the stage's targets and the
    linked target words it trained on, and per evaluation the stage's targets, metrics and
    a digest of the evaluated encoder."""
    from xlt_core import adjustment, trial
    from xlt_core.tasks import TASKS

    adjusted, evaluated, stage = [], [], {}
    real_adapt, real_adjust = trial.adapt, adjustment.adjust

    def adapt(config, model, tokenizer, objective, device):
        stage.update(langs=config.target_langs, tokenizer=tokenizer)
        return real_adapt(config, model, tokenizer, objective, device)

    def adjust(encoder, frozen, pairs, held_out, pad_id, **settings):
        words = {
            stage["tokenizer"].decode(pairs.target_ids[k][slice(*pairs.target_spans[k][j])])
            for k, links in enumerate(pairs.links)
            for _, j in links
        }
        adjusted.append((stage["langs"], words))
        return real_adjust(encoder, frozen, pairs, held_out, pad_id, **settings)

    task = type(TASKS["xnli"])
    real_evaluator = task.evaluator

    def evaluator(self, config, model, tokenizer, device):
        built = real_evaluator(self, config, model, tokenizer, device)
        real_evaluate = built.evaluate

        def evaluate():
            metrics, scores = real_evaluate()
            digest = sum(p.double().sum().item() for p in model.base_model.parameters())
            evaluated.append((config.target_langs, metrics, scores, digest))
            return metrics, scores

        built.evaluate = evaluate
        return built

    monkeypatch.setattr(trial, "adapt", adapt)
    monkeypatch.setattr(adjustment, "adjust", adjust)
    monkeypatch.setattr(task, "evaluator", evaluator)

    def run(reporter, **settings):
        config = TrialConfig.from_dict({**STAGED_TRIAL, **settings})
        return run_trial(config, reporter)

    return run, adjusted, evaluated


def test_each_target_language_gets_an_encoder_adjusted_on_its_own_pairs(spied_trial, tmp_path):
    run, adjusted, evaluated = spied_trial
    saved = tmp_path / "model"
    result = run(ListReporter(), cache_dir=str(tmp_path), save_model_dir=str(saved))
    assert [langs for langs, _ in adjusted] == [("es",), ("de",)]
    lexicon = {lang: set(_lexicon(lang).values()) for lang in ("es", "de")}
    for (lang,), words in adjusted:
        other = "de" if lang == "es" else "es"
        assert len(words) > 20 and not words & lexicon[other]
        assert len(words & lexicon[lang]) >= 0.9 * len(words)
    # each language's test score comes from its own model; English is the two models' mean
    (es_langs, es, es_scores, es_model), (de_langs, de, de_scores, de_model) = evaluated
    assert (es_langs, de_langs) == (("es",), ("de",)) and es_model != de_model
    assert "test/de/accuracy" not in es and "test/es/accuracy" not in de
    assert result.metrics["test/es/accuracy"] == es["test/es/accuracy"]
    assert result.metrics["test/de/accuracy"] == de["test/de/accuracy"]
    # the saved model is one folder per language, each that language's model
    for lang, digest in (("es", es_model), ("de", de_model)):
        model = AutoModelForSequenceClassification.from_pretrained(str(saved / lang))
        assert sum(p.double().sum().item() for p in model.base_model.parameters()) == (
            pytest.approx(digest)
        )
    for key in ("test/en/accuracy", "dev/en/accuracy"):
        assert result.metrics[key] == pytest.approx((es[key] + de[key]) / 2)
    english = result.example_scores["test-en"]
    assert english["scores"] == pytest.approx(
        [
            (a + b) / 2
            for a, b in zip(es_scores["test-en"]["scores"], de_scores["test-en"]["scores"])
        ]
    )
    # the adjustment's measurements per language, and their mean under the shared name
    for lang in ("es", "de"):
        assert (
            result.metrics[f"adjust_{lang}/aligned_distance_after"]
            < (result.metrics[f"adjust_{lang}/aligned_distance_before"])
        )
    assert result.metrics["adjust/aligned_distance_after"] == pytest.approx(
        (
            result.metrics["adjust_es/aligned_distance_after"]
            + result.metrics["adjust_de/aligned_distance_after"]
        )
        / 2
    )
    assert len(list((tmp_path / "adjusted").glob("*/encoder.pt"))) == 2


class Interrupted(Exception):
    pass


class InterruptedOnce(ListReporter):
    """Stops the trial at the first checkpoint of the second language stage, once."""

    def __init__(self):
        super().__init__()
        self.armed = True

    def report(self, step, metrics, checkpoint_dir=None):
        super().report(step, metrics, checkpoint_dir)
        if self.armed and metrics["train/language_stage"] == 1:
            self.armed = False
            raise Interrupted


def test_an_interrupted_trial_resumes_in_its_language_stage(spied_trial, tmp_path):
    run, adjusted, evaluated = spied_trial
    with InterruptedOnce() as reporter:
        with pytest.raises(Interrupted):
            run(reporter, cache_dir=str(tmp_path))
        first_attempt = len(reporter.reports)
        result = run(reporter, cache_dir=str(tmp_path))
    # es finished before the interruption: evaluated once, its score kept from the checkpoint
    assert [langs for langs, *_ in evaluated] == [("es",), ("de",)]
    assert result.metrics["test/es/accuracy"] == evaluated[0][1]["test/es/accuracy"]
    resumed = reporter.reports[first_attempt:]
    assert resumed and all(metrics["train/language_stage"] == 1 for _, metrics in resumed)
    steps = [step for step, _ in reporter.reports]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)  # one curve across stages


def test_merging_stages_averages_shared_sets_and_keeps_each_languages_own():
    from xlt_core.language_stages import merge_stages

    def record(lang, english, own, distance):
        scores = {"split": "test", "lang": "en", "scores": english, "predictions": [lang]}
        return {
            "lang": lang,
            "steps": 4,
            "metrics": {
                "test/en/accuracy": sum(english) / 2,
                f"test/{lang}/accuracy": own,
                "adjust/aligned_distance_after": distance,
            },
            "example_scores": {"test-en": scores, f"test-{lang}": {"scores": [own]}},
            "best_step": 2,
            "train_seconds": 1.5,
            "figures": {},
        }

    merged = merge_stages([record("es", [1.0, 0.0], 0.7, 2.0), record("hi", [1.0, 1.0], 0.4, 4.0)])
    assert merged.metrics["test/en/accuracy"] == 0.75
    assert (merged.metrics["test/es/accuracy"], merged.metrics["test/hi/accuracy"]) == (0.7, 0.4)
    assert merged.metrics["adjust/aligned_distance_after"] == 3.0
    assert merged.metrics["adjust_es/aligned_distance_after"] == 2.0
    assert merged.metrics["adjust_hi/aligned_distance_after"] == 4.0
    assert merged.example_scores["test-en"]["scores"] == [1.0, 0.5]
    assert merged.example_scores["test-en"]["predictions_by_model"] == {"es": ["es"], "hi": ["hi"]}
    assert merged.example_scores["test-hi"] == {"scores": [0.4]}
    assert merged.train_seconds == 3.0
