"""A small deterministic Tatoeba-like retrieval set generated in code (the offline default
of task=xsr): 1,000 sentences of the synthetic NLI grammar per pseudo-language (es, de, ru),
each beside its English original, line for line as Tatoeba's pairs.

The translations are exact and word by word ("de" verb-final), so a query shares with its
gold English sentence every word the pseudo-language keeps from English ("es" about 30%,
"de" 10%, "ru" none) and its structure: how well an encoder retrieves across the lexicons
is what adjustment changes. The sentences are a draw of their own, apart from the synthetic
parallel data (the NLI training sentences) that adjustment trains on.
"""

from functools import lru_cache

from xlt_core.data.examples import RetrievalPairs
from xlt_core.data.synthetic import SYNTHETIC_LANGUAGES, realise, rendered_sentences
from xlt_core.errors import DataError

PAIRS = 1000
_SEED = 6606
SYNTHETIC_XSR_LANGUAGES = tuple(lang for lang in SYNTHETIC_LANGUAGES if lang != "en")


@lru_cache(maxsize=8)
def synthetic_tatoeba(lang: str) -> RetrievalPairs:
    """The PAIRS (query in `lang`, English) pairs; output deterministic."""
    if lang not in SYNTHETIC_XSR_LANGUAGES:
        raise DataError(
            f"synthetic retrieval pairs pair English with {', '.join(SYNTHETIC_XSR_LANGUAGES)}, "
            f"not {lang!r}"
        )
    sentences = rendered_sentences(_SEED, PAIRS)
    return RetrievalPairs(
        lang,
        tuple(realise(sentence, lang) for sentence in sentences),
        tuple(realise(sentence, "en") for sentence in sentences),
    )
