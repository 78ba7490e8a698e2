"""RACE's evidence editor: consistent entity edits across the pieces of multi-hop evidence.

* in-dataset: a causal GPE, DATE or NUM entity is replaced by another entity of the same type seen in the dataset;
* in-instance: when the causal entities hold two or more PERSON (or ORG) entities, they are swapped among
  themselves (a derangement: none stays in place), so no outside name enters the evidence;
* consistent: an entity is edited the same way wherever it occurs, in every piece, which keeps the links between
  the pieces (the bridge entity of a two-hop claim changes in both hops).

Examples:
    >>> import random
    >>> from cfaug_hf.text.entities import EntityLexicon
    >>> pieces = ["Ford drove for Lola in 2006.", "Lola was run by Carpentier in 2006."]
    >>> causal = {"Ford": "PERSON", "Carpentier": "PERSON", "2006": "DATE"}
    >>> new, edits = edit_evidence(pieces, causal, EntityLexicon({"DATE": ["2008"]}), random.Random(0))
    >>> new
    ['Carpentier drove for Lola in 2008.', 'Lola was run by Ford in 2008.']
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["edit_evidence", "derangement"]


def derangement(items: Sequence[str], rng: random.Random) -> dict[str, str]:
    """A random mapping of ``items`` onto themselves with no fixed point (a random cyclic shift of a shuffle)."""
    order = list(items)
    rng.shuffle(order)
    return {a: order[(i + 1) % len(order)] for i, a in enumerate(order)} if len(order) > 1 else {}


def edit_evidence(pieces: Sequence[str], causal: Mapping[str, str], lexicon: Any, rng: random.Random, *,
                  replace_types: Sequence[str] = ("GPE", "DATE", "NUM"),
                  swap_types: Sequence[str] = ("PERSON", "ORG")) -> tuple[list[str], list[dict[str, str]]]:
    """Edit the ``causal`` entities (text -> type) in every piece; returns the new pieces and the edits made
    (``old``, ``new``, ``type``, ``rule``). Entities with no possible edit are left as they are."""
    mapping: dict[str, tuple[str, str, str]] = {}
    by_type: dict[str, list[str]] = {}
    for text, etype in causal.items():
        by_type.setdefault(etype, []).append(text)
    for etype in swap_types:
        names = sorted(set(by_type.get(etype, [])))
        for old, new in derangement(names, rng).items():
            mapping[old] = (new, etype, "in-instance")
    for etype in replace_types:
        for old in sorted(set(by_type.get(etype, []))):
            new = lexicon.sample(etype, rng, exclude=[old]) if lexicon is not None else None
            if new is not None:
                mapping[old] = (new, etype, "in-dataset")
    if not mapping:
        return list(pieces), []
    # One pass over each piece, longest names first, so a swap A <-> B does not turn A into B and back.
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, sorted(mapping, key=len, reverse=True))) + r")(?!\w)")
    new_pieces = [pattern.sub(lambda m: mapping[m.group(0)][0], p) for p in pieces]
    edits = [{"old": old, "new": new, "type": etype, "rule": rule} for old, (new, etype, rule) in sorted(mapping.items())]
    return new_pieces, edits
