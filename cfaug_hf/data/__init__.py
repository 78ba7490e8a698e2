"""Small real datasets shipped inside the package, for the demo, examples and tests (no Hub access needed).

See ``cfaug_hf/data/ATTRIBUTION.md`` for their sources and licences (CC BY-SA).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "CHECKER_DIR", "CHECKER_TASKS", "load_feverous_sample", "load_claim_pairs", "synthetic_reviews"]

DATA_DIR = Path(__file__).resolve().parent
CHECKER_DIR = DATA_DIR / "checkers"
#: Tasks (``TaskSchema.task``) with a shipped flip checker, and the folder each lives in under `CHECKER_DIR`.
CHECKER_TASKS = {"fact-verification": "claims", "natural-language-inference": "nli",
                 "sentiment-analysis": "sentiment"}


def _load_jsonl(name: str) -> Any:
    from datasets import Dataset

    return Dataset.from_json(str(DATA_DIR / name))


def load_feverous_sample() -> Any:
    """300 FEVEROUS dev claims (200 SUPPORTS, 100 REFUTES), evidence as a list of sentences.

    Columns: ``id``, ``claim``, ``evidence`` (list of strings), ``label`` (SUPPORTS/REFUTES), ``page``,
    ``challenge``. Licence CC BY-SA 3.0.

    Examples:
        >>> ds = load_feverous_sample()
        >>> len(ds), sorted(set(ds["label"]))
        (300, ['REFUTES', 'SUPPORTS'])
    """
    return _load_jsonl("feverous_sample.jsonl")


def load_claim_pairs(origin: str | None = None) -> Any:
    """(positive ``source``, negative ``target``) sentence pairs for training a negative-claim generator.

    ``origin`` selects ``"vitaminc"`` (4000 VitaminC claim pairs: a supported and a refuted claim about the same
    Wikipedia evidence, mostly a number, comparative or name changed) or ``"cad-snli"`` (1866 entailed ->
    contradicted SNLI hypotheses of the same premise), or both joined by ``+``; None gives all of them.

    Examples:
        >>> len(load_claim_pairs("vitaminc")), len(load_claim_pairs("vitaminc+cad-snli"))
        (4000, 5866)
    """
    ds = _load_jsonl("claim_pairs.jsonl")
    if origin is not None:
        known = set(ds.unique("origin"))
        wanted = set(origin.split("+"))
        if not wanted <= known:
            raise ValueError(f"Unknown origin {origin!r}; expected one of {sorted(known)} or several joined by '+'.")
        ds = ds.filter(lambda o: o in wanted, input_columns="origin")
    return ds


# Sentences for synthetic_reviews: the food sentence decides the label; the others are about other aspects.
_FOOD = {
    1: ["The {dish} was delicious.", "Every bite of the {dish} was full of flavor.", "The {dish} was cooked to "
        "perfection.", "I loved the {dish}, the ingredients were so fresh.", "The {dish} tasted amazing."],
    0: ["The {dish} was bland.", "The {dish} was overcooked and dry.", "I could not finish the {dish}, it had no "
        "flavor at all.", "The {dish} tasted stale.", "The ingredients in the {dish} were far from fresh."],
}
_DISHES = ["pasta", "steak", "soup", "salmon", "curry", "burger", "risotto", "pizza", "salad", "ramen"]
_ASPECTS = {
    1: ["Our waiter was friendly and quick.", "The room was bright and cozy.", "We got a table right away.",
        "The music was pleasant.", "Parking was easy to find.", "The staff greeted us warmly."],
    0: ["Our waiter was slow and rude.", "The room was noisy and cramped.", "We waited forty minutes for a table.",
        "The music was far too loud.", "Parking was a nightmare.", "Nobody greeted us at the door."],
}
_NEUTRAL = ["We came on a Tuesday evening.", "It is close to the train station.", "I went with two friends.",
            "They take reservations online.", "The menu changes every season."]


def synthetic_reviews(n: int = 400, *, seed: int = 0, shortcut: float = 0.8) -> Any:
    """Restaurant reviews built from templates, with a known rationale and a planted shortcut.

    Shaped after the synthetic restaurant reviews of Plyler and Chi (ICDA, AAAI 2025), written from scratch here so
    the examples run from a clean install: each review has 3 to 6 sentences; the label (1 positive, 0 negative)
    is decided by its one food sentence (the rationale); the other sentences are about service, the room or
    neutral facts, and an aspect sentence agrees with the label with probability ``shortcut`` (a spurious cue a
    model can learn instead of the food). Columns: ``text`` (sentences joined with spaces), ``sentences``,
    ``label``, ``rationale`` (index of the food sentence).

    Examples:
        >>> ds = synthetic_reviews(10)
        >>> ds[0]["sentences"][ds[0]["rationale"]] in ds[0]["text"], sorted(set(ds["label"]))
        (True, [0, 1])
    """
    import random

    from datasets import Dataset

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = i % 2
        food = rng.choice(_FOOD[label]).format(dish=rng.choice(_DISHES))
        aspect_label = label if rng.random() < shortcut else 1 - label
        others = [rng.choice(_ASPECTS[aspect_label])]
        others += rng.sample(_NEUTRAL + _ASPECTS[rng.randint(0, 1)], rng.randint(1, 4))
        others = list(dict.fromkeys(others))
        position = rng.randint(0, len(others))
        sentences = others[:position] + [food] + others[position:]
        rows.append({"text": " ".join(sentences), "sentences": sentences, "label": label, "rationale": position})
    rng.shuffle(rows)
    return Dataset.from_list(rows)

