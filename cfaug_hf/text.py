"""Word tokens with character offsets, claim diffs and unique-match span substitution.

CrossAug's evidence edit is "find the words the generator replaced in the claim, find them once in the evidence,
put the new words there". Doing that on tokens re-joined with spaces breaks the evidence's spacing and punctuation,
and a matcher that resets after a partial match misses ``a b`` in ``a a b``. Everything here works on character
offsets into the original strings, so text outside the replaced span is never touched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Token", "tokenize", "SpanDiff", "diff_tokens", "find_span", "substitute_span", "Substitution",
           "NEGATION_WORDS", "is_negation", "is_word"]

# A word is a run of letters/digits, optionally joined by one inner hyphen, apostrophe, period or comma
# ("state-of-the-art", "L'Oréal", "U.S", "30,000", "3.5"); any other non-space character is a token of its own.
_TOKEN_RE = re.compile(r"[^\W_]+(?:[-'’.,][^\W_]+)*|\S")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


#: Words whose insertion or deletion flips a claim's truth on its own.
NEGATION_WORDS = frozenset("""not no never none nobody nothing neither nor without cannot nowhere hardly barely
    rarely seldom fail failed fails false untrue""".split())


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        """The form tokens are compared by: Unicode-normalised, case-folded, with typographic quotes made plain."""
        return unicodedata.normalize("NFKC", self.text).translate(_QUOTES).casefold()


def is_word(token: Token) -> bool:
    """True for tokens with a letter or digit (not punctuation)."""
    return any(ch.isalnum() for ch in token.text)


def is_negation(token: Token) -> bool:
    k = token.key
    return k in NEGATION_WORDS or k.endswith("n't")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into word and punctuation tokens that remember where they came from.

    >>> [t.text for t in tokenize("Filming took place over 30,000 days, in L'Oréal's town.")]
    ['Filming', 'took', 'place', 'over', '30,000', 'days', ',', 'in', "L'Oréal's", 'town', '.']
    """
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


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
    span = list(span)
    if not span:
        return []
    hits: list[tuple[int, int, int]] = []
    for p, piece in enumerate(pieces):
        toks = tokenize(piece)
        keys = [t.key for t in toks]
        for s in range(len(keys) - len(span) + 1):
            if keys[s:s + len(span)] == span:
                hits.append((p, toks[s].start, toks[s + len(span) - 1].end))
    return hits


@dataclass(frozen=True)
class Substitution:
    """The outcome of :func:`substitute_span`: new pieces, or ``None`` with the reason nothing was replaced."""

    pieces: list[str] | None
    reason: str
    old_text: str = ""
    new_text: str = ""
    piece: int = -1
    start: int = -1


def _match_case(replacement: str, found: str, claim_span: str, span_at_start: bool) -> str:
    """Carry sentence-initial capitalisation over between the claim and the evidence."""
    if not replacement or not found:
        return replacement
    if found[0].isupper() and not claim_span[:1].isupper() and replacement[0].islower():
        return replacement[0].upper() + replacement[1:]
    if (span_at_start and found[0].islower() and claim_span[:1].isupper() and replacement[:1].isupper()
            and not replacement.split()[0].isupper()):
        return replacement[0].lower() + replacement[1:]
    return replacement


def substitute_span(pieces: Sequence[str], diff: SpanDiff, old_text: str, new_text: str, *,
                    max_span_tokens: int = 3, min_span_tokens: int = 1) -> Substitution:
    """Replace the claim's changed span, found exactly once in the evidence, by the rewrite's span.

    Args:
        pieces: the evidence, as one or more strings.
        diff: :func:`diff_tokens` of the original claim (``old_text``) and its rewrite (``new_text``).
        max_span_tokens, min_span_tokens: both changed spans must have a word count in this range
            (CrossAug's threshold tau is 3; punctuation tokens are not counted).

    Returns a :class:`Substitution` whose ``reason`` is ``substituted``, ``identical``, ``insertion``, ``deletion``,
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
    hits = find_span(pieces, [t.key for t in diff.old_tokens])
    old_span, new_span = diff.text(old_text, "old"), diff.text(new_text, "new")
    if not hits:
        return Substitution(None, "span_not_found", old_span, new_span)
    if len(hits) > 1:
        return Substitution(None, "span_not_unique", old_span, new_span)
    p, start, end = hits[0]
    found = pieces[p][start:end]
    replacement = _match_case(new_span, found, old_span, diff.i0 == 0)
    out = list(pieces)
    out[p] = pieces[p][:start] + replacement + pieces[p][end:]
    return Substitution(out, "substituted", found, replacement, p, start)
