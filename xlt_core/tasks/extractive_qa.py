"""Extractive QA features and decoding: long contexts split into overlapping windows with
the tokenizer's offset mappings; the answer is the best-scoring span over all windows.
Scoring is in `qa_scoring`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from xlt_core.batching import PaddedTrainingSet, pad_batch, rows, token_budget_batches
from xlt_core.data.squad import QAExample

MAX_ANSWER_TOKENS = 30  # longest predicted span, as in the SQuAD/XTREME scripts
N_BEST = 20  # start and end candidates per window


@dataclass(frozen=True)
class QAFeatures:
    """One row per window: token ids, token types, the example it belongs to, the
    character offsets of its context tokens (None elsewhere), and for training the
    answer's token positions (0, 0 = [CLS] when the answer is not in the window)."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]]
    example_index: list[int]
    offsets: list[list[tuple[int, int] | None]]
    start_positions: list[int]
    end_positions: list[int]

    def __len__(self) -> int:
        return len(self.input_ids)


def fit_questions(tokenizer, questions: list[str], max_length: int, stride: int) -> list[str]:
    """Each question cut to its first `max_length - stride - specials - 1` tokens."""
    budget = max_length - stride - tokenizer.num_special_tokens_to_add(pair=True) - 1
    offsets = tokenizer(questions, add_special_tokens=False, return_offsets_mapping=True)
    return [
        question if len(spans) <= budget else question[: spans[budget - 1][1]]
        for question, spans in zip(questions, offsets["offset_mapping"])
    ]


def encode_qa(tokenizer, examples: Sequence[QAExample], max_length: int, stride: int) -> QAFeatures:
    """Question first, context second; contexts longer than the window are split into
    windows overlapping by `stride` tokens. Questions are cut to leave each window more than
    `stride` context tokens (as XTREME's `max_query_length` cuts long questions; the
    tokenizer cannot make windows otherwise)."""
    batch = tokenizer(
        fit_questions(tokenizer, [e.question for e in examples], max_length, stride),
        [e.context for e in examples],
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_token_type_ids=True,
    )
    offsets, starts, ends = [], [], []
    for row, example_index in enumerate(batch["overflow_to_sample_mapping"]):
        example, sequence_ids = examples[example_index], batch.sequence_ids(row)
        row_offsets = [
            tuple(span) if sequence_ids[k] == 1 else None
            for k, span in enumerate(batch["offset_mapping"][row])
        ]
        answer_begin = example.answer_start
        answer_end = answer_begin + len(example.answers[0])
        inside = [k for k, span in enumerate(row_offsets) if span is not None]
        start = end = 0
        if (
            inside
            and row_offsets[inside[0]][0] <= answer_begin
            and row_offsets[inside[-1]][1] >= answer_end
        ):
            start = next((k for k in inside if row_offsets[k][1] > answer_begin), 0)
            end = next((k for k in reversed(inside) if row_offsets[k][0] < answer_end), 0)
            if end < start:  # an empty answer or one that no token covers: not a target
                start = end = 0
        offsets.append(row_offsets)
        starts.append(start)
        ends.append(end)
    return QAFeatures(
        batch["input_ids"],
        batch["token_type_ids"],
        list(batch["overflow_to_sample_mapping"]),
        offsets,
        starts,
        ends,
    )


class QATrainingSet(PaddedTrainingSet):
    def rows(self, indices):
        return rows(self.encoded, indices)

    def targets(self, indices, width):
        return {
            "start_positions": torch.tensor([self.encoded.start_positions[i] for i in indices]),
            "end_positions": torch.tensor([self.encoded.end_positions[i] for i in indices]),
        }


def best_span(
    start_logits: np.ndarray, end_logits: np.ndarray, offsets: Sequence[tuple[int, int] | None]
) -> tuple[float, int, int] | None:
    """(score, start token, end token) of the best context span of one window, with
    end >= start and at most MAX_ANSWER_TOKENS tokens; None when the window has no context."""
    best = None
    starts = np.argsort(start_logits[: len(offsets)])[::-1][:N_BEST]
    ends = np.argsort(end_logits[: len(offsets)])[::-1][:N_BEST]
    for s in starts:
        for e in ends:
            if offsets[s] is None or offsets[e] is None or e < s or e - s + 1 > MAX_ANSWER_TOKENS:
                continue
            score = float(start_logits[s] + end_logits[e])
            if best is None or score > best[0]:
                best = (score, int(s), int(e))
    return best


@torch.no_grad()
def predict_answers(
    model,
    features: QAFeatures,
    examples: Sequence[QAExample],
    batch_size: int,
    pad_id: int,
    device: torch.device,
    tokens_per_batch: int | None = None,
) -> list[str]:
    """The answer text of each example: the best span over all of its windows (the first
    window's on a tie). Windows are batched by length within a token budget
    (`token_budget_batches`), then compared in their own order."""
    model.eval()
    spans: list[tuple[float, int, int] | None] = [None] * len(features)
    lengths = [len(ids) for ids in features.input_ids]
    for chunk in token_budget_batches(lengths, batch_size, tokens_per_batch):
        batch = {k: v.to(device) for k, v in pad_batch(rows(features, chunk), pad_id).items()}
        output = model(**batch)
        start_logits, end_logits = (
            output.start_logits.float().cpu().numpy(),
            output.end_logits.float().cpu().numpy(),
        )
        for position, row in enumerate(chunk):
            spans[row] = best_span(
                start_logits[position], end_logits[position], features.offsets[row]
            )
    best: dict[int, tuple[float, str]] = {}
    for row, span in enumerate(spans):
        index = features.example_index[row]
        if span and (index not in best or span[0] > best[index][0]):
            context = examples[index].context
            best[index] = (
                span[0],
                context[features.offsets[row][span[1]][0] : features.offsets[row][span[2]][1]],
            )
    return [best[i][1] if i in best else "" for i in range(len(examples))]
