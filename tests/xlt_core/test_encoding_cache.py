"""The encoding cache (`xlt_core.encoding_cache`): an encoding is computed once per key, kept
in memory (the most recent MEMORY_ENTRIES), read back from disk once evicted, and keyed by
everything it depends on."""

from dataclasses import dataclass

import pytest
import torch

from xlt_core.data.examples import PairExample
from xlt_core.encoding_cache import (
    MEMORY_ENTRIES,
    cached_encoding,
    encoding_key,
    save_atomically,
    tokenizer_fingerprint,
)
from xlt_core.models import tiny_tokenizer
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs, encode_pairs

TEXTS = ["the man buys the car", "the woman sells a red boat", "a kid finds the ball"]


@dataclass(frozen=True)
class Encoded:
    input_ids: list[list[int]]


class CountingEncoder:
    def __init__(self, rows):
        self.rows, self.calls = rows, 0

    def __call__(self) -> Encoded:
        self.calls += 1
        return Encoded(self.rows)


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    cache = tmp_path_factory.mktemp("tok")
    return tiny_tokenizer(TEXTS, 60, cache), tiny_tokenizer(TEXTS[:2], 60, cache)


def test_an_encoding_is_computed_once_then_kept_in_memory(tmp_path):
    encode = CountingEncoder([[1, 2, 3]])
    first = cached_encoding("memory-only", Encoded, encode)
    assert cached_encoding("memory-only", Encoded, encode) is first
    assert encode.calls == 1
    assert not list(tmp_path.iterdir())  # no cache_dir: nothing on disk


def test_an_evicted_encoding_is_read_back_from_disk(tmp_path):
    encode = CountingEncoder([[2, 7, 3], [2, 9, 9, 3]])
    first = cached_encoding("on-disk", Encoded, encode, tmp_path)
    assert (tmp_path / "encoded" / "on-disk.pt").exists()
    for other in range(MEMORY_ENTRIES):  # push it out of memory
        cached_encoding(f"other-{other}", Encoded, CountingEncoder([[other]]))
    again = cached_encoding("on-disk", Encoded, encode, tmp_path)
    assert encode.calls == 1
    assert again == first and again is not first
    assert [p.name for p in (tmp_path / "encoded").iterdir()] == ["on-disk.pt"]  # no staging


def test_memory_holds_the_most_recent_entries_only():
    encoders = [CountingEncoder([[k]]) for k in range(MEMORY_ENTRIES + 1)]
    for k, encode in enumerate(encoders):
        cached_encoding(f"recent-{k}", Encoded, encode)
    cached_encoding("recent-0", Encoded, encoders[0])  # the oldest was evicted
    cached_encoding(f"recent-{MEMORY_ENTRIES}", Encoded, encoders[-1])  # the newest was not
    assert encoders[0].calls == 2 and encoders[-1].calls == 1


def test_the_key_changes_with_the_text_the_tokenizer_and_the_length(tokenizers):
    tokenizer, other = tokenizers
    key = encoding_key(tokenizer, 64, TEXTS)
    assert encoding_key(tokenizer, 64, list(TEXTS)) == key
    assert encoding_key(tokenizer, 32, TEXTS) != key
    assert encoding_key(tokenizer, 64, TEXTS[:2]) != key
    assert encoding_key(other, 64, TEXTS) != key
    assert tokenizer_fingerprint(tokenizer) != tokenizer_fingerprint(other)


def test_encoded_pairs_are_cached_under_the_key_of_their_text(tokenizers, tmp_path):
    tokenizer, _ = tokenizers
    examples = [PairExample(TEXTS[0], TEXTS[1], 2), PairExample(TEXTS[2], TEXTS[0], 0)]
    encoded = encode_pairs(tokenizer, examples, 16, tmp_path)
    assert isinstance(encoded, EncodedPairs) and encoded.labels == [2, 0]
    assert encode_pairs(tokenizer, examples, 16, tmp_path) is encoded
    (saved,) = (tmp_path / "encoded").iterdir()
    assert (
        saved.name
        == encoding_key(
            tokenizer, 16, (f"{e.sentence1}\t{e.sentence2}\t{e.label}" for e in examples)
        )
        + ".pt"
    )
    assert encode_pairs(tokenizer, examples[:1], 16, tmp_path).input_ids == encoded.input_ids[:1]


def test_save_atomically_replaces_the_file_whole(tmp_path):
    path = tmp_path / "deep" / "entry.pt"
    save_atomically({"rows": [1]}, path)
    save_atomically({"rows": [1, 2]}, path)
    assert [p.name for p in path.parent.iterdir()] == ["entry.pt"]
    assert torch.load(path) == {"rows": [1, 2]}
