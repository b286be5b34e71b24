"""Tokenised encodings reused across trials: keyed by the text, the tokenizer's definition
(`tokenizer_fingerprint`) and the max length; the few most recent kept in memory (a Ray
worker runs many trials), and on disk under `<cache_dir>/encoded/` when a cache directory
is given, so that every trial on the machine reuses them."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

import torch
from transformers import PreTrainedTokenizerBase

MEMORY_ENTRIES = 8  # encodings kept in memory per process, the most recently used

Encoding = TypeVar("Encoding")

_memory: OrderedDict[str, Any] = OrderedDict()
_fingerprints: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tokenizer_fingerprint(tokenizer: PreTrainedTokenizerBase) -> str:
    """A hash of the tokenizer's whole definition (vocabulary, normalisation, ...)."""
    # Hashing the whole tokenizer definition is exact and costs one serialisation per process.
    if tokenizer not in _fingerprints:
        definition = (
            tokenizer.backend_tokenizer.to_str()
            if tokenizer.is_fast
            else repr(sorted(tokenizer.get_vocab().items()))
        )
        _fingerprints[tokenizer] = hashlib.sha256(definition.encode()).hexdigest()
    return _fingerprints[tokenizer]


def encoding_key(tokenizer: PreTrainedTokenizerBase, max_length: int, lines: Iterable[str]) -> str:
    """The cache key of an encoding of `lines` (one per example, holding everything the
    encoding depends on) by `tokenizer` at `max_length`."""
    digest = hashlib.sha256(f"{tokenizer_fingerprint(tokenizer)}|{max_length}|".encode())
    for line in lines:
        digest.update(f"{line}\n".encode())
    return digest.hexdigest()[:24]


def cached_encoding(
    key: str,
    kind: Callable[..., Encoding],
    encode: Callable[[], Encoding],
    cache_dir: Path | None = None,
) -> Encoding:
    """The encoding under `key` (`encoding_key`): from memory, else from `cache_dir` (a
    dataclass `kind` rebuilt from its saved fields), else `encode()`, then kept in memory
    and saved to `cache_dir`."""
    if key in _memory:
        _memory.move_to_end(key)
        return _memory[key]
    path = cache_dir / "encoded" / f"{key}.pt" if cache_dir else None
    if path is not None and path.exists():
        encoded = kind(**torch.load(path))
    else:
        encoded = encode()
        if path is not None:
            # The fields by reference: `dataclasses.asdict` would deep-copy every row.
            fields = dataclasses.fields(encoded)
            save_atomically({f.name: getattr(encoded, f.name) for f in fields}, path)
    _memory[key] = encoded
    if len(_memory) > MEMORY_ENTRIES:
        _memory.popitem(last=False)
    return encoded


def save_atomically(payload: Any, path: Path) -> None:
    """`torch.save(payload)` to `path` through a file beside it and a rename: concurrent
    trials computing the same entry never read a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    torch.save(payload, staging)
    os.replace(staging, path)
