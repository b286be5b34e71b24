"""Parallel data (local, hub layouts, the pool and each seed's sample), word splitting across
scripts, eflomal alignment filtering and its caches, and the word -> subword span mapping."""

import pytest

from xlt_core.data.parallel import (
    ParallelCorpus,
    load_parallel,
    parallel_languages,
    sample_indices,
    split_words,
)
from xlt_core.data.synthetic import _lexicon
from xlt_core.data.word_alignment import (
    align_corpus,
    aligned_pairs,
    drop_identical,
    map_to_subwords,
    one_to_one,
    parse_links,
    symmetrise,
    word_spans,
)
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

    from xlt_core.data import word_alignment

    calls = []

    def slow_align(corpus):
        calls.append(threading.get_ident())
        time.sleep(0.3)
        return [[(0, len(calls))]]  # differs per call, like an unseeded sampler

    monkeypatch.setattr(word_alignment, "_align", slow_align)
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


# Words are what mBERT's pre-tokenizer cuts: whitespace, punctuation apart, combining marks
# kept with their letters, CJK ideographs one by one, Thai runs whole between spaces.
@pytest.mark.parametrize(
    "sentence, words",
    [
        # Devanagari: vowel signs and anusvara (M*) stay in their words; the danda is a mark.
        ("हिंदी भारत की भाषा है।", ["हिंदी", "भारत", "की", "भाषा", "है", "।"]),
        # Thai: no spaces between words, vowel and tone marks (Mn) inside; mBERT keeps the run.
        ("ฉันรักแมว มาก!", ["ฉันรักแมว", "มาก", "!"]),
        ("我爱北京。", ["我", "爱", "北", "京", "。"]),
        ("اللغة العربية جميلة، جداً.", ["اللغة", "العربية", "جميلة", "،", "جداً", "."]),
        ("Привет, мир! Как дела?", ["Привет", ",", "мир", "!", "Как", "дела", "?"]),
        ("Tiếng Việt rất đẹp.", ["Tiếng", "Việt", "rất", "đẹp", "."]),
    ],
)
def test_words_of_every_script_stay_whole(sentence, words):
    assert split_words(sentence) == words


def test_the_aligner_reads_a_hindi_sentence_as_its_whitespace_separated_words(monkeypatch):
    from xlt_core.data import word_alignment

    seen = {}

    def eflomal_links(source_words, target_words):
        seen["source"], seen["target"] = source_words, target_words
        return [[(0, 0)]], [[(0, 0)]]

    monkeypatch.setattr(word_alignment, "eflomal_links", eflomal_links)
    hindi = "मेरी माँ ने खाना बनाया, और हमने खाया।"
    align_corpus(ParallelCorpus("en", "hi", ("My mother cooked, and we ate.",), (hindi,)))
    assert seen["target"] == [["मेरी", "माँ", "ने", "खाना", "बनाया", ",", "और", "हमने", "खाया", "।"]]
    assert seen["source"] == [["My", "mother", "cooked", ",", "and", "we", "ate", "."]]


def test_a_change_of_word_splitting_does_not_reuse_cached_alignments(tmp_path, monkeypatch):
    from xlt_core.data import word_alignment

    calls = []
    monkeypatch.setattr(word_alignment, "_align", lambda corpus: calls.append(1) or [[(0, 0)]])
    corpus = ParallelCorpus("en", "de", ("a b",), ("x y",))
    align_corpus(corpus, tmp_path)
    align_corpus(corpus, tmp_path)
    assert len(calls) == 1
    monkeypatch.setattr(word_alignment, "WORD_SPLITTING", "another-rule")
    align_corpus(corpus, tmp_path)
    assert len(calls) == 2


def test_each_seed_draws_its_own_sample_from_one_aligned_pool(tokenizer, tmp_path, monkeypatch):
    from xlt_core.data import word_alignment

    pool = load_parallel("synthetic", "en", "es", max_sentences=200)
    first, again = sample_indices(len(pool), 50, seed=1), sample_indices(len(pool), 50, seed=1)
    other = sample_indices(len(pool), 50, seed=2)
    assert first == again and first != other
    assert len(set(first)) == 50 and first == sorted(first) and max(first) < 200
    assert sample_indices(40, 50, seed=1) == list(range(40))  # a pool no larger is taken whole
    real_align, calls = word_alignment._align, []
    monkeypatch.setattr(
        word_alignment, "_align", lambda corpus: calls.append(1) or real_align(corpus)
    )
    pairs = aligned_pairs(pool, tokenizer, 64, tmp_path, first)
    other_pairs = aligned_pairs(pool, tokenizer, 64, tmp_path, other)
    assert calls == [1]  # the pool is aligned once, whatever the seed's sample
    assert pairs != other_pairs and len(pairs) <= 50


def test_the_pool_cannot_be_smaller_than_the_sample():
    from xlt_core.config import TrialConfig
    from xlt_core.errors import ConfigError

    with pytest.raises(ConfigError, match="parallel_pool_sentences=100.*>= parallel_max_sentences"):
        TrialConfig.from_dict({"parallel_max_sentences": 200, "parallel_pool_sentences": 100})


@pytest.fixture
def wikimatrix(tmp_path, monkeypatch):
    """sentence-transformers' WikiMatrix as the hub holds it (config en-hi, columns english
    and non_english), answering `datasets.load_dataset` for that id only."""
    import datasets
    from datasets import Features, Value
    from test_hub_loaders import HubRepo

    from xlt_core.data import parallel

    rows = [
        {"english": "Hindi is a language.", "non_english": "हिंदी एक भाषा है।"},
        {"english": "", "non_english": "खाली"},
        {"english": "India is big.", "non_english": "भारत बड़ा है।"},
        {"english": "Thank you.", "non_english": "धन्यवाद।"},
    ]
    features = Features({"english": Value("string"), "non_english": Value("string")})
    mirror = HubRepo({"en-hi": (features, {"train": rows, "dev": rows[:1]})}).write(tmp_path / "wm")
    real_load_dataset, calls = datasets.load_dataset, []

    def load_dataset(path, name=None, **kwargs):
        calls.append((path, name, kwargs.get("split")))
        return real_load_dataset(str(mirror), name, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    parallel._load_cached.cache_clear()
    yield calls
    parallel._load_cached.cache_clear()


def test_wikimatrix_pairs_come_from_the_english_columns_of_the_en_lang_config(wikimatrix):
    corpus = load_parallel("hub:sentence-transformers/parallel-sentences-wikimatrix", "en", "hi", 2)
    assert wikimatrix == [("sentence-transformers/parallel-sentences-wikimatrix", "en-hi", "train")]
    # the pool: the first 2 usable pairs in the data set order (a pair with an empty side dropped)
    assert corpus.source == ("Hindi is a language.", "India is big.")
    assert corpus.target == ("हिंदी एक भाषा है।", "भारत बड़ा है।")
    with pytest.raises(DataError, match="pairs English with other languages"):
        load_parallel("hub:sentence-transformers/parallel-sentences-wikimatrix", "de", "hi")
