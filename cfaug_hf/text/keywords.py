"""Keywords from retrieved text: the words CORE gives its editor to use, and the hints an editor is trained with
(`cfaug_hf.training.train_editor`), so both read retrieved text the same way."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["keywords", "spacy_pos_tagger"]

_KEEP_POS = {"ADJ", "ADP", "ADV", "NOUN", "VERB"}
_SPACY: dict[str, Any] = {}


def spacy_pos_tagger(model: str = "en_core_web_sm") -> Callable[[list[str]], list[list[tuple[str, str]]]] | None:
    """``texts -> [[(word, universal POS), ...], ...]`` with an installed spaCy pipeline, or None when spaCy or the
    pipeline is not installed (``pip install 'cfaug-hf[spacy]'``)."""
    if model in _SPACY:
        return _SPACY[model]
    tagger: Any = None
    try:
        import spacy

        nlp = spacy.load(model, disable=["ner", "parser", "lemmatizer"])

        def pos_tags(texts: list[str]) -> list[list[tuple[str, str]]]:
            return [[(t.text, t.pos_) for t in doc] for doc in nlp.pipe(texts)]

        tagger = pos_tags
    except (ImportError, OSError):
        tagger = None
    _SPACY[model] = tagger
    return tagger


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {"br", "s", "t", "nt", "ve", "ll", "re", "d", "m"}


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def keywords(excerpts: Sequence[str], task: str, *, max_n: int | None = None, query: str = "",
             tagger: Callable[[list[str]], list[list[tuple[str, str]]]] | None | str = "auto") -> list[str]:
    """Unique lower-cased keywords from retrieved ``excerpts``, in order of appearance.

    NLI keeps adjectives, adpositions, adverbs, nouns and verbs (CORE's choice; the first 5 by default); sentiment
    and other tasks keep every word that is not a stopword or punctuation (8 by default). The POS tags come from
    spaCy when it is installed (``tagger="auto"``); without it (or with ``tagger=None``) NLI falls back to the
    non-stopword rule too, which keeps the same content words except the prepositions. Words already in ``query``
    are skipped: the editor gains nothing from being told to use them. ``max_n=0`` keeps them all.

    Examples:
        >>> keywords(["The most delightful trailer ever!", "Spot on awesomeness in this."], "sentiment", tagger=None)
        ['delightful', 'trailer', 'spot', 'awesomeness']
    """
    if max_n is None:
        max_n = 5 if task == "nli" else 8
    stop = _stopwords()
    seen = {w.casefold() for w in _WORD.findall(query)}
    pos_tagger = spacy_pos_tagger() if tagger == "auto" else tagger
    out: list[str] = []
    if task == "nli" and pos_tagger is not None:
        tagged = pos_tagger(list(excerpts))
        words = [w for doc in tagged for w, pos in doc if pos in _KEEP_POS]
    else:
        words = [w for text in excerpts for w in _WORD.findall(text) if w.casefold() not in stop]
    for word in words:
        w = word.casefold().strip(string.punctuation)
        if len(w) < 2 or w in seen or w in out:
            continue
        out.append(w)
        if len(out) == max_n:  # max_n=0: no limit
            break
    return out
