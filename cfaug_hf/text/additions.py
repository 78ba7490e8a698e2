"""Neutral NLI hypotheses by addition: a detail the premise cannot confirm or deny, added to a hypothesis.

A hypothesis the premise entails becomes neutral when it also claims something a picture's caption cannot show:
a state of mind or a backstory ("A *tired* man plays with a baby.") or a circumstance of the action ("A boy is
bowling *for the first time*."). Most of CAD-SNLI's human neutral edits are of this kind, while a trained editor
asked for a neutral hypothesis mostly writes a contradiction or another entailment (the editors page measures both).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

__all__ = ["unverifiable_additions", "ADJECTIVES", "CIRCUMSTANCES", "subject_kind"]

#: States and backstories that a scene's description does not show. Many, so that no one word becomes the mark of a
#: neutral hypothesis in the augmented data (the checker, choosing among a row's few, favours some).
ADJECTIVES = ("tired", "famous", "happy", "hungry", "lonely", "wealthy", "married", "experienced", "nervous", "proud",
              "sad", "bored", "excited", "popular", "talented", "sick", "angry", "worried", "shy", "lucky", "busy",
              "curious", "sleepy", "confident")
#: Circumstances of an action that a scene's description does not show (added to sentences with an -ing verb).
CIRCUMSTANCES = ("for the first time", "after a long day", "on vacation", "for a competition", "before dinner",
                 "for a school project", "on a day off", "to raise money", "for a birthday party", "for practice")
#: The adjectives above that also fit an animal ("A hungry dog", not "A married dog").
ANIMAL_ADJECTIVES = frozenset("tired happy hungry lonely sad bored excited sick angry curious sleepy shy nervous lucky "
                              "proud famous".split())
# Nouns for people and animals, singular. A state of mind fits only them: "The talented room is well-lit." is what an
# adjective put after any determiner gave. Missing a noun costs one candidate; a thing taken for a person gives nonsense.
_PEOPLE = frozenset("""man woman person boy girl child kid lady guy gentleman baby toddler teen teenager adult male female
    human family couple group crowd band team class bride groom husband wife mother father mom dad son daughter brother
    sister sibling friend student worker player musician singer dancer runner surfer skier biker rider cyclist athlete
    officer soldier doctor nurse farmer artist performer vendor clown cowboy surgeon hiker climber drummer pitcher
    gymnast skateboarder snowboarder jogger swimmer tourist chef cook waiter waitress customer audience spectator fan
    pedestrian shopper passenger driver teacher firefighter sailor crew choir individual someone youth youngster senior
    elder photographer bartender traveler windsurfer skater cheerleader breakdancer member coworker partner owner
    stranger manager instructor ranger hunter baker leader wrestler boxer sprinter diver kayaker painter protester actor
    actress janitor catcher carpenter bowler racer winner outfielder engineer rancher angler settler survivor lover peer
    onlooker archer bricklayer gal geisha master girlfriend boyfriend thug nun monk priest cop quarterback""".split())
_ANIMALS = frozenset("""dog puppy cat kitten horse pony cow bull calf bird sheep goat camel elephant monkey bear wolf
    chicken duck greyhound poodle gorilla deer lion tiger animal labrador pigeon giraffe zebra dolphin squirrel rabbit
    parrot penguin""".split())
_IRREGULAR = {"men": "man", "women": "woman", "children": "child", "people": "person", "gentlemen": "gentleman",
              "ladies": "lady", "babies": "baby", "families": "family", "puppies": "puppy", "ponies": "pony",
              "calves": "calf", "wolves": "wolf", "actresses": "actress", "waitresses": "waitress", "classes": "class"}
# Where a subject's noun phrase ends: "A man in a red shirt", "Two dogs are", "A ball and a dog".
_PHRASE_END = frozenset("is are was were be has have had who that which in on at with of by near while and , .".split())
# "A bunch of guys", "One of the children": here the phrase goes on after "of".
_QUANTITIES = frozenset("bunch lot lots one some couple pair few many several all most each both two three".split())
_DETERMINERS = frozenset("a an the two three four five six some several many one 2 3 4 5 6".split())
_WORD = re.compile(r"[a-z]+")
_FUNCTION_WORDS = frozenset("a an the for on after to before".split())


def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    return word[:-1] if word.endswith("s") and word[:-1] in _PEOPLE | _ANIMALS else word


def subject_kind(words: Sequence[str]) -> str | None:
    """``"person"``, ``"animal"`` or None: what the noun phrase after a sentence's leading determiner names (its
    first six words up to a preposition, a verb or "and" before a determiner; "of" after a quantity goes on: "A bunch of
    guys", and so does "and" between modifiers: "A black and white dog"), from a list of nouns for people and animals plus the
    suffixes of agent nouns (-man, -ist, -ian: "fisherman", "cyclist", "musician").

    Examples:
        >>> subject_kind("A man in a red shirt".split()), subject_kind("Two dogs run".split())
        ('person', 'animal')
        >>> subject_kind("A black and white striped ramp".split()) is None
        True
    """
    previous = words[0].lower() if words else ""
    for i, raw in enumerate(words[1:7], start=1):
        word = re.sub(r"'s$", "", raw.lower().strip(".,!?;:'\""))
        goes_on = (word == "of" and previous in _QUANTITIES) or \
            (raw.lower() == "and" and i + 1 < len(words) and words[i + 1].lower() not in _DETERMINERS)
        if (raw.lower() in _PHRASE_END or word in _PHRASE_END or not word) and not goes_on:
            break
        previous = word
        noun = _singular(word)
        if noun in _PEOPLE or (len(noun) > 4 and noun.endswith(("man", "men"))) or \
                (len(noun) > 6 and noun.rstrip("s").endswith(("ist", "ian"))):
            return "person"
        if noun in _ANIMALS:
            return "animal"
    return None


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
    after a leading determiner that names a person or an animal (`subject_kind`), or, for a sentence with an -ing verb, a circumstance at its end (alternating, the
    choice seeded by ``seed``). Details whose words occur in the premise or the hypothesis are left out, and a
    hypothesis with neither a leading determiner nor an -ing verb gets none.

    Examples:
        >>> unverifiable_additions("A man plays with a baby.", "A man is playing with a baby on a deck.", n=2)
        ['An excited man plays with a baby.', 'A popular man plays with a baby.']
        >>> unverifiable_additions("A boy is bowling.", seed=1, n=2)
        ['A lonely boy is bowling.', 'A boy is bowling for a school project.']
        >>> unverifiable_additions("It rains."), unverifiable_additions("The room is well-lit.")
        ([], [])
    """
    words = hypothesis.split()
    # a detail needs something to qualify: a word with letters after the first (not "A", "Two ." or "...")
    if n < 1 or not any(_WORD.search(w.lower()) for w in words[1:]):
        return []
    seen = set(_WORD.findall(f"{premise} {hypothesis}".lower()))
    rng = random.Random(seed)
    kind = subject_kind(words) if words[0].lower() in _DETERMINERS else None
    adjectives = [a for a in ADJECTIVES if a not in seen and (kind == "person" or (kind and a in ANIMAL_ADJECTIVES))]
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
