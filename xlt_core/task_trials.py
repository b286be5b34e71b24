"""Trials of the tasks beyond sentence-pair classification: NER (and, through
`TASK_RUNNERS`, every task `trial.run_trial` dispatches to). Each runner trains on English,
selects on English dev, and evaluates every target language, with the adjustment stage
and the continual objective applied as for XNLI (`adjustment.prepare_method`)."""

from __future__ import annotations

import numpy as np

from xlt_core.adjustment import tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.ner import NER_LABELS, available_ner_languages, load_ner
from xlt_core.data.squad import (
    EVAL_SETS,
    available_eval_languages,
    cross_lingual,
    load_eval_set,
    load_training,
)
from xlt_core.data.tatoeba import available_tatoeba_languages, load_tatoeba
from xlt_core.errors import ConfigError, DataError
from xlt_core.models import load_model
from xlt_core.objectives.finetune import HeadLoss
from xlt_core.probing import prepare_probed_method, trained_state
from xlt_core.reporting import Reporter
from xlt_core.tasks.extractive_qa import QATrainingSet, encode_qa, predict_answers, score_answers
from xlt_core.tasks.retrieval import choose_layer, layer_sentence_vectors, mrr_per_layer
from xlt_core.tasks.token_classification import (
    TokenTrainingSet,
    encode_tokens,
    predict_tags,
    score_tags,
)
from xlt_core.train import train
from xlt_core.trial_result import TrialResult, save_trained, trial_device


def _limit(items, limit):
    return list(items[:limit]) if limit else list(items)


def check_ner_data(config: TrialConfig) -> None:
    wanted = {
        "train": [config.source_lang],
        "dev": [config.source_lang],
        "test": list(config.target_langs),
    }
    for split, langs in wanted.items():
        try:
            available = available_ner_languages(config.data_source, split, config.data_dir)
        except DataError as error:
            raise ConfigError("data_source", config.data_source, str(error)) from None
        missing = [lang for lang in langs if available is not None and lang not in available]
        if missing:
            raise ConfigError(
                "target_langs" if split == "test" else "source_lang",
                ",".join(missing),
                f"languages with NER {split} data under {config.data_dir}/panx: {', '.join(available) or 'none'}",
            )


def run_ner_trial(config: TrialConfig, reporter: Reporter):

    device = trial_device()
    load = lambda split, lang: load_ner(config.data_source, split, lang, config.data_dir)  # noqa: E731
    train_sentences = _limit(load("train", config.source_lang), config.max_train_examples)
    texts = [" ".join(sentence.words) for sentence in train_sentences] + tokenizer_texts(config)
    model, tokenizer = load_model(config, len(NER_LABELS), texts, head="token_classification")
    pad_id = tokenizer.pad_token_id

    def encode(sentences):
        return encode_tokens(tokenizer, sentences, config.max_seq_length)

    eval_sets = {
        ("dev", config.source_lang): encode(
            _limit(load("dev", config.source_lang), config.max_eval_examples)
        )
    }
    eval_sets |= {
        ("test", lang): encode(_limit(load("test", lang), config.max_eval_examples))
        for lang in config.target_langs
    }

    def evaluate(encoded):
        return score_tags(
            predict_tags(model, encoded, 2 * config.batch_size, pad_id, device), encoded.tags
        )

    objective, method_metrics, probe = prepare_probed_method(
        config, model, tokenizer, HeadLoss(), device
    )
    dev = eval_sets[("dev", config.source_lang)]
    outcome = train(
        model,
        objective,
        TokenTrainingSet(encode(train_sentences), pad_id),
        config,
        lambda: evaluate(dev)["value"],
        reporter,
        device,
    )
    probe.record(trained_state(config.method), model.base_model)
    metrics, scores = method_metrics | probe.metrics, {}
    for (split, lang), encoded in eval_sets.items():
        scored = evaluate(encoded)
        metrics[f"{split}/{lang}/f1"] = scored.pop("value")
        scores[f"{split}-{lang}"] = {"split": split, "lang": lang, **scored}
    save_trained(config, model, tokenizer)
    return TrialResult(metrics, scores, outcome.best_step, outcome.seconds, probe.figures)


# XSR: the first XSR_DEV_PAIRS pairs of each language choose the layer; the rest are the test.
XSR_DEV_PAIRS = 100


def check_xsr_data(config: TrialConfig) -> None:
    try:
        available = available_tatoeba_languages(config.data_source, config.data_dir)
    except DataError as error:
        raise ConfigError("data_source", config.data_source, str(error)) from None
    missing = [
        lang for lang in config.target_langs if available is not None and lang not in available
    ]
    if missing:
        raise ConfigError(
            "target_langs",
            ",".join(missing),
            f"languages with Tatoeba pairs under {config.data_dir}/tatoeba: {', '.join(available) or 'none'}",
        )


def run_xsr_trial(config: TrialConfig, reporter: Reporter):
    """Sentence retrieval with the encoder itself (no fine-tuning): the original encoder
    (method finetune) or the adjusted one. Target-language queries against all English
    sentences of the same part; per layer, the MRR of the gold translation.

    Choosing the reported layer on the test queries would be selection on test, so the
    first XSR_DEV_PAIRS pairs of each language (a dev part) choose it, and the remaining
    pairs (at most `max_eval_examples`) are the test: `test/<lang>/mrr` at the chosen
    layer (per-query reciprocal ranks as the example scores), `test/<lang>/mrr_layer_<k>`
    for every layer k (0 = embeddings), `xsr_layer/<lang>` the chosen layer, and
    `dev/<lang>/mrr` and `dev/pooled/mrr` (all dev queries; what the report selects on)."""

    device = trial_device()
    model, tokenizer = load_model(config, 2, tokenizer_texts(config), head="encoder")
    # No fine-tuning: the probe sees the original and (method adjusted) the adjusted encoder.
    _, method_metrics, probe = prepare_probed_method(config, model, tokenizer, None, device)
    encoder = model.base_model.to(device)

    def per_layer(pairs):
        vectors = lambda sentences: layer_sentence_vectors(
            encoder, tokenizer, sentences, config.max_seq_length, 2 * config.batch_size, device
        )  # noqa: E731
        return mrr_per_layer(vectors(pairs.queries), vectors(pairs.english))

    metrics, scores, pooled = method_metrics | probe.metrics, {}, []
    for lang in config.target_langs:
        pairs = load_tatoeba(config.data_source, lang, config.data_dir)
        if len(pairs) <= XSR_DEV_PAIRS:
            raise DataError(
                f"Tatoeba {lang}: {len(pairs)} pairs, need more than the {XSR_DEV_PAIRS} dev pairs that choose the layer"
            )
        dev_ranks = per_layer(pairs.select(0, XSR_DEV_PAIRS))
        layer = choose_layer(dev_ranks.mean(axis=1))
        test_end = XSR_DEV_PAIRS + config.max_eval_examples if config.max_eval_examples else None
        test_ranks = per_layer(pairs.select(XSR_DEV_PAIRS, test_end))
        metrics[f"xsr_layer/{lang}"] = layer
        metrics |= {
            f"test/{lang}/mrr_layer_{k}": float(row.mean()) for k, row in enumerate(test_ranks)
        }
        for split, ranks in (("dev", dev_ranks[layer]), ("test", test_ranks[layer])):
            metrics[f"{split}/{lang}/mrr"] = float(ranks.mean())
            scores[f"{split}-{lang}"] = {
                "split": split,
                "lang": lang,
                "metric": "mrr",
                "layer": layer,
                "scores": ranks.tolist(),
            }
        pooled.append(dev_ranks[layer])
    metrics["dev/pooled/mrr"] = float(np.concatenate(pooled).mean())
    save_trained(config, model, tokenizer)
    return TrialResult(metrics, scores, 0, 0.0, probe.figures)


# Parallel evaluation sets, on which questions of one language are also asked of the
# contexts of the other (XQuAD: the same questions and paragraphs in every language).
PARALLEL_QA_SETS = ("xquad",)


def qa_eval_plan(config: TrialConfig) -> dict[str, list[str]]:
    """Per evaluation set, the languages to evaluate (English and the target languages it has)."""
    plan = {}
    for name in EVAL_SETS:
        try:
            available = set(available_eval_languages(config.data_source, name, config.data_dir))
        except (DataError, ValueError):
            available = set()
        langs = [lang for lang in (config.source_lang, *config.target_langs) if lang in available]
        if langs:
            plan[name] = langs
    return plan


def check_qa_data(config: TrialConfig) -> None:
    if config.data_source == "local":
        for split in ("train", "dev"):
            try:
                load_training("local", split, config.data_dir)
            except DataError as error:
                raise ConfigError("data_dir", config.data_dir, str(error)) from None
    elif config.data_source != "hub":
        raise ConfigError(
            "data_source",
            config.data_source,
            "local (XTREME layout with tydiqa/, xquad/, mlqa/) or hub for task=qa",
        )
    covered = {lang for langs in qa_eval_plan(config).values() for lang in langs}
    missing = [lang for lang in config.target_langs if lang not in covered]
    if missing:
        raise ConfigError(
            "target_langs",
            ",".join(missing),
            f"languages of at least one of {', '.join(EVAL_SETS)} (found: {', '.join(sorted(covered)) or 'none'})",
        )


def run_qa_trial(config: TrialConfig, reporter: Reporter):
    """Extractive QA: fine-tune on English (SQuAD; offline the English TyDiQA-GoldP train
    file), select on English dev F1 (SQuAD validation / TyDiQA-GoldP en dev), evaluate on
    every set of `qa_eval_plan`. Metrics `<set>/<lang>/f1` and `<set>/<lang>/exact_match`
    (set = xquad, mlqa, tydiqa; in %/100), and on XQuAD the cross-lingual directions
    `xquad/<q>-<c>/...`: questions in language q asked of the contexts in language c
    (question language first), for q-c = <target>-en and en-<target>. Windows of
    max_seq_length tokens overlap by max_seq_length // 3 (XTREME: 384 and 128)."""

    device = trial_device()
    train_examples = _limit(
        load_training(config.data_source, "train", config.data_dir), config.max_train_examples
    )
    texts = [text for e in train_examples for text in (e.question, e.context)] + tokenizer_texts(
        config
    )
    model, tokenizer = load_model(config, 2, texts, head="question_answering")
    pad_id, stride = tokenizer.pad_token_id, config.max_seq_length // 3

    eval_sets = {
        ("dev", config.source_lang): _limit(
            load_training(config.data_source, "dev", config.data_dir), config.max_eval_examples
        )
    }
    for name, langs in qa_eval_plan(config).items():
        loaded = {
            lang: load_eval_set(config.data_source, name, lang, config.data_dir) for lang in langs
        }
        eval_sets |= {
            (name, lang): _limit(examples, config.max_eval_examples)
            for lang, examples in loaded.items()
        }
        if name in PARALLEL_QA_SETS and config.source_lang in loaded:
            english = loaded[config.source_lang]
            for lang in (lang for lang in langs if lang != config.source_lang):
                eval_sets[(name, f"{lang}-{config.source_lang}")] = _limit(
                    cross_lingual(loaded[lang], english), config.max_eval_examples
                )
                eval_sets[(name, f"{config.source_lang}-{lang}")] = _limit(
                    cross_lingual(english, loaded[lang]), config.max_eval_examples
                )
    features = {
        key: encode_qa(tokenizer, examples, config.max_seq_length, stride)
        for key, examples in eval_sets.items()
    }

    def evaluate(key):
        return score_answers(
            predict_answers(
                model, features[key], eval_sets[key], 2 * config.batch_size, pad_id, device
            ),
            eval_sets[key],
        )

    objective, method_metrics, probe = prepare_probed_method(
        config, model, tokenizer, HeadLoss(), device
    )
    training_set = QATrainingSet(
        encode_qa(tokenizer, train_examples, config.max_seq_length, stride), pad_id
    )
    outcome = train(
        model,
        objective,
        training_set,
        config,
        lambda: evaluate(("dev", config.source_lang))["value"],
        reporter,
        device,
    )
    probe.record(trained_state(config.method), model.base_model)
    metrics, scores = method_metrics | probe.metrics, {}
    for split, lang in eval_sets:
        scored = evaluate((split, lang))
        metrics[f"{split}/{lang}/f1"] = scored.pop("value")
        metrics[f"{split}/{lang}/exact_match"] = scored.pop("exact_match")
        scores[f"{split}-{lang}"] = {"split": split, "lang": lang, **scored}
    save_trained(config, model, tokenizer)
    return TrialResult(metrics, scores, outcome.best_step, outcome.seconds, probe.figures)


TASK_RUNNERS = {"ner": run_ner_trial, "xsr": run_xsr_trial, "qa": run_qa_trial}
TASK_CHECKS = {"ner": check_ner_data, "xsr": check_xsr_data, "qa": check_qa_data}
