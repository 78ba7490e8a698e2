"""`REConstraintFilter`: the source's head and tail markup, texts and order kept."""

from __future__ import annotations

from typing import Any

from .base import Pair, _norm
from .constraint import ConstraintFilter

__all__ = ["REConstraintFilter"]


class REConstraintFilter(ConstraintFilter):
    """Entity constraints of a relation-extraction counterfactual: the head and tail markup intact (one of each),
    the same head and tail text as the source, and the head still before the tail (SemEval numbers the entities in
    reading order, and its labels' direction, ``(e1,e2)`` or ``(e2,e1)``, refers to that order). Set
    ``keep_order=False`` for data whose labels name the head and tail whatever their order.

    Reasons: ``markup``, ``head_changed``, ``tail_changed``, ``order``.
    """

    name = "re_constraints"

    def __init__(self, head: tuple[str, str] = ("<e1>", "</e1>"), tail: tuple[str, str] = ("<e2>", "</e2>"), *,
                 keep_order: bool = True) -> None:
        super().__init__()
        self.head, self.tail, self.keep_order = tuple(head), tuple(tail), keep_order

    def problem(self, pair: Pair) -> str | None:
        from ..text.entities import MarkupError, relation_entities

        col = pair.columns[0]
        try:
            head, tail, head_first = relation_entities(pair.counterfactual[col], self.head, self.tail)
        except MarkupError:
            return "markup"
        old_head, old_tail, old_first = relation_entities(pair.source[col], self.head, self.tail)
        if _norm(head) != _norm(old_head):
            return "head_changed"
        if _norm(tail) != _norm(old_tail):
            return "tail_changed"
        if self.keep_order and head_first != old_first:
            return "order"
        return None

    def init_args(self) -> dict[str, Any] | None:
        return {"head": list(self.head), "tail": list(self.tail), "keep_order": self.keep_order}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "head": list(self.head), "tail": list(self.tail), "keep_order": self.keep_order}
