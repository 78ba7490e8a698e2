"""Neutral NLI hypotheses by addition: a detail the premise cannot confirm or deny, added to a hypothesis.

A hypothesis the premise entails becomes neutral when it also claims something a picture's caption cannot show:
a state of mind or a backstory ("A *tired* man plays with a baby.") or a circumstance of the action ("A boy is
bowling *for the first time*."). Most of CAD-SNLI's human neutral edits are of this kind, while a trained editor
asked for a neutral hypothesis mostly writes a contradiction or another entailment (the editors page measures both).
"""

from __future__ import annotations

import random
import re

__all__ = ["unverifiable_additions", "ADJECTIVES", "CIRCUMSTANCES"]

#: States and backstories that a scene's description does not show. Many, so that no one word becomes the mark of a
#: neutral hypothesis in the augmented data (the checker, choosing among a row's few, favours some).
ADJECTIVES = ("tired", "famous", "happy", "hungry", "lonely", "wealthy", "married", "experienced", "nervous", "proud",
              "sad", "bored", "excited", "popular", "talented", "sick", "angry", "worried", "shy", "lucky", "busy",
              "curious", "sleepy", "confident")
#: Circumstances of an action that a scene's description does not show (added to sentences with an -ing verb).
CIRCUMSTANCES = ("for the first time", "after a long day", "on vacation", "for a competition", "before dinner",
                 "for a school project", "on a day off", "to raise money", "for a birthday party", "for practice")
_DETERMINERS = frozenset("a an the two three four five six some several many one 2 3 4 5 6".split())
_WORD = re.compile(r"[a-z]+")
_FUNCTION_WORDS = frozenset("a an the for on after to before".split())


def _with_adjective(words: list[str], adjective: str) -> str:
    det = words[0]
    if det.lower() in ("a", "an"):  # the article agrees with the adjective that now follows it
        article = "an" if adjective[0] in "aeiou" else "a"
        det = article.upper() if det.isupper() and len(det) > 1 else article.capitalize() if det[0].isupper() \
            else article
    return " ".join([det, adjective, *words[1:]])


def _with_circumstance(text: str, circumstance: str) -> str:
    stripped = text.rstrip()
    end = stripped[-1] if stripped[-1] in ".!" else ""
    return f"{stripped.rstrip('.!').rstrip()} {circumstance}{end}"


def unverifiable_additions(hypothesis: str, premise: str = "", *, seed: int = 0, n: int = 4) -> list[str]:
    """Up to ``n`` versions of ``hypothesis`` with one detail added that ``premise`` does not mention: an adjective
    after a leading determiner, or, for a sentence with an -ing verb, a circumstance at its end (alternating, the
    choice seeded by ``seed``). Details whose words occur in the premise or the hypothesis are left out, and a
    hypothesis with neither a leading determiner nor an -ing verb gets none.

    Examples:
        >>> unverifiable_additions("A man plays with a baby.", "A man is playing with a baby on a deck.", n=2)
        ['An excited man plays with a baby.', 'A popular man plays with a baby.']
        >>> unverifiable_additions("A boy is bowling.", seed=1, n=2)
        ['A lonely boy is bowling.', 'A boy is bowling for a school project.']
        >>> unverifiable_additions("It rains.")
        []
    """
    words = hypothesis.split()
    # a detail needs something to qualify: a word with letters after the first (not "A", "Two ." or "...")
    if n < 1 or not any(_WORD.search(w.lower()) for w in words[1:]):
        return []
    seen = set(_WORD.findall(f"{premise} {hypothesis}".lower()))
    rng = random.Random(seed)
    adjectives = [a for a in ADJECTIVES if a not in seen] if words[0].lower() in _DETERMINERS else []
    progressive = any(len(w) > 4 and w.endswith("ing") for w in _WORD.findall(" ".join(words[1:]).lower()))
    circumstances = [c for c in CIRCUMSTANCES if progressive and not seen & (set(c.split()) - _FUNCTION_WORDS)]
    rng.shuffle(adjectives)
    rng.shuffle(circumstances)
    out: list[str] = []
    while len(out) < n and (adjectives or circumstances):
        if adjectives:
            out.append(_with_adjective(words, adjectives.pop()))
        if circumstances and len(out) < n:
            out.append(_with_circumstance(" ".join(words), circumstances.pop()))
    return out
