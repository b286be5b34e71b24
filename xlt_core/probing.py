"""Probing the cross-lingual alignment of an encoder (Efimov et al. 2023, Sec. on probing).

On held-out word-aligned parallel sentences, the L2 distance between contextual word
vectors (last layer, subwords averaged: the vectors adjustment pulls together) of
*related* pairs (an English word and the target word eflomal linked it to) and of
*unrelated* pairs (the same English word and a linked target word of another sentence
pair, drawn at random, whose subwords differ from its own translation's). An aligned
encoder puts related pairs much closer than unrelated ones; fine-tuning tends to undo
some of that ("forgetting"), which continual learning is meant to prevent.

`Probe` records one histogram PNG, the distances (`<state>_distances.json`) and their
means per model state of a trial: `original`, `adjusted`, `finetuned`, `adjusted_finetuned`,
`adjusted_continual` (`xlt_schema.PROBING_STATES`, the order of efimov2023's Fig. 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from xlt_core.adjustment import split_pairs
from xlt_core.config import TrialConfig
from xlt_core.data.word_alignment import AlignedPairs
from xlt_core.objectives.alignment import encode_words, make_batch
from xlt_schema import PROBING_DISTANCES

# A trial's model after training, named by its adaptation (the states before it are
# `original`, `adjusted`): whatever the objective, training the original model gives `finetuned`.
_TRAINED_STATES = {"adjusted": "adjusted_finetuned", "adjusted_continual": "adjusted_continual"}


def trained_state(config: TrialConfig) -> str:
    return _TRAINED_STATES.get(config.adaptation, "finetuned")


@torch.no_grad()
def linked_word_vectors(
    encoder, pairs: AlignedPairs, pad_id: int, device: torch.device, batch_size: int = 32
) -> tuple[torch.Tensor, torch.Tensor]:
    """(source, target) last-layer vectors of every link of `pairs`, in link order:
    (links, hidden) each."""
    encoder.to(device).eval()
    sources, targets = [], []
    for start in range(0, len(pairs), batch_size):
        batch = make_batch(pairs, range(start, min(start + batch_size, len(pairs))), pad_id).to(
            device
        )
        sources.append(
            encode_words(encoder, batch.source, batch.source_spans)[batch.linked_source]
            .float()
            .cpu()
        )
        targets.append(encode_words(encoder, batch.target, batch.target_spans).float().cpu())
    return torch.cat(sources), torch.cat(targets)


def unrelated_partners(pairs: AlignedPairs, seed: int) -> np.ndarray:
    """For each link i, the index of another link j from a different sentence pair whose
    target word is not i's own translation (different subword ids). Raises ValueError when
    no such partner exists (fewer than two sentence pairs with links)."""
    sentence, words = [], []
    for k, links in enumerate(pairs.links):
        for _, j in links:
            start, end = pairs.target_spans[k][j]
            sentence.append(k)
            words.append(tuple(pairs.target_ids[k][start:end]))
    sentence = np.array(sentence)
    if len(set(sentence.tolist())) < 2:
        raise ValueError("probing needs linked words in at least two sentence pairs")
    rng = np.random.default_rng(seed)
    partners = rng.integers(0, len(words), size=len(words))
    for i in range(len(words)):
        # Rejection sampling: the invalid partners are a small share of the candidates.
        for _ in range(1000):
            j = partners[i]
            if sentence[j] != sentence[i] and words[j] != words[i]:
                break
            partners[i] = rng.integers(0, len(words))
        else:
            raise ValueError(f"no unrelated partner found for link {i}")
    return partners


def pair_distances(
    encoder, pairs: AlignedPairs, pad_id: int, device: torch.device, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """(related, unrelated) L2 distances, one of each per link of `pairs`."""
    source, target = linked_word_vectors(encoder, pairs, pad_id, device)
    partners = torch.from_numpy(unrelated_partners(pairs, seed))
    related = (source - target).norm(dim=-1)
    unrelated = (source - target[partners]).norm(dim=-1)
    return related.numpy(), unrelated.numpy()


def plot_histogram(related: np.ndarray, unrelated: np.ndarray, path: Path, title: str) -> Path:
    """Both distributions on shared bins, written as a PNG (Agg backend: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = np.linspace(0.0, float(max(related.max(), unrelated.max())), 41)
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.hist(related, bins=bins, alpha=0.6, label=f"related (aligned), mean {related.mean():.2f}")
    axes.hist(
        unrelated, bins=bins, alpha=0.6, label=f"unrelated (random), mean {unrelated.mean():.2f}"
    )
    axes.set_xlabel("L2 distance of last-layer word vectors")
    axes.set_ylabel("word pairs")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


@dataclass
class Probe:
    """Probes the encoder at each named state of a trial on the same held-out pairs and
    unrelated partners, writing `<out_dir>/<name>.png`. `figures` maps the artifact path
    `probing/<name>.png` to the file; `metrics` holds the means `probing/<name>_related_l2` and
    `probing/<name>_unrelated_l2` (two-part keys: `<split>/<lang>/<metric>` is the
    analysis layer's evaluation-metric form). Without held-out pairs it records nothing."""

    pairs: AlignedPairs | None
    pad_id: int
    out_dir: Path | None
    device: torch.device
    seed: int = 0
    figures: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)

    def record(self, name: str, encoder) -> None:
        if self.pairs is None:
            return
        related, unrelated = pair_distances(
            encoder, self.pairs, self.pad_id, self.device, self.seed
        )
        path = plot_histogram(
            related,
            unrelated,
            Path(self.out_dir) / f"{name}.png",
            f"{name}: {len(related)} word pairs",
        )
        self.figures[f"probing/{name}.png"] = str(path)
        # The distances themselves, so a report can lay the states side by side on shared bins.
        artifact = PROBING_DISTANCES.format(state=name)
        distances = Path(self.out_dir) / Path(artifact).name
        distances.write_text(
            json.dumps({"related": related.tolist(), "unrelated": unrelated.tolist()})
        )
        self.figures[artifact] = str(distances)
        self.metrics[f"probing/{name}_related_l2"] = float(related.mean())
        self.metrics[f"probing/{name}_unrelated_l2"] = float(unrelated.mean())


def trial_probe(config: TrialConfig, tokenizer, device: torch.device) -> Probe:
    """The probe of a trial: active when `config.probing_dir` is set and the trial has
    parallel data with at least two linked held-out pairs of the adjustment split, else one
    that records nothing. The trial records `original` before any adaptation, `adjusted`
    after it, and the trained state (`trained_state(config)`) after training."""
    held_out = (
        split_pairs(config, tokenizer)[1] if config.probing_dir and config.parallel_data else None
    )
    usable = (
        held_out is not None and len({k for k, links in enumerate(held_out.links) if links}) >= 2
    )
    return Probe(
        held_out if usable else None,
        tokenizer.pad_token_id,
        Path(config.probing_dir) if usable else None,
        device,
        config.seed,
    )
