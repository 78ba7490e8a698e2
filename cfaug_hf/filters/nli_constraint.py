"""`NLIConstraintFilter`: the premise kept, and a hypothesis that is not the premise."""

from __future__ import annotations

from typing import Any

from .base import Pair, _norm
from .constraint import ConstraintFilter

__all__ = ["NLIConstraintFilter"]


class NLIConstraintFilter(ConstraintFilter):
    """An NLI counterfactual that edits one side keeps the other as it was, and the edited side is not a copy of the
    kept one (a hypothesis that copies the premise is entailed whatever the target). ``side``: the sentence the
    augmenter edits, ``"hypothesis"`` (the default) or ``"premise"``. Reasons: ``premise_changed`` and
    ``copied_premise`` (hypothesis side), ``hypothesis_changed`` and ``copied_hypothesis`` (premise side).

    Examples:
        >>> from cfaug_hf.filters import Pair
        >>> src = {"premise": "A dog runs.", "hypothesis": "An animal moves."}
        >>> pair = Pair(src, {**src, "premise": "A dog sleeps."}, "entailment", "contradiction", ("premise",),
        ...             ("premise", "hypothesis"), 0)
        >>> NLIConstraintFilter(side="premise").keep([pair])[0], NLIConstraintFilter().keep([pair])[0]
        ([True], [False])
    """

    name = "nli_constraints"

    def __init__(self, side: str = "hypothesis") -> None:
        super().__init__()
        if side not in ("hypothesis", "premise"):
            raise ValueError(f"NLIConstraintFilter side must be 'hypothesis' or 'premise', got {side!r}.")
        self.side = side

    def init_args(self) -> dict[str, Any] | None:
        return {} if self.side == "hypothesis" else {"side": self.side}

    def get_config_dict(self) -> dict[str, Any]:
        # the hypothesis side's config is what it was before there was a side: saved fingerprints stay
        return {"filter": self.name, **({"side": self.side} if self.side != "hypothesis" else {})}

    def problem(self, pair: Pair) -> str | None:
        premise, hypothesis = pair.text_columns[:2]
        kept, edited = (premise, hypothesis) if self.side == "hypothesis" else (hypothesis, premise)
        role = "premise" if self.side == "hypothesis" else "hypothesis"  # reasons name roles, not column names
        if _norm(Pair._text(pair.counterfactual[kept])) != _norm(Pair._text(pair.source[kept])):
            return f"{role}_changed"
        if _norm(Pair._text(pair.counterfactual[edited])) == _norm(Pair._text(pair.source[kept])):
            return f"copied_{role}"
        return None
