"""NER as token classification: encoding with first-subword labels, prediction, and
scoring at two levels: entities (seqeval's CoNLL-style spans: `f1`, what HuggingFace's
run_ner*.py scripts report) and words (`token_f1`: micro F1 over each word's tag, the O tag
left out, as efimov2023 L107 names its metric, "token-level micro-averaged F1")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from xlt_core.batching import PaddedTrainingSet, pad_batch, token_budget_batches
from xlt_core.data.ner import NER_LABELS, TaggedSentence

IGNORE = -100  # label of non-first subwords and special tokens: no loss, no prediction
TOKEN_F1 = "token_f1"  # the word-level metric, logged as `<split>/<lang>/token_f1`


@dataclass(frozen=True)
class EncodedTokens:
    input_ids: list[list[int]]
    labels: list[list[int]]  # per token: the word's tag at its first subword, else IGNORE
    first_subword: list[list[int]]  # per word: position of its first subword, -1 if cut off
    tags: list[tuple[int, ...]]  # gold tags per word

    def __len__(self) -> int:
        return len(self.input_ids)


def encode_tokens(tokenizer, sentences: Sequence[TaggedSentence], max_length: int) -> EncodedTokens:
    batch = tokenizer(
        [list(s.words) for s in sentences],
        is_split_into_words=True,
        truncation=True,
        max_length=max_length,
    )
    labels, firsts = [], []
    for index, sentence in enumerate(sentences):
        word_ids = batch.word_ids(index)
        first = [-1] * len(sentence.words)
        row = [IGNORE] * len(word_ids)
        for position, word in enumerate(word_ids):
            if word is not None and first[word] == -1:
                first[word] = position
                row[position] = sentence.tags[word]
        labels.append(row)
        firsts.append(first)
    return EncodedTokens(batch["input_ids"], labels, firsts, [s.tags for s in sentences])


class TokenTrainingSet(PaddedTrainingSet):
    def rows(self, indices):
        return [(self.encoded.input_ids[i], [0] * len(self.encoded.input_ids[i])) for i in indices]

    def targets(self, indices, width):
        labels = torch.full((len(indices), width), IGNORE, dtype=torch.long)
        for row, i in enumerate(indices):
            labels[row, : len(self.encoded.labels[i])] = torch.tensor(self.encoded.labels[i])
        return {"labels": labels}


@torch.no_grad()
def predict_tags(
    model,
    encoded: EncodedTokens,
    batch_size: int,
    pad_id: int,
    device: torch.device,
    tokens_per_batch: int | None = None,
) -> list[list[int]]:
    """Predicted tag per word (read at its first subword); a word cut off by the length
    limit is predicted O. Batches by length within a token budget (`token_budget_batches`)."""
    model.eval()
    predictions: list[list[int]] = [[] for _ in range(len(encoded))]
    lengths = [len(ids) for ids in encoded.input_ids]
    for chunk in token_budget_batches(lengths, batch_size, tokens_per_batch):
        batch = {
            k: v.to(device)
            for k, v in pad_batch(
                [(encoded.input_ids[i], [0] * len(encoded.input_ids[i])) for i in chunk], pad_id
            ).items()
        }
        best = model(**batch).logits.argmax(dim=-1).cpu().numpy()
        for row, i in enumerate(chunk):
            predictions[i] = [int(best[row, p]) if p >= 0 else 0 for p in encoded.first_subword[i]]
    return predictions


def entity_counts(gold: Sequence[str], predicted: Sequence[str]) -> list[int]:
    """[true positives, false positives, false negatives] of entity spans in one sentence
    (an entity is right only when its type and both boundaries match)."""
    # Imported here: seqeval pulls in scikit-learn and pandas, which only NER trials need.
    from seqeval.metrics.sequence_labeling import get_entities

    gold_entities, predicted_entities = (
        set(get_entities(list(gold))),
        set(get_entities(list(predicted))),
    )
    tp = len(gold_entities & predicted_entities)
    return [tp, len(predicted_entities) - tp, len(gold_entities) - tp]


def token_counts(gold: Sequence[int], predicted: Sequence[int]) -> list[int]:
    """[true positives, false positives, false negatives] of word tags in one sentence: a
    word counts where its gold or predicted tag is an entity tag (not O, id 0), right only
    when the two tags are equal (B- and I- distinct), as sklearn's micro F1 over the non-O
    labels counts."""
    tp = sum(g == p != 0 for g, p in zip(gold, predicted, strict=True))
    return [tp, sum(p != 0 for p in predicted) - tp, sum(g != 0 for g in gold) - tp]


def f1_from_counts(counts: np.ndarray) -> float:
    """Micro F1 over the summed [tp, fp, fn] counts (0 when there is nothing to find or predict)."""
    tp, fp, fn = np.asarray(counts).reshape(-1, 3).sum(axis=0)
    return float(2 * tp / (2 * tp + fp + fn)) if tp + fp + fn else 0.0


def score_tags(predictions: Sequence[Sequence[int]], tags: Sequence[Sequence[int]]) -> dict:
    """Entity-level micro F1 (`value`) and the per-sentence counts the permutation test
    recomputes it from; word-level micro F1 (`token_f1`) beside it."""
    names = lambda ids: [NER_LABELS[i] for i in ids]  # noqa: E731
    pairs = list(zip(tags, predictions, strict=True))
    counts = [entity_counts(names(gold), names(predicted)) for gold, predicted in pairs]
    value = f1_from_counts(np.asarray(counts))
    token_f1 = f1_from_counts(np.asarray([token_counts(g, p) for g, p in pairs]))
    # `scores`: per-sentence F1 (1 for a sentence with no entity either side), for paired views.
    scores = [f1_from_counts(np.asarray(c)) if sum(c) else 1.0 for c in counts]
    return {
        "metric": "f1",
        "value": value,
        TOKEN_F1: token_f1,
        "counts": counts,
        "scores": scores,
        "predictions": [list(p) for p in predictions],
        "labels": [list(t) for t in tags],
    }
