"""Parallel data, eflomal alignment filtering, and the word -> subword span mapping."""

import pytest

from xlt_core.data.alignment import (
    align_corpus,
    aligned_pairs,
    drop_identical,
    map_to_subwords,
    one_to_one,
    parse_links,
    symmetrise,
    word_spans,
)
from xlt_core.data.parallel import ParallelCorpus, load_parallel, parallel_languages, split_words
from xlt_core.data.synthetic import _lexicon
from xlt_core.errors import DataError
from xlt_core.models import tiny_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    texts = ["the cat sleeps", "le chat dort", "the catalogue", "Paris"] * 20
    return tiny_tokenizer(texts, 120, tmp_path_factory.mktemp("tok"))


def test_symmetrised_links_are_the_intersection_and_one_to_one():
    forward = parse_links("0-0 1-1 2-1 3-3")
    reverse = parse_links("0-0 1-1 2-2 3-3 3-4")
    assert forward == [(0, 0), (1, 1), (2, 1), (3, 3)]
    assert symmetrise(forward, reverse) == [(0, 0), (1, 1), (3, 3)]
    # one_to_one removes every link of a word linked twice
    assert one_to_one([(0, 0), (1, 1), (2, 1), (3, 3), (3, 4)]) == [(0, 0)]


def test_identical_strings_are_dropped():
    source, target = ["Paris", "is", "big", "."], ["Paris", "est", "grand", "."]
    assert drop_identical([(0, 0), (1, 1), (2, 2), (3, 3)], source, target) == [(1, 1), (2, 2)]


def test_words_map_to_their_subword_spans(tokenizer):
    words = ["the", "catalogue", "sleeps"]
    ids, spans = word_spans(tokenizer, words, max_length=32)
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert spans[0] == (1, 2)
    # each span's pieces rebuild its word, and spans tile the sentence in order
    for word, (start, end) in zip(words, spans):
        assert "".join(t.removeprefix("##") for t in tokens[start:end]) == word
    assert [s[0] for s in spans[1:]] == [s[1] for s in spans[:-1]]
    assert spans[-1][1] == len(ids) - 1


def test_truncated_words_lose_their_links(tokenizer):
    corpus = ParallelCorpus("en", "fr", ("the cat sleeps",), ("le chat dort",))
    pairs = map_to_subwords(corpus, [[(0, 0), (1, 1), (2, 2)]], tokenizer, max_length=4)
    # [CLS] + two word pieces + [SEP]: at most the first words keep spans
    assert all(
        pairs.source_spans[0][i] is not None and pairs.target_spans[0][j] is not None
        for i, j in pairs.links[0]
    )
    assert (2, 2) not in pairs.links[0]


def test_local_parallel_files_and_errors(tmp_path):
    (tmp_path / "pair").mkdir()
    (tmp_path / "pair" / "c.en").write_text("Hello, world!\n\nYes .\n", encoding="utf-8")
    (tmp_path / "pair" / "c.xx").write_text("Hallo, Welt!\nleer\nJa .\n", encoding="utf-8")
    corpus = load_parallel(str(tmp_path), "en", "xx")
    assert corpus.source == ("Hello, world!", "Yes .")  # the pair with an empty side is dropped
    assert split_words(corpus.source[0]) == ["Hello", ",", "world", "!"]
    assert parallel_languages(str(tmp_path), "en") == ["xx"]
    (tmp_path / "pair" / "c.yy").write_text("one line\n", encoding="utf-8")
    with pytest.raises(DataError, match="c.en has 3 lines but .*c.yy has 1"):
        load_parallel(str(tmp_path), "en", "yy")
    with pytest.raises(DataError, match="no line-aligned en-zz files"):
        load_parallel(str(tmp_path), "en", "zz")


def test_eflomal_aligns_the_synthetic_corpus_and_caches(tokenizer, tmp_path):
    corpus = load_parallel("synthetic", "en", "ru", max_sentences=300)
    pairs = aligned_pairs(corpus, tokenizer, 64, tmp_path)
    assert len(pairs) > 250 and pairs.n_links() > 1000
    # The synthetic "ru" is an exact word-by-word translation: most links recover the lexicon.
    lexicon = _lexicon("ru")
    right = total = 0
    for k, links in enumerate(align_corpus(corpus, tmp_path)[:100]):
        source, target = split_words(corpus.source[k]), split_words(corpus.target[k])
        right += sum(lexicon[source[i]] == target[j] for i, j in links)
        total += len(links)
    assert right / total > 0.8
    assert list((tmp_path / "aligned").glob("*.pt")) and list(
        (tmp_path / "alignments").glob("*.pt")
    )
    again = aligned_pairs(corpus, tokenizer, 64, tmp_path)
    assert again == pairs


def test_shared_opensubtitles_pairs(shared_data):
    corpus = load_parallel(str(shared_data / "parallel"), "en", "vi")
    assert len(corpus) == 1000
    assert corpus.target[2] == "Castle , hãy đi gặp mẹ anh ."


def test_concurrent_trials_share_one_alignment(tmp_path, monkeypatch):
    # eflomal is unseeded, so two trials that both aligned would each keep a different
    # result: the cache lock lets the first align and the second read its file.
    import threading
    import time

    from xlt_core.data import alignment

    calls = []

    def slow_align(corpus):
        calls.append(threading.get_ident())
        time.sleep(0.3)
        return [[(0, len(calls))]]  # differs per call, like an unseeded sampler

    monkeypatch.setattr(alignment, "_align", slow_align)
    corpus = ParallelCorpus("en", "de", ("a b",), ("x y",))
    results = [None, None]

    def trial(k):
        results[k] = align_corpus(corpus, tmp_path)

    threads = [threading.Thread(target=trial, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert results[0] == results[1] == [[(0, 1)]]
