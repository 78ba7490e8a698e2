"""`NERConstraintFilter`: the source's entity types, in order, and its context kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Pair
from .constraint import ConstraintFilter

__all__ = ["NERConstraintFilter"]


class NERConstraintFilter(ConstraintFilter):
    """Entity constraints of an NER counterfactual (tokens + IOB2 tags): one tag per token, valid IOB2, the same
    entity types in the same order as the source, the words outside entities unchanged, and (with a ``lexicon``)
    no new entity text that the dataset knows only under another type.

    Reasons: ``tag_count``, ``iob2``, ``entity_types``, ``context_changed``, ``type_conflict``.

    Args:
        lexicon: an optional `EntityLexicon` of the original data.
    """

    name = "ner_constraints"

    def __init__(self, lexicon: Any = None) -> None:
        super().__init__()
        self.lexicon = lexicon

    def init_args(self) -> dict[str, Any] | None:
        return {} if self.lexicon is None else None

    def problem(self, pair: Pair) -> str | None:
        from ..text.entities import iob2_problem, iob2_spans

        col = pair.text_columns[0]
        tokens, tags = list(pair.counterfactual[col]), pair.label.split()
        old_tokens, old_tags = list(pair.source[col]), pair.original_label.split()
        if len(tokens) != len(tags):
            return "tag_count"
        if iob2_problem(tags):
            return "iob2"
        new, old = iob2_spans(tokens, tags), iob2_spans(old_tokens, old_tags)
        if [e.type for e in new] != [e.type for e in old]:
            return "entity_types"
        if _outside(tokens, new) != _outside(old_tokens, old):
            return "context_changed"
        if self.lexicon is not None:
            for a, b in zip(new, old):
                known = self.lexicon.types_of(a.text)
                if a.text.casefold() != b.text.casefold() and known and a.type not in known:
                    return "type_conflict"
        return None

    def components(self) -> dict[str, Any]:
        return {"lexicon": self.lexicon.to_dict()} if self.lexicon is not None else {}


def _outside(tokens: Sequence[str], entities: Sequence[Any]) -> list[Any]:
    """The tokens outside entities, with a marker where each entity sits."""
    out: list[Any] = []
    cursor = 0
    for e in entities:
        out += list(tokens[cursor:e.start]) + [None]
        cursor = e.end
    return out + list(tokens[cursor:])
