"""`TopK`: a source row's best k counterfactuals by the summed scores of other filters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair

__all__ = ["TopK"]


class TopK(Filter):
    """Keeps each source row's ``k`` counterfactuals with the highest summed (weighted) scores of ``filters``
    (RACE keeps the one with the best semantic + entity fidelity). The inner filters only score here; add them
    to the stack on their own to apply their bounds too."""

    name = "top_k"

    def __init__(self, filters: Sequence[Filter], k: int = 1, weights: Sequence[float] | None = None) -> None:
        if k < 1:
            raise ValueError(f"TopK k must be >= 1, got {k}.")
        if not filters:
            raise ValueError("TopK needs at least one filter to score with.")
        weights = list(weights) if weights is not None else [1.0] * len(filters)
        if len(weights) != len(filters):
            raise ValueError(f"Got {len(weights)} weights for {len(filters)} filters.")
        super().__init__()
        self.filters, self.k, self.weights = list(filters), k, weights

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        total = [0.0] * len(pairs)
        for f, w in zip(self.filters, self.weights):
            for i, s in enumerate(f.scores(pairs)):
                total[i] += w * s
        return total

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        values = self.scores(pairs) if pairs else []
        by_group: dict[int, list[int]] = {}
        for i, p in enumerate(pairs):
            by_group.setdefault(p.group, []).append(i)
        kept = [False] * len(pairs)
        for members in by_group.values():
            for i in sorted(members, key=lambda i: (-values[i], i))[:self.k]:
                kept[i] = True
        return kept, values

    def components(self) -> dict[str, Any]:
        return {f"{i}.{k}": v for i, f in enumerate(self.filters) for k, v in f.components().items()}

    def init_args(self) -> dict[str, Any] | None:
        if any(f.init_args() is None for f in self.filters):
            return None
        return {"filters": list(self.filters), "k": self.k, "weights": self.weights}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "k": self.k, "weights": self.weights,
                "scored_by": [f.get_config_dict() for f in self.filters]}
