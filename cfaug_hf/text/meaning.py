"""Is an edit real? Whether two words or phrases mean the same (forms of one word, one typo, number words,
auxiliaries), and what kind of edit a claim underwent (a negation, a replacement, a paraphrase).

CrossAug keeps a generated claim only when its edit changes what the claim asserts; these are the rules that tell.
A lemmatiser and a synonym test can be plugged in (`set_lemmatizer`, `set_synonym_test`); both are part of every
augmenter's fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..fingerprint import register_global_state
from .spans import NEGATION_WORDS, is_negation, is_word, tokenize

__all__ = ["ClaimEdit", "classify_edit", "same_meaning", "set_lemmatizer", "set_synonym_test"]


_ARTICLES = frozenset({"a", "an", "the"})
#: Forms of the same auxiliary: changing tense or number between them does not change what a claim asserts.
_AUXILIARIES = {w: "be" for w in ("is", "was", "are", "were", "am", "be", "been", "being", "'s")}
_AUXILIARIES.update({w: "have" for w in ("has", "had", "have", "having", "'ve")})
_AUXILIARIES.update({w: "do" for w in ("does", "did", "do")})
_AUXILIARIES.update({w: "and" for w in ("and", "but", "&", "while", "whereas", "plus")})
#: Words whose insertion adds no claim of its own.
_FILLERS = frozenset("and & of the a an to in also then as".split())
# Longest first; each is removed once, then repeatedly, so "listings" and "lists" both reach "list".
_SUFFIXES = ("ically", "ational", "ations", "ation", "ities", "ity", "ness", "ings", "ing", "ical", "ally", "ies",
             "ied", "ers", "er", "est", "ed", "es", "ly", "al", "ic", "s", "e")


def _stem(word: str) -> str:
    """A crude suffix stripper: the fallback when no lemmatiser is installed (see `set_lemmatizer`)."""
    w = word
    changed = True
    while changed and len(w) > 4:
        changed = False
        for suffix in _SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[:-len(suffix)]
                if suffix in ("ies", "ied"):
                    w += "y"
                changed = True
                break
    return w


_LEMMATIZER: Any = None
_SYNONYMS: Any = None
# Both change which edits count as real, so they are part of every augmenter's fingerprint.
register_global_state("text.lemmatizer", lambda: _LEMMATIZER)
register_global_state("text.synonym_test", lambda: _SYNONYMS)


def set_lemmatizer(lemmatize: Callable[[str], str] | None) -> None:
    """Use ``lemmatize(word) -> lemma`` to decide that two words are forms of one (``None``: the suffix rules).

    With spaCy installed: ``nlp = spacy.load("en_core_web_sm"); set_lemmatizer(lambda w: nlp(w)[0].lemma_)``.
    """
    global _LEMMATIZER
    _LEMMATIZER = lemmatize


def set_synonym_test(are_synonyms: Callable[[str, str], bool] | None) -> None:
    """Also treat two words as the same meaning when ``are_synonyms(a, b)`` (lower-cased words) is true.

    No thesaurus ships with the library (WordNet cannot be installed offline), so synonyms ("began" -> "started")
    are not recognised by default. With NLTK's WordNet, for example:

    ```python
    from nltk.corpus import wordnet as wn
    set_synonym_test(lambda a, b: bool(set(wn.synsets(a)) & set(wn.synsets(b))))
    ```
    """
    global _SYNONYMS
    _SYNONYMS = are_synonyms


def _lemma(word: str) -> str:
    if _LEMMATIZER is not None:
        return _LEMMATIZER(word).casefold()
    return _stem(word)


def _one_typo(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours, in words of five letters or more."""
    if min(len(a), len(b)) < 5 or a[0] != b[0] or any(ch.isdigit() for ch in a + b) or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBER_WORDS.update({w: str(i) for i, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())})
_NUMBER_WORDS.update({f"{i}{suffix}": str(i) for i in range(1, 32) for suffix in ("st", "nd", "rd", "th")})


def _initials(words: Sequence[str]) -> str:
    return "".join(w[0] for w in words if w and w not in ("of", "and", "the", "for"))


def same_meaning(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether replacing the words ``old`` by ``new`` keeps a claim's meaning: an inflection or another form of the
    same lemma, a spelling variant or typo, an abbreviation, a change of article, or another tense of a copula.

    Words are compared case-insensitively. Numbers and negations always count as a change of meaning.

    Examples:
        >>> same_meaning(["listings"], ["lists"]), same_meaning(["historic"], ["historical"])
        (True, True)
        >>> same_meaning(["United", "Kingdom"], ["UK"]), same_meaning(["was"], ["is"]), same_meaning(["an"], ["a"])
        (True, True, True)
        >>> same_meaning(["believed"], ["belived"]), same_meaning(["larger"], ["smaller"]), same_meaning(["1990"], ["1991"])
        (True, False, False)
    """
    a = [w.casefold() for w in old if any(ch.isalnum() for ch in w)]
    b = [w.casefold() for w in new if any(ch.isalnum() for ch in w)]
    if any(w in NEGATION_WORDS or w.endswith("n't") for w in a + b):
        return a == b
    a = [_NUMBER_WORDS.get(w, _AUXILIARIES.get(w, w)) for w in a if w not in _ARTICLES]
    b = [_NUMBER_WORDS.get(w, _AUXILIARIES.get(w, w)) for w in b if w not in _ARTICLES]
    if a == b:
        return True
    if not a or not b:
        return False
    if re.sub(r"[\W_]", "", "".join(a)) == re.sub(r"[\W_]", "", "".join(b)):
        return True  # spacing, hyphens or full stops only: "Ph.D." / "PhD", "Myka 9" / "Myka9"
    joined_a, joined_b = "".join(a).replace(".", ""), "".join(b).replace(".", "")
    if (len(a) > 1 and len(b) == 1 and _initials(a) == joined_b) or (
            len(b) > 1 and len(a) == 1 and _initials(b) == joined_a):
        return True
    if len(a) != len(b):
        return False
    return all(x == y or (not any(ch.isdigit() for ch in x + y) and _same_word(x, y)) for x, y in zip(a, b))


def _same_word(x: str, y: str) -> bool:
    short, long_ = sorted((x, y), key=len)
    return (_lemma(x) == _lemma(y) or _one_typo(x, y)
            or (len(short) >= 5 and long_.startswith(short))  # "Mongol" / "Mongolian", "rhino" / "rhinoceros"
            or (_SYNONYMS is not None and bool(_SYNONYMS(x, y))))


@dataclass(frozen=True)
class ClaimEdit:
    """What a rewrite did to a claim's words, aligned word by word (punctuation ignored).

    ``kind`` is ``identical`` (at most punctuation or case changed), ``deletion`` (words only removed, anywhere,
    any number), ``insertion`` (words only added), ``same_meaning`` (every change keeps the meaning: see
    `same_meaning`, or changes that do once some words are taken as deleted) or ``change``.
    ``flips_negation`` says a negation word was added or removed.

    Examples:
        >>> classify_edit("Acme Ltd. was founded in 1990 in Paris.", "Acme Ltd was founded in Paris").kind
        'deletion'
        >>> classify_edit("He was born in 1990.", "He was not born in 1990.").flips_negation
        True
    """

    kind: str
    flips_negation: bool

    @property
    def is_negation_candidate(self) -> bool:
        """A rewrite that can plausibly contradict the claim (what CrossAug's REFUTES rows need)."""
        return self.flips_negation or self.kind in ("insertion", "change")


def classify_edit(old: str, new: str) -> ClaimEdit:
    from .diff import word_diff

    a = [t for t in tokenize(old) if is_word(t)]
    b = [t for t in tokenize(new) if is_word(t)]
    flips = any(is_negation(t) for t in a) != any(is_negation(t) for t in b) or (
        sorted(t.key for t in a if is_negation(t)) != sorted(t.key for t in b if is_negation(t)))
    ops = word_diff([t.key for t in a], [t.key for t in b])
    if not ops:
        return ClaimEdit("identical", False)
    tags = {op[0] for op in ops}
    if "long" in tags:  # a long stretch rewritten whole: not a small edit that could keep the meaning
        return ClaimEdit("change", flips)
    if tags == {"delete"}:
        return ClaimEdit("deletion", flips)
    if tags == {"insert"}:
        preserving = all(_keeps_meaning([], [t.text for t in b[j0:j1]]) for _, _, _, j0, j1 in ops)
        return ClaimEdit("same_meaning" if preserving and not flips else "insertion", flips)
    if not flips and all(tag == "delete" or _keeps_meaning([t.text for t in a[i0:i1]], [t.text for t in b[j0:j1]])
                         for tag, i0, i1, j0, j1 in ops):
        return ClaimEdit("same_meaning", False)
    return ClaimEdit("change", flips)


def _keeps_meaning(old: list[str], new: list[str]) -> bool:
    """``old`` -> ``new`` keeps the meaning, or does once some of ``old`` is taken as deleted ("Alstom, and focused
    on ..." -> "Alastom")."""
    if same_meaning(old, new):
        return True
    if new and all(w.casefold() in _FILLERS for w in new) and not old:
        return True  # "clean & jerk" -> "clean and jerk": a filler word added
    if len(new) >= len(old):
        return False
    j = 0
    for word in new:  # each new word matches a later old word; the old words in between were deleted
        while j < len(old) and not same_meaning([old[j]], [word]):
            j += 1
        if j == len(old):
            return False
        j += 1
    return True
