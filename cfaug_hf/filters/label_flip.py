"""`LabelFlipFilter`: keep a counterfactual when a label checker predicts its new label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair, _saveable

__all__ = ["LabelFlipFilter"]


class LabelFlipFilter(Filter):
    """Keeps a counterfactual that ``checker`` (a `LabelChecker`) labels as intended: a probability
    of at least ``threshold`` for the new label (default: the checker's own ``config.accept_threshold``), or, with
    neither set, its top prediction. The score is that probability."""

    name = "label_flip"

    def __init__(self, checker: Any, threshold: float | None = None) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"LabelFlipFilter threshold must be in [0, 1], got {threshold}.")
        super().__init__()
        self.checker, self.threshold = checker, threshold

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self._probs(pairs)[0]

    def _probs(self, pairs: Sequence[Pair]) -> tuple[list[float], list[bool]]:
        cols = pairs[0].text_columns
        first = [Pair._text(p.counterfactual[cols[0]]) for p in pairs]
        second = [p.counterfactual[cols[1]] for p in pairs] if len(cols) > 1 else None
        probs = self.checker.predict_proba(first, second)
        cut = getattr(self.checker, "last_truncated", None)
        self.truncated = list(cut) if isinstance(cut, list) and len(cut) == len(pairs) else None
        targets = [self.checker.label_id(p.label) for p in pairs]
        return [float(row[t]) for row, t in zip(probs, targets)], [int(row.argmax()) == t for row, t in
                                                                   zip(probs, targets)]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        if not pairs:
            return [], []
        values, top = self._probs(pairs)
        threshold = self.threshold
        if threshold is None:
            threshold = getattr(getattr(self.checker, "config", None), "accept_threshold", None)
        if threshold is None:
            return top, values
        return [v >= threshold for v in values], values

    def components(self) -> dict[str, Any]:
        return {"checker": self.checker}

    def init_args(self) -> dict[str, Any] | None:
        return {"checker": self.checker, "threshold": self.threshold} if _saveable(self.checker) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "threshold": self.threshold}
