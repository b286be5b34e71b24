"""The cross-lingual adjustment stage (Eq. 1) and its use by a trial.

Before a trial with adaptation `adjusted` or `adjusted_continual` trains, its encoder is
adjusted on word-aligned parallel data: linked target-language word vectors are pulled
onto their English counterparts while a regulariser keeps English vectors near those of
a frozen copy of the original encoder (`objectives/alignment.py` has the losses).
One pair of languages at a time (efimov2023 L63; Cao et al. aligned five jointly): the
trial runs one language stage per target (`language_stages.py`), and the config a stage
passes here has that one target with parallel data, so its encoder sees only en-<lang>
pairs. A config with several targets (probing of an unadapted trial) pools their pairs.
The pairs are the trial's seeded sample of the language's pool (`data/parallel.py`); the
last 10% of them (at most 200) are held out to measure the mean L2 distance of linked
word vectors before and after (`adjust/aligned_distance_before`, `..._after`).

Optimisation follows the authors' released code (pefimov/cross-lingual-adjustment@04edbc1
alignment/bert_finetuning_alignment.py:19-39; efimov2023 L125 says "the Adam optimizer"): Adam
without weight decay, betas (0.9, 0.98), eps 1e-9, the learning rate warmed up over the first
10% of the steps (the released code's first 10% of the sentences, at a fixed batch the same),
then constant. Learning rate, epochs and batch size are the trial's `adjust_*` settings (the
card: 5e-5, one epoch, 32 pairs).

The adjusted encoder depends on the model, the tokenizer, the language, the parallel data
(corpus, pool, sample, word splitting), the adjustment settings and the seed (tied to the
fine-tuning seed and drawing the sample, as in the paper: "For each run we sample 30K
sentences", L125), and is
cached on disk under that key, so every trial sharing them reuses one computation (a
file lock makes concurrent trials wait for the first).
"""

from __future__ import annotations

import copy
import fcntl
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path

import torch
from transformers import get_constant_schedule_with_warmup

from xlt_core.config import TINY_MODEL, TrialConfig
from xlt_core.data.parallel import (
    WORD_SPLITTING,
    ParallelCorpus,
    load_parallel,
    parallel_targets,
    sample_indices,
)
from xlt_core.data.word_alignment import AlignedPairs, aligned_pairs
from xlt_core.encoding_cache import tokenizer_fingerprint
from xlt_core.objectives.alignment import (
    ContinualAlignment,
    alignment_distances,
    alignment_losses,
    make_batch,
)

HELD_OUT_SHARE, HELD_OUT_MAX = 0.1, 200
WARMUP_RATIO = 0.1
# The released code's Adam (module docstring); part of the cache key, so that an encoder
# adjusted under another optimiser is never reused.
ADAM_BETAS, ADAM_EPS = (0.9, 0.98), 1e-9
OPTIMISER = f"Adam betas={ADAM_BETAS} eps={ADAM_EPS} constant after {WARMUP_RATIO:g} warm-up"


def parallel_corpora(config: TrialConfig) -> list[ParallelCorpus]:
    """The pool of each target language with parallel data (the same for every seed)."""
    if not config.parallel_data:
        return []
    pool = config.parallel_pool_sentences or config.parallel_max_sentences
    return [
        load_parallel(config.parallel_data, config.source_lang, lang, pool)
        for lang in parallel_targets(config)
    ]


def tokenizer_texts(config: TrialConfig) -> list[str]:
    """Both sides of the parallel data: what a locally trained tokenizer must also cover
    so that target-language words are not all [UNK] (every method of a sweep gets the
    same tokenizer, so the comparison stays fair). Pretrained tokenizers need none."""
    if config.model != TINY_MODEL:
        return []
    return [
        text for corpus in parallel_corpora(config) for text in (*corpus.source, *corpus.target)
    ]


def split_pairs(config: TrialConfig, tokenizer) -> tuple[AlignedPairs, AlignedPairs]:
    """(training pairs, held-out pairs) of the seed's sample of each target language's pool
    (every target language with parallel data: one in a language stage)."""
    cache_dir = Path(config.cache_dir)
    train_parts, held_out_parts = [], []
    for pool in parallel_corpora(config):
        sample = sample_indices(len(pool), config.parallel_max_sentences, config.seed)
        pairs = aligned_pairs(pool, tokenizer, config.max_seq_length, cache_dir, sample)
        cut = len(pairs) - min(HELD_OUT_MAX, max(1, int(HELD_OUT_SHARE * len(pairs))))
        train_parts.append(pairs.select(range(cut)))
        held_out_parts.append(pairs.select(range(cut, len(pairs))))
    return _concatenate(train_parts), _concatenate(held_out_parts)


def adjust(
    encoder,
    frozen_encoder,
    pairs: AlignedPairs,
    held_out: AlignedPairs,
    pad_id: int,
    *,
    epochs: float,
    learning_rate: float,
    batch_size: int,
    reg_weight: float,
    seed: int,
    device: torch.device,
) -> dict[str, float]:
    """Eq. 1 on `encoder` in place: minimise align + reg_weight * reg over `pairs`.
    Returns the held-out distances before and after, and the training loss parts."""
    encoder.to(device)
    frozen_encoder.to(device).eval()
    before = alignment_distances(encoder, frozen_encoder, held_out, pad_id, device)
    steps_per_epoch = math.ceil(len(pairs) / batch_size)
    total_steps = max(1, math.ceil(epochs * steps_per_epoch))
    optimizer, scheduler = adjustment_optimiser(encoder.parameters(), learning_rate, total_steps)
    generator = torch.Generator().manual_seed(seed)
    sums = {"align": 0.0, "reg": 0.0}
    encoder.train()
    for step in range(total_steps):
        position = step % steps_per_epoch
        if position == 0:
            order = torch.randperm(len(pairs), generator=generator).tolist()
        batch = make_batch(
            pairs, order[position * batch_size : (position + 1) * batch_size], pad_id
        ).to(device)
        align, reg = alignment_losses(encoder, frozen_encoder, batch)
        optimizer.zero_grad(set_to_none=True)
        (align + reg_weight * reg).backward()
        optimizer.step()
        scheduler.step()
        sums["align"] += align.item()
        sums["reg"] += reg.item()
    after = alignment_distances(encoder, frozen_encoder, held_out, pad_id, device)
    return {
        "adjust/aligned_distance_before": before["aligned_distance"],
        "adjust/aligned_distance_after": after["aligned_distance"],
        "adjust/source_drift": after["source_drift"],
        "adjust/align_loss": sums["align"] / total_steps,
        "adjust/reg_loss": sums["reg"] / total_steps,
        "adjust/steps": total_steps,
        "adjust/pairs": len(pairs),
        "adjust/links": pairs.n_links(),
    }


def adjustment_optimiser(parameters, learning_rate: float, total_steps: int):
    """(optimizer, scheduler) of the adjustment stage: Adam(betas 0.9/0.98, eps 1e-9), the
    learning rate reached after the warm-up and then held until the last step."""
    optimizer = torch.optim.Adam(parameters, lr=learning_rate, betas=ADAM_BETAS, eps=ADAM_EPS)
    return optimizer, get_constant_schedule_with_warmup(optimizer, int(WARMUP_RATIO * total_steps))


def adapt(config: TrialConfig, model, tokenizer, objective, device: torch.device):
    """The adaptation of a trial that has one (`config.adjusted`): load (or compute and
    cache) the adjusted encoder into `model.base_model`, and for `adjusted_continual` wrap
    the objective with Eq. 2. Returns (objective, metrics of the adjustment)."""
    pairs, held_out = split_pairs(config, tokenizer)
    original = copy.deepcopy(model.base_model).eval()
    for parameter in original.parameters():
        parameter.requires_grad_(False)
    metrics = _adjusted_encoder(
        config, model.base_model, original, pairs, held_out, tokenizer, device
    )
    if config.adaptation == "adjusted_continual":
        objective = ContinualAlignment(
            objective,
            pairs,
            original,
            config.continual_alpha,
            config.continual_reg_weight,
            tokenizer.pad_token_id,
            config.seed,
            config.continual_pairs,
        )
    return objective, metrics


def _adjusted_encoder(
    config, encoder, original, pairs, held_out, tokenizer, device
) -> dict[str, float]:
    directory = Path(config.cache_dir) / "adjusted" / _adjustment_key(config, tokenizer, pairs)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{directory}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent trial with the same key waits, then reuses
        if not (directory / "metrics.json").exists():
            metrics = adjust(
                encoder,
                original,
                pairs,
                held_out,
                tokenizer.pad_token_id,
                epochs=config.adjust_epochs,
                learning_rate=config.adjust_learning_rate,
                batch_size=config.adjust_batch_size,
                reg_weight=config.adjust_reg_weight,
                seed=config.seed,
                device=device,
            )
            _save(directory, encoder.state_dict(), metrics)
    encoder.load_state_dict(torch.load(directory / "encoder.pt", map_location="cpu"))
    return json.loads((directory / "metrics.json").read_text())


def _adjustment_key(config: TrialConfig, tokenizer, pairs: AlignedPairs) -> str:
    fields = (
        "model",
        "tiny_hidden_size",
        "tiny_layers",
        "tiny_heads",
        "parallel_data",
        "parallel_max_sentences",
        "parallel_pool_sentences",
        "max_seq_length",
        "adjust_epochs",
        "adjust_learning_rate",
        "adjust_batch_size",
        "adjust_reg_weight",
        "seed",
    )
    settings = {name: getattr(config, name) for name in fields} | {
        "langs": parallel_targets(config),
        "word_splitting": WORD_SPLITTING,
        "optimiser": OPTIMISER,
    }
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    digest.update(tokenizer_fingerprint(tokenizer).encode())
    digest.update(repr(pairs.links[:50]).encode())
    return digest.hexdigest()[:20]


def _save(directory: Path, state: dict, metrics: dict) -> None:
    staging = Path(tempfile.mkdtemp(dir=directory.parent))
    torch.save(state, staging / "encoder.pt")
    (staging / "metrics.json").write_text(json.dumps(metrics, indent=2))
    os.replace(staging, directory)


def _concatenate(parts: list[AlignedPairs]) -> AlignedPairs:
    names = ("source_ids", "target_ids", "source_spans", "target_spans", "links")
    return AlignedPairs(*([row for part in parts for row in getattr(part, name)] for name in names))
