"""`MinimalityFilter`: keep a counterfactual whose word edit distance from its source is within bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair

__all__ = ["MinimalityFilter"]


class MinimalityFilter(Filter):
    """Keeps counterfactuals whose normalised word edit distance from the source (0 = same, 1 = nothing shared) is
    in ``[min_distance, max_distance]``. The score is ``1 - distance``."""

    name = "minimality"

    def __init__(self, min_distance: float = 0.0, max_distance: float = 1.0) -> None:
        if not 0.0 <= min_distance <= max_distance <= 1.0:
            raise ValueError(f"Need 0 <= min_distance <= max_distance <= 1, got {min_distance} and {max_distance}.")
        super().__init__(1.0 - max_distance, 1.0 - min_distance)
        self.min_distance, self.max_distance = min_distance, max_distance

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from ..metrics.intrinsic import edit_distance

        d = edit_distance([p.after() for p in pairs], [p.before() for p in pairs])["distances"]
        return [1.0 - x for x in d]

    def init_args(self) -> dict[str, Any] | None:
        return {"min_distance": self.min_distance, "max_distance": self.max_distance}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_distance": self.min_distance, "max_distance": self.max_distance}
