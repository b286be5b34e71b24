"""Trials of the tasks beyond sentence-pair classification: NER (and, through
`TASK_RUNNERS`, every task `trial.run_trial` dispatches to). Each runner trains on English,
selects on English dev, and evaluates every target language, with the adjustment stage
and the continual objective applied as for XNLI (`adjustment.prepare_method`)."""

from __future__ import annotations

from pathlib import Path

import torch

from xlt_core.adjustment import prepare_method, tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.ner import NER_LABELS, available_ner_languages, load_ner
from xlt_core.errors import ConfigError, DataError
from xlt_core.models import load_model
from xlt_core.objectives.finetune import HeadLoss
from xlt_core.reporting import Reporter
from xlt_core.tasks.token_classification import TokenTrainingSet, encode_tokens, predict_tags, score_tags
from xlt_core.train import train


def _limit(items, limit):
    return list(items[:limit]) if limit else list(items)


def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def check_ner_data(config: TrialConfig) -> None:
    wanted = {"train": [config.source_lang], "dev": [config.source_lang], "test": list(config.target_langs)}
    for split, langs in wanted.items():
        try:
            available = available_ner_languages(config.data_source, split, config.data_dir)
        except DataError as error:
            raise ConfigError("data_source", config.data_source, str(error)) from None
        missing = [lang for lang in langs if available is not None and lang not in available]
        if missing:
            raise ConfigError("target_langs" if split == "test" else "source_lang", ",".join(missing), f"languages with NER {split} data under {config.data_dir}/panx: {', '.join(available) or 'none'}")


def run_ner_trial(config: TrialConfig, reporter: Reporter):
    from xlt_core.trial import TrialResult, _seed_everything

    _seed_everything(config.seed)
    device = _device()
    load = lambda split, lang: load_ner(config.data_source, split, lang, config.data_dir)  # noqa: E731
    train_sentences = _limit(load("train", config.source_lang), config.max_train_examples)
    texts = [" ".join(sentence.words) for sentence in train_sentences] + tokenizer_texts(config)
    model, tokenizer = load_model(config, len(NER_LABELS), texts, head="token_classification")
    pad_id = tokenizer.pad_token_id

    def encode(sentences):
        return encode_tokens(tokenizer, sentences, config.max_seq_length)

    eval_sets = {("dev", config.source_lang): encode(_limit(load("dev", config.source_lang), config.max_eval_examples))}
    eval_sets |= {("test", lang): encode(_limit(load("test", lang), config.max_eval_examples)) for lang in config.target_langs}

    def evaluate(encoded):
        return score_tags(predict_tags(model, encoded, 2 * config.batch_size, pad_id, device), encoded.tags)

    objective, method_metrics = prepare_method(config, model, tokenizer, HeadLoss(), device)
    dev = eval_sets[("dev", config.source_lang)]
    outcome = train(model, objective, TokenTrainingSet(encode(train_sentences), pad_id), config, lambda: evaluate(dev)["value"], reporter, device)
    metrics, scores = dict(method_metrics), {}
    for (split, lang), encoded in eval_sets.items():
        scored = evaluate(encoded)
        metrics[f"{split}/{lang}/f1"] = scored.pop("value")
        scores[f"{split}-{lang}"] = {"split": split, "lang": lang, **scored}
    _save_model(config, model, tokenizer)
    return TrialResult(metrics, scores, outcome.best_step, outcome.seconds)


def _save_model(config: TrialConfig, model, tokenizer) -> None:
    if config.save_model_dir:
        model.save_pretrained(config.save_model_dir)
        tokenizer.save_pretrained(config.save_model_dir)


TASK_RUNNERS = {"ner": run_ner_trial}
TASK_CHECKS = {"ner": check_ner_data}
