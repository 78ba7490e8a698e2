"""Word tokens with character offsets, claim diffs and unique-match span substitution.

CrossAug's evidence edit is "find the words the generator replaced in the claim, find them once in the evidence,
put the new words there". Doing that on tokens re-joined with spaces breaks the evidence's spacing and punctuation,
and a matcher that resets after a partial match misses ``a b`` in ``a a b``. Everything here works on character
offsets into the original strings, so text outside the replaced span is never touched.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple


__all__ = ["Token", "tokenize", "SpanDiff", "diff_tokens", "find_span", "substitute_span", "Substitution",
           "NEGATION_WORDS", "is_negation", "is_word"]

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
