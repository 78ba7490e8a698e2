"""Ratings in review text ("3/10", "2 out of 5 stars", "a 4/10 rating"): where each is on its scale, and the
same rating turned to the other end of its scale.

A review's rating says its verdict in one token, and a counterfactual that leaves "Rating: 3/10" under a glowing
rewrite is a partial flip. Human annotators turn the rating (CAD: "3 out of 10" becomes "8 out of 10"); a small
checker reading the sentence alone often misses it (it gives "2 out of 10 stars!" 0.26 negative), so the
edit-until-flipped loop reads ratings itself.

Examples:
    >>> [(r.value, r.scale) for r in find_ratings("I vote a 2. Acting: 3.5/5, story 7 out of ten.")]
    [(3.5, 5.0), (7.0, 10.0)]
    >>> flip_ratings("I gave it 3 out of 10 and 2/5 stars.")
    'I gave it 8 out of 10 and 4/5 stars.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Rating", "find_ratings", "rating_lean", "flip_ratings"]

_NUMBER = r"(\d{1,3}(?:\.\d)?)"
_WORDS = {"ten": 10.0, "five": 5.0, "four": 4.0, "hundred": 100.0}
_SCALE = r"(10|5|4|100|ten|five|four|hundred)\b"
_RATING = re.compile(
    rf"\b{_NUMBER}\s*(?:/\s*{_SCALE}|\s+out\s+of\s+{_SCALE})(?!\s*%)"
    rf"|\b{_NUMBER}\s+stars?\b(?!\s+(?:out\s+of|of|/))",
    re.IGNORECASE)


@dataclass(frozen=True)
class Rating:
    """A rating found in a text: ``value`` on ``scale`` (5 when only "N stars" is written), at ``start:end``."""

    value: float
    scale: float
    start: int
    end: int

    @property
    def lean(self) -> float:
        """Where the rating is on its scale: 0 the worst, 1 the best (a scale starts at 1, or at 0 for 100)."""
        low = 0.0 if self.scale == 100 else 1.0
        return min(1.0, max(0.0, (self.value - low) / (self.scale - low)))


def find_ratings(text: str) -> list[Rating]:
    """The ratings in ``text``, in order; a value above its scale ("12/10") is not one."""
    out = []
    for m in _RATING.finditer(text):
        if m.group(1) is not None:
            value = float(m.group(1))
            word = next(g for g in m.groups()[1:3] if g)
        else:
            value, word = float(m.group(4)), "five"
        scale = _WORDS.get(word.lower(), None) or float(word)
        if 0 <= value <= scale:
            out.append(Rating(value, scale, m.start(), m.end()))
    return out


def rating_lean(text: str) -> float | None:
    """The mean `Rating.lean` of the ratings in ``text``, or None when it has none.

    Examples:
        >>> rating_lean("Rating: 3/10"), rating_lean("No rating here.")
        (0.2222222222222222, None)
    """
    found = find_ratings(text)
    return sum(r.lean for r in found) / len(found) if found else None


def _turned(r: Rating) -> str:
    low = 0.0 if r.scale == 100 else 1.0
    value = r.scale + low - r.value
    return f"{value:g}"


def flip_ratings(text: str) -> str:
    """``text`` with each rating's value turned to the other end of its scale (3/10 -> 8/10, 2 out of 5 -> 4 out
    of 5, 40/100 -> 60/100); everything else, the scale's spelling included, unchanged."""
    out, at = [], 0
    for r in find_ratings(text):
        m = re.match(_NUMBER, text[r.start:r.end])
        out += [text[at:r.start], _turned(r), text[r.start + m.end():r.end]]
        at = r.end
    return "".join(out) + text[at:]
