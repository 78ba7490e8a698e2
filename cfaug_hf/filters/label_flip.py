"""`LabelFlipFilter`: keep a counterfactual when a label checker predicts its new label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair, _saveable
from .flip_check import FlipCheck

__all__ = ["LabelFlipFilter"]


class LabelFlipFilter(Filter):
    """Keeps a counterfactual that ``checker`` (a `LabelChecker`) reads as its new label, by the one decision of
    `FlipCheck`: a probability of at least ``threshold`` for the new label (default: the checker's calibrated
    ``accept_threshold``), or, with neither set, its top prediction. The score is that probability."""

    name = "label_flip"

    def __init__(self, checker: Any, threshold: float | None = None) -> None:
        super().__init__()
        self.decision = FlipCheck(checker, threshold)
        self.checker, self.threshold = checker, threshold

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self._score(pairs)[0]

    def _score(self, pairs: Sequence[Pair]) -> tuple[list[float], list[bool]]:
        cols = pairs[0].text_columns
        first = [Pair._text(p.counterfactual[cols[0]]) for p in pairs]
        second = [p.counterfactual[cols[1]] for p in pairs] if len(cols) > 1 else None
        values, kept, self.truncated = self.decision.score(first, second, [p.label for p in pairs])
        return values, kept

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        if not pairs:
            return [], []
        values, kept = self._score(pairs)
        return kept, values

    def components(self) -> dict[str, Any]:
        return {"checker": self.checker}

    def init_args(self) -> dict[str, Any] | None:
        return {"checker": self.checker, "threshold": self.threshold} if _saveable(self.checker) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "threshold": self.threshold}
