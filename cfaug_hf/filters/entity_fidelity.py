"""`EntityFidelityFilter`: keep a counterfactual that keeps enough of its source's entities."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .base import Filter, Pair, _saveable

__all__ = ["EntityFidelityFilter"]


class EntityFidelityFilter(Filter):
    """Keeps counterfactuals that keep at least ``min_share`` of their source's entities (case-insensitive).

    ``entities`` maps texts to lists of entity strings, batched: an NER component, or any callable (e.g. a spaCy
    pipeline wrapped as ``lambda texts: [[e.text for e in d.ents] for d in nlp.pipe(texts)]``). A source with no
    entity scores 1."""

    name = "entity_fidelity"

    def __init__(self, entities: Callable[[list[str]], list[list[str]]], min_share: float = 0.5) -> None:
        if not callable(entities):
            raise TypeError(f"entities must be a callable texts -> lists of entities, got {type(entities).__name__}.")
        super().__init__(min_share)
        self.entities, self.min_share = entities, min_share

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from ..generation.contracts import batch_output, string_list

        contract = "expected a list of entity strings per text"
        found = batch_output(self.entities([p.before() for p in pairs]), len(pairs), who="The entity extractor",
                             contract=contract, what="text")
        out = []
        for i, (p, ents) in enumerate(zip(pairs, found)):
            ents = {e.casefold() for e in string_list(ents, who="The entity extractor", index=i, contract=contract)}
            after = p.after().casefold()
            out.append(sum(e in after for e in ents) / len(ents) if ents else 1.0)
        return out

    def components(self) -> dict[str, Any]:
        return {"entities": getattr(self.entities, "__qualname__", type(self.entities).__name__)}

    def init_args(self) -> dict[str, Any] | None:
        return {"entities": self.entities, "min_share": self.min_share} if _saveable(self.entities) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_share": self.min_share}
