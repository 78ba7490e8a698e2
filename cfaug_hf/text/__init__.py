"""Word tokens with character offsets, claim diffs and unique-match span substitution.

CrossAug's evidence edit is "find the words the generator replaced in the claim, find them once in the evidence,
put the new words there". Doing that on tokens re-joined with spaces breaks the evidence's spacing and punctuation,
and a matcher that resets after a partial match misses ``a b`` in ``a a b``. Everything here works on character
offsets into the original strings, so text outside the replaced span is never touched.
"""

from __future__ import annotations

import re
import unicodedata
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..fingerprint import register_global_state

__all__ = ["Token", "tokenize", "SpanDiff", "diff_tokens", "find_span", "substitute_span", "Substitution",
           "NEGATION_WORDS", "is_negation", "is_word", "ClaimEdit", "classify_edit", "same_meaning",
           "set_lemmatizer", "set_synonym_test"]

# A word is a run of letters/digits, optionally joined by one inner hyphen, apostrophe, period or comma
# ("state-of-the-art", "L'Oréal", "U.S", "30,000", "3.5"); any other non-space character is a token of its own.
# Clitics are tokens of their own, as in the Penn Treebank: "Tolkien's" is "Tolkien" + "'s" (so a claim's "Tolkien"
# is found in it) and "wasn't" is "was" + "n't" (so adding the clitic is an insertion, never a word replacement).
_CLITIC = r"(?:s|re|ve|ll|d|m)\b"
_TOKEN_RE = re.compile(rf"[^\W_]+?(?=n['’]t\b)|n['’]t\b|['’]{_CLITIC}|"
                       rf"[^\W_]+(?:[-.,][^\W_]+|['’](?!{_CLITIC}|t\b)[^\W_]+)*|\S")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


#: Words whose insertion or deletion flips a claim's truth on its own.
NEGATION_WORDS = frozenset("""not no never none nobody nothing neither nor without cannot nowhere hardly barely
    rarely seldom fail failed fails false untrue""".split())


def _key(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()


class Token(NamedTuple):
    """A token and where it came from; ``key`` (the form tokens are compared by: Unicode-normalised, case-folded,
    typographic quotes made plain), ``word`` and ``negation`` are computed once, when the text is tokenised."""

    text: str
    start: int
    end: int
    key: str = ""
    word: bool = False
    negation: bool = False

    @classmethod
    def of(cls, text: str, start: int, end: int) -> Token:
        key = _key(text)
        return cls(text, start, end, key, any(ch.isalnum() for ch in text),
                   key in NEGATION_WORDS or key.endswith("n't"))


def is_word(token: Token) -> bool:
    """True for tokens with a letter or digit (not punctuation)."""
    return token.word


def is_negation(token: Token) -> bool:
    return token.negation


def is_clitic(token: Token) -> bool:
    """``'s``, ``n't``, ``'re``, ...: part of the word before it."""
    return token.key.startswith("'") or token.key == "n't"


def tokenize(text: str) -> tuple[Token, ...]:
    """Split ``text`` into word and punctuation tokens that remember where they came from.

    Results are cached (a claim's evidence is searched once per candidate rewrite), so the tokens are a tuple.

    Examples:
        >>> [t.text for t in tokenize("Filming took place over 30,000 days, in L'Oréal's town.")]
        ['Filming', 'took', 'place', 'over', '30,000', 'days', ',', 'in', "L'Oréal", "'s", 'town', '.']
        >>> [t.text for t in tokenize("It wasn't Tolkien's.")]
        ['It', 'was', "n't", 'Tolkien', "'s", '.']
    """
    return _tokenize(text)


@functools.lru_cache(maxsize=1 << 16)
def _keys(text: str) -> tuple[str, ...]:
    return tuple(t.key for t in tokenize(text))


@functools.lru_cache(maxsize=1 << 16)
def _tokenize(text: str) -> tuple[Token, ...]:
    return tuple(Token.of(m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(text))


@dataclass(frozen=True)
class SpanDiff:
    """``old[i0:i1]`` (tokens of the original) was replaced by ``new[j0:j1]`` (tokens of the rewrite)."""

    old: list[Token]
    new: list[Token]
    i0: int
    i1: int
    j0: int
    j1: int

    @property
    def old_tokens(self) -> list[Token]:
        return self.old[self.i0:self.i1]

    @property
    def new_tokens(self) -> list[Token]:
        return self.new[self.j0:self.j1]

    def text(self, source: str, which: str) -> str:
        """The span's text cut from its own string (``which`` is ``"old"`` or ``"new"``), spacing kept."""
        toks = self.old_tokens if which == "old" else self.new_tokens
        return source[toks[0].start:toks[-1].end] if toks else ""

    @property
    def kind(self) -> str:
        """``identical``, ``insertion`` (no word removed), ``deletion`` (no word added) or ``replacement``.

        Only word tokens count: a change of punctuation alone is ``identical``, and a span whose only difference
        on one side is punctuation is an insertion or deletion of words, not a replacement.
        """
        old_words = any(is_word(t) for t in self.old_tokens)
        new_words = any(is_word(t) for t in self.new_tokens)
        if not old_words and not new_words:
            return "identical"
        if not old_words:
            return "insertion"
        if not new_words:
            return "deletion"
        return "replacement"

    @property
    def flips_negation(self) -> bool:
        """The change inserts or removes a negation word (``not``, ``never``, ``didn't``, ...)."""
        return any(is_negation(t) for t in self.old_tokens) != any(is_negation(t) for t in self.new_tokens)


def diff_tokens(old: str, new: str) -> SpanDiff:
    """Strip the common token prefix and suffix of two texts; what is left in each is the changed span.

    Examples:
        >>> d = diff_tokens("It took over 30 days.", "It took less than 10 days.")
        >>> [t.text for t in d.old_tokens], [t.text for t in d.new_tokens]
        (['over', '30'], ['less', 'than', '10'])
    """
    a, b = tokenize(old), tokenize(new)
    ka, kb = [t.key for t in a], [t.key for t in b]
    i = 0
    while i < len(a) and i < len(b) and ka[i] == kb[i]:
        i += 1
    j = 0  # the suffix may not eat into the prefix of either side
    while j < len(a) - i and j < len(b) - i and ka[len(a) - 1 - j] == kb[len(b) - 1 - j]:
        j += 1
    return SpanDiff(a, b, i, len(a) - j, i, len(b) - j)


def find_span(pieces: Sequence[str], span: Sequence[str]) -> list[tuple[int, int, int]]:
    """Every occurrence of the token keys ``span`` in ``pieces`` as ``(piece, start_char, end_char)``.

    Occurrences are aligned to token boundaries (``"art"`` is not found in ``"party"``), may overlap (``a a`` occurs
    twice in ``a a a``) and never cross from one piece to the next. Every start position is tried, so a partial
    match never hides a real one that begins inside it.
    """
    span = tuple(span)
    if not span:
        return []
    hits: list[tuple[int, int, int]] = []
    for p, piece in enumerate(pieces):
        toks = tokenize(piece)
        keys = _keys(piece)
        for s in range(len(keys) - len(span) + 1):
            if keys[s:s + len(span)] == span:
                hits.append((p, toks[s].start, toks[s + len(span) - 1].end))
    return hits


@dataclass(frozen=True)
class Substitution:
    """The outcome of `substitute_span`: new pieces, or ``None`` with the reason nothing was replaced."""

    pieces: list[str] | None
    reason: str
    old_text: str = ""
    new_text: str = ""
    piece: int = -1
    start: int = -1


_LOWERABLE = frozenset("a an the this that these those his her its their our my your there it he she they we "
                       "some many most all every each no one".split())


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?\n"


def _case_compatible(found: str, claim_span: str, at_sentence_start: bool) -> bool:
    """A lower-case claim word does not match a capitalised evidence word inside a sentence: "county" is not the
    "County" of "Yavapai County"; the evidence's capital there marks a proper name."""
    return not (claim_span[:1].islower() and found[:1].isupper() and not at_sentence_start)


def _match_case(replacement: str, found: str, claim_span: str, evidence_start: bool, claim_start: bool) -> str:
    """Carry sentence-initial capitalisation over between the claim and the evidence, and nothing else.

    A capital is added only where the evidence's span starts a sentence; one is removed only where the claim's span
    started the claim and the replacement's first word is a function word ("The" -> "the"), never from a name
    ("Netflix" stays "Netflix" in "... aired on Netflix.").
    """
    if not replacement or not found:
        return replacement
    if evidence_start and found[0].isupper() and replacement[0].islower():
        return replacement[0].upper() + replacement[1:]
    first = replacement.split()[0]
    if (claim_start and not evidence_start and found[0].islower() and claim_span[:1].isupper()
            and first.casefold() in _LOWERABLE and first[:1].isupper() and not first.isupper()):
        return replacement[0].lower() + replacement[1:]
    return replacement


def substitute_span(pieces: Sequence[str], diff: SpanDiff, old_text: str, new_text: str, *,
                    max_span_tokens: int = 3, min_span_tokens: int = 1) -> Substitution:
    """Replace the claim's changed span, found exactly once in the evidence, by the rewrite's span.

    Args:
        pieces: the evidence, as one or more strings.
        diff: `diff_tokens` of the original claim (``old_text``) and its rewrite (``new_text``).
        max_span_tokens, min_span_tokens: both changed spans must have a word count in this range
            (CrossAug's threshold tau is 3; punctuation tokens are not counted).

    Returns a `Substitution` whose ``reason`` is ``substituted``, ``identical``, ``insertion``, ``deletion``,
    ``span_too_long``, ``span_not_found`` or ``span_not_unique``.
    """
    kind = diff.kind
    if kind != "replacement":
        return Substitution(None, kind)
    # tau counts the replaced words, as in the paper; punctuation inside the span rides along.
    n_old = sum(is_word(t) for t in diff.old_tokens)
    n_new = sum(is_word(t) for t in diff.new_tokens)
    if not (min_span_tokens <= n_old <= max_span_tokens and min_span_tokens <= n_new <= max_span_tokens):
        return Substitution(None, "span_too_long")
    if diff.flips_negation and not any(is_word(t) and not is_clitic(t) and not is_negation(t)
                                       for t in diff.new_tokens if t.key not in {o.key for o in diff.old_tokens}):
        return Substitution(None, "insertion")  # "was" -> "wasn't": a negation added, not a word replaced
    old_span, new_span = diff.text(old_text, "old"), diff.text(new_text, "new")
    hits = [(p, start, end) for p, start, end in find_span(pieces, [t.key for t in diff.old_tokens])
            if _case_compatible(pieces[p][start:end], old_span, _sentence_initial(pieces[p], start))]
    if not hits:
        return Substitution(None, "span_not_found", old_span, new_span)
    if len(hits) > 1:
        return Substitution(None, "span_not_unique", old_span, new_span)
    p, start, end = hits[0]
    found = pieces[p][start:end]
    replacement = _match_case(new_span, found, old_span, _sentence_initial(pieces[p], start), diff.i0 == 0)
    out = list(pieces)
    out[p] = pieces[p][:start] + replacement + pieces[p][end:]
    return Substitution(out, "substituted", found, replacement, p, start)


# --------------------------------------------------------------------------------- is the edit a negation at all?
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
    import difflib

    a = [t for t in tokenize(old) if is_word(t)]
    b = [t for t in tokenize(new) if is_word(t)]
    flips = any(is_negation(t) for t in a) != any(is_negation(t) for t in b) or (
        sorted(t.key for t in a if is_negation(t)) != sorted(t.key for t in b if is_negation(t)))
    ops = [op for op in difflib.SequenceMatcher(a=[t.key for t in a], b=[t.key for t in b],
                                                autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return ClaimEdit("identical", False)
    tags = {op[0] for op in ops}
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
