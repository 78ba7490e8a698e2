"""`NLIConstraintFilter`: the premise kept, and a hypothesis that is not the premise."""

from __future__ import annotations

from typing import Any

from .base import Pair, _norm
from .constraint import ConstraintFilter

__all__ = ["NLIConstraintFilter"]


class NLIConstraintFilter(ConstraintFilter):
    """An NLI counterfactual that edits the hypothesis keeps the premise as it was, and its hypothesis is not a copy
    of the premise (which would be entailed whatever the target). Reasons: ``premise_changed``,
    ``copied_premise``."""

    name = "nli_constraints"

    def init_args(self) -> dict[str, Any] | None:
        return {}

    def problem(self, pair: Pair) -> str | None:
        premise, hypothesis = pair.text_columns[:2]
        if _norm(Pair._text(pair.counterfactual[premise])) != _norm(Pair._text(pair.source[premise])):
            return "premise_changed"
        if _norm(Pair._text(pair.counterfactual[hypothesis])) == _norm(Pair._text(pair.source[premise])):
            return "copied_premise"
        return None
