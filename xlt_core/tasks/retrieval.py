"""Sentence retrieval (XSR): mean-pooled sentence vectors of every layer, cosine
similarity, reciprocal ranks of the gold translation, MRR per layer."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from xlt_core.batching import pad_batch, token_budget_batches


@torch.no_grad()
def layer_sentence_vectors(
    encoder,
    tokenizer,
    sentences: Sequence[str],
    max_length: int,
    batch_size: int,
    device: torch.device,
    tokens_per_batch: int | None = None,
) -> torch.Tensor:
    """(layers + 1, sentences, hidden): the mean over each sentence's tokens (special
    tokens included, padding excluded) of every hidden state; index 0 is the embedding
    output, index k the k-th transformer layer. Sentences are batched by length within a
    token budget (`token_budget_batches`); the vectors come back in the sentences' order."""
    encoder.eval()
    ids = tokenizer(list(sentences), truncation=True, max_length=max_length)["input_ids"]
    vectors = None
    for chunk in token_budget_batches([len(row) for row in ids], batch_size, tokens_per_batch):
        batch = {
            k: v.to(device)
            for k, v in pad_batch(
                [(ids[i], [0] * len(ids[i])) for i in chunk], tokenizer.pad_token_id
            ).items()
        }
        hidden = torch.stack(
            encoder(**batch, output_hidden_states=True).hidden_states
        )  # (L+1, B, T, H)
        mask = batch["attention_mask"].to(hidden.dtype)[None, :, :, None]
        pooled = ((hidden * mask).sum(dim=2) / mask.sum(dim=2)).float().cpu()
        if vectors is None:
            vectors = torch.empty(pooled.shape[0], len(ids), pooled.shape[2])
        vectors[:, chunk] = pooled
    return vectors


def reciprocal_ranks(queries: torch.Tensor, candidates: torch.Tensor) -> np.ndarray:
    """1 / rank of each query's gold candidate (the one at the same index) among all
    candidates by cosine similarity. Rank = 1 + the number of candidates strictly more
    similar than the gold one (a tie does not push the gold candidate down)."""
    similarity = (
        torch.nn.functional.normalize(queries, dim=-1)
        @ torch.nn.functional.normalize(candidates, dim=-1).T
    )
    gold = similarity.diagonal().unsqueeze(1)
    ranks = 1 + (similarity > gold).sum(dim=1)
    return (1.0 / ranks.double()).numpy()


def mrr_per_layer(query_vectors: torch.Tensor, candidate_vectors: torch.Tensor) -> np.ndarray:
    """(layers, queries) reciprocal ranks, one row per layer of `layer_sentence_vectors`."""
    return np.stack(
        [reciprocal_ranks(q, c) for q, c in zip(query_vectors, candidate_vectors, strict=True)]
    )


def choose_layer(dev_mrr: Sequence[float]) -> int:
    """The layer with the highest MRR (the lower layer on a tie)."""
    return int(np.argmax(np.asarray(dev_mrr)))
