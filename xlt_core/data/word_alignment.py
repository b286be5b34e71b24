"""Word alignment of parallel sentences with eflomal, down to subword spans of a tokenizer.

- eflomal (Östling & Tiedemann 2016; `pip install eflomal`) aligns the corpus in both
  directions in one call (its forward and reverse links files, both written as
  `source-target` index pairs).
- Symmetrisation: the *intersection* of the two directions. Each direction links every
  word of its target side to at most one word, so the intersection holds one-to-one
  links only, which is what the adjustment method (Cao et al. 2020) trains on.
- Links between identical strings (names, numbers, punctuation shared by both languages)
  are dropped: they would teach the adjustment nothing about translation.
- Each word is mapped to its subword span in the model's tokenizer ([CLS] at 0, spans
  [start, end) of token positions); words cut off by `max_length` lose their links.

Word links depend on the text and the word-splitting rule only (`parallel.WORD_SPLITTING`)
and are cached on disk by the corpus fingerprint and that rule: a trial's pool is aligned
once, whatever sample of it a seed draws. Subword spans are cached by pool + sample +
splitting rule + tokenizer definition + max length, so trials never realign and only a new
tokenizer or sample re-maps. eflomal's sampler is not seeded, so a fresh
alignment may differ slightly from run to run; the cache (computed once under a file
lock, while concurrent trials wait) makes every trial of a machine use the same one.
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import torch
from transformers import PreTrainedTokenizerBase

from xlt_core.data.parallel import WORD_SPLITTING, ParallelCorpus, split_words
from xlt_core.encoding_cache import save_atomically, tokenizer_fingerprint
from xlt_core.preflight import ADJUST_EXTRA

Links = list[tuple[int, int]]


@dataclass(frozen=True)
class AlignedPairs:
    """Sentence pairs ready for the model: token ids, per-word subword spans, word links.

    `links[k]` holds (source word, target word) indices into `source_spans[k]` /
    `target_spans[k]`; every linked word has a span.
    """

    source_ids: list[list[int]]
    target_ids: list[list[int]]
    source_spans: list[list[tuple[int, int] | None]]
    target_spans: list[list[tuple[int, int] | None]]
    links: list[Links]

    def __len__(self) -> int:
        return len(self.links)

    def n_links(self) -> int:
        return sum(len(links) for links in self.links)

    def select(self, indices: Sequence[int]) -> "AlignedPairs":
        return AlignedPairs(
            *(
                [getattr(self, name)[i] for i in indices]
                for name in ("source_ids", "target_ids", "source_spans", "target_spans", "links")
            )
        )


def parse_links(line: str) -> Links:
    """`"0-1 2-2"` (Pharaoh format, source-target) -> [(0, 1), (2, 2)]."""
    return [tuple(int(i) for i in link.split("-")) for link in line.split()]


def symmetrise(forward: Links, reverse: Links) -> Links:
    """The intersection of the two directions' links: one-to-one by construction."""
    return sorted(set(forward) & set(reverse))


def drop_identical(links: Links, source_words: Sequence[str], target_words: Sequence[str]) -> Links:
    """Links whose two words are not the same string."""
    return [(i, j) for i, j in links if source_words[i] != target_words[j]]


def one_to_one(links: Links) -> Links:
    """Only links whose source and target words take part in no other link."""
    source_counts, target_counts = {}, {}
    for i, j in links:
        source_counts[i] = source_counts.get(i, 0) + 1
        target_counts[j] = target_counts.get(j, 0) + 1
    return [(i, j) for i, j in links if source_counts[i] == 1 and target_counts[j] == 1]


def eflomal_links(
    source_words: Sequence[Sequence[str]], target_words: Sequence[Sequence[str]]
) -> tuple[list[Links], list[Links]]:
    """eflomal's forward and reverse links for each sentence pair (both as source-target)."""
    try:
        import eflomal
    except ModuleNotFoundError:  # an extra (it compiles from source), not in every install
        raise ModuleNotFoundError(
            f"eflomal is not installed: adjustment sweeps need it ({ADJUST_EXTRA})"
        ) from None

    with tempfile.TemporaryDirectory(prefix="xlt-eflomal-") as directory:
        forward_path, reverse_path = Path(directory) / "forward", Path(directory) / "reverse"
        eflomal.Aligner().align(
            [" ".join(words) + "\n" for words in source_words],
            [" ".join(words) + "\n" for words in target_words],
            links_filename_fwd=str(forward_path),
            links_filename_rev=str(reverse_path),
        )
        forward = [
            parse_links(line) for line in forward_path.read_text(encoding="utf-8").splitlines()
        ]
        reverse = [
            parse_links(line) for line in reverse_path.read_text(encoding="utf-8").splitlines()
        ]
    return forward, reverse


def align_corpus(corpus: ParallelCorpus, cache_dir: Path | None = None) -> list[Links]:
    """One-to-one, non-identical word links per sentence pair (cached by the corpus)."""
    key = f"{corpus.fingerprint()}-{WORD_SPLITTING}"
    path = cache_dir / "alignments" / f"{key}.pt" if cache_dir else None
    if path is None:
        return _align(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        # eflomal is unseeded: concurrent trials must not each align and keep their own
        # result, so the first aligns while the others wait, then all read its file.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            save_atomically(_align(corpus), path)
    return torch.load(path)


def _align(corpus: ParallelCorpus) -> list[Links]:
    source_words = [split_words(s) for s in corpus.source]
    target_words = [split_words(t) for t in corpus.target]
    forward, reverse = eflomal_links(source_words, target_words)
    return [
        drop_identical(one_to_one(symmetrise(f, r)), s, t)
        for f, r, s, t in zip(forward, reverse, source_words, target_words, strict=True)
    ]


def word_spans(
    tokenizer: PreTrainedTokenizerBase, words: Sequence[str], max_length: int
) -> tuple[list[int], list[tuple[int, int] | None]]:
    """Token ids of a pre-split sentence and each word's subword span [start, end) among
    them; None for a word the tokenizer drops or the length limit cuts off."""
    encoding = tokenizer(
        list(words), is_split_into_words=True, truncation=True, max_length=max_length
    )
    spans: list[list[int] | None] = [None] * len(words)
    for position, word in enumerate(encoding.word_ids()):
        if word is None:
            continue
        if spans[word] is None:
            spans[word] = [position, position + 1]
        else:
            spans[word][1] = position + 1
    return encoding["input_ids"], [tuple(span) if span else None for span in spans]


def map_to_subwords(
    corpus: ParallelCorpus,
    links: Sequence[Links],
    tokenizer: PreTrainedTokenizerBase,
    max_length: int,
) -> AlignedPairs:
    """Token ids, word spans and the links whose two words both kept a span; sentence
    pairs left without links are dropped."""
    kept = {
        name: [] for name in ("source_ids", "target_ids", "source_spans", "target_spans", "links")
    }
    for source, target, sentence_links in zip(corpus.source, corpus.target, links, strict=True):
        source_ids, source_spans = word_spans(tokenizer, split_words(source), max_length)
        target_ids, target_spans = word_spans(tokenizer, split_words(target), max_length)
        usable = [
            (i, j)
            for i, j in sentence_links
            if source_spans[i] is not None and target_spans[j] is not None
        ]
        if usable:
            for name, value in zip(
                kept, (source_ids, target_ids, source_spans, target_spans, usable)
            ):
                kept[name].append(value)
    return AlignedPairs(**kept)


def aligned_pairs(
    corpus: ParallelCorpus,
    tokenizer: PreTrainedTokenizerBase,
    max_length: int,
    cache_dir: Path | None = None,
    sample: Sequence[int] | None = None,
) -> AlignedPairs:
    """Aligned, subword-mapped sentence pairs of the `sample` of a corpus (indices; None:
    every pair), word-aligned on the whole corpus; cached by corpus + sample + tokenizer."""
    sample = list(range(len(corpus))) if sample is None else list(sample)
    drawn = hashlib.sha256(repr(sample).encode()).hexdigest()[:12]
    key = (
        f"{corpus.fingerprint()}-{drawn}-{WORD_SPLITTING}-"
        f"{tokenizer_fingerprint(tokenizer)[:16]}-{max_length}"
    )
    path = cache_dir / "aligned" / f"{key}.pt" if cache_dir else None
    if path is not None and path.exists():
        return AlignedPairs(**torch.load(path))
    links = align_corpus(corpus, cache_dir)
    pairs = map_to_subwords(
        corpus.select(sample), [links[i] for i in sample], tokenizer, max_length
    )
    if path is not None:
        save_atomically(asdict(pairs), path)
    return pairs
