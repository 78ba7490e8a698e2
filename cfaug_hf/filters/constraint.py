"""`ConstraintFilter`: the base of the task-constraint filters (NER, RE, NLI)."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair

__all__ = ["ConstraintFilter"]


class ConstraintFilter(Filter):
    """A hard check: keeps a counterfactual when `problem` finds nothing wrong with it, and records the
    problem as the drop reason (``<name>:<problem>`` in the stats). Scores are 1 (kept) or 0."""

    @abc.abstractmethod
    def problem(self, pair: Pair) -> str | None:
        """A short reason the pair breaks the constraint, or None."""

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self.keep(pairs)[1]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        self.reasons = [self.problem(p) for p in pairs]
        return [r is None for r in self.reasons], [float(r is None) for r in self.reasons]

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name}
