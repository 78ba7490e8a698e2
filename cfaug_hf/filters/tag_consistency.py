"""`TagConsistencyFilter`: a tagger trained on the original data finds exactly its entities."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .base import Pair
from .constraint import ConstraintFilter

__all__ = ["TagConsistencyFilter"]


class TagConsistencyFilter(ConstraintFilter):
    """The NER consistency filter: keeps a counterfactual when a small tagger trained on the original data finds
    exactly its entities (same spans, same types). ``tagger`` maps a batch of token lists to tag lists (e.g.
    `cfaug_hf.training.train_tagger`). Reason: ``tags_disagree``."""

    name = "tag_consistency"

    def __init__(self, tagger: Callable[[list[list[str]]], list[list[str]]]) -> None:
        if not callable(tagger):
            raise TypeError(f"tagger must be a callable token lists -> tag lists, got {type(tagger).__name__}.")
        super().__init__()
        self.tagger = tagger

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        from ..text.entities import iob2_spans

        col = pairs[0].text_columns[0] if pairs else ""
        tokens = [list(p.counterfactual[col]) for p in pairs]
        from ..generation.contracts import batch_output, string_list

        contract = "expected one list of tags per token list, a tag per token"
        predicted = batch_output(self.tagger(tokens), len(tokens), who="The tagger", contract=contract) if pairs \
            else []
        self.reasons = []
        for i, (toks, p, pred) in enumerate(zip(tokens, pairs, predicted)):
            if len(string_list(pred, who="The tagger", index=i, contract=contract)) != len(toks):
                raise TypeError(f"The tagger's output {i} has {len(pred)} tags for {len(toks)} tokens; {contract}.")
            same = [(e.start, e.end, e.type) for e in iob2_spans(toks, list(pred))] == \
                [(e.start, e.end, e.type) for e in iob2_spans(toks, p.label.split())]
            self.reasons.append(None if same else "tags_disagree")
        return [r is None for r in self.reasons], [float(r is None) for r in self.reasons]

    def problem(self, pair: Pair) -> str | None:
        self.keep([pair])
        return self.reasons[0]  # type: ignore[index]

    def components(self) -> dict[str, Any]:
        return {"tagger": self.tagger}
