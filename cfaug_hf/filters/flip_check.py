"""`FlipCheck`: the one decision of whether a counterfactual reads as its new label.

Every method that has a checker asks this one object: the label-flip filter for a whole input, the
edit-until-flipped loop for a whole input after each round and for each unit read alone. One rule for the
threshold, in this order:

1. ``threshold`` as given (a method's ``checker_threshold``, a filter's ``threshold``);
2. else the checker's calibrated ``accept_threshold`` (the shipped checkers carry one, fitted on held-out human
   counterfactuals);
3. else the checker's top prediction.

``margin`` raises the bar (the loop stops editing only with some room over the threshold; with rule 3, the
probability must also reach 0.5 + margin); ``residual`` is the per-unit check: a unit read alone that still gives the
source label at least that probability keeps the input from counting as flipped (1.0: off).

Examples:
    >>> from cfaug_hf.testing import keyword_checker
    >>> check = FlipCheck(keyword_checker({"positive": ["good"], "negative": ["bad"]}, accept_threshold=None))
    >>> check.threshold is None, check.accepts([0.7, 0.4], [True, False])
    (True, [True, False])
    >>> FlipCheck(keyword_checker({"positive": ["good"]}, accept_threshold=0.6), margin=0.1).need
    0.7
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["FlipCheck", "calibrated_threshold", "check_threshold"]


def check_threshold(name: str, value: Any, *, allow_none: bool = True) -> float | None:
    """``value`` as a probability threshold in [0, 1] (or None where allowed); a ``ValueError`` naming ``name``
    otherwise. The one range check of every threshold option."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a probability in [0, 1]{extra}, got {value!r}.")
    return float(value)


def calibrated_threshold(checker: Any) -> float | None:
    """The checker's own calibrated accept threshold (``LabelScoring.accept_threshold``), None when it has none."""
    value = getattr(checker, "accept_threshold", None)
    return check_threshold(f"{type(checker).__name__}.accept_threshold", value)


class FlipCheck:
    """Whether texts read as their target labels, by one rule (see the module): ``threshold`` given, else the
    checker's calibrated one, else its top prediction; ``margin`` over it; ``residual`` for units read alone by
    ``reader`` (default: the checker's sentence checker, else the checker).

    Args:
        checker: a `cfaug_hf.components.protocols.LabelScoring` (``predict_proba``, ``label_id``).
        threshold: the probability of the target a text must reach; None: the checker's calibrated one, or its top
            prediction.
        margin: added to the threshold (the edit-until-flipped loop's ``flip_margin``).
        residual: a unit read alone that gives the source label at least this still carries it (0.5: any unit
            read as the source label; 1.0: off).
        reader: what reads units alone.
    """

    def __init__(self, checker: Any, threshold: float | None = None, *, margin: float = 0.0,
                 residual: float = 1.0, reader: Any = None) -> None:
        if checker is None:
            raise ValueError("FlipCheck needs a checker: it decides whether a text reads as its target label.")
        given = check_threshold("threshold", threshold)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0.0 <= margin < 1.0:
            raise ValueError(f"margin must be in [0, 1), got {margin!r}.")
        if isinstance(residual, bool) or not isinstance(residual, (int, float)) or not 0.5 <= residual <= 1.0:
            raise ValueError(f"residual must be in [0.5, 1] (1.0: off), got {residual!r}.")
        self.checker, self.given, self.margin, self.residual = checker, given, float(margin), float(residual)
        self.threshold = given if given is not None else calibrated_threshold(checker)
        self.reader = reader or getattr(checker, "sentence_checker", None) or checker

    @property
    def need(self) -> float | None:
        """The probability of the target a text must reach; None: the top prediction decides (and, with a margin,
        at least 0.5 + margin)."""
        if self.threshold is None:
            return min(0.99, 0.5 + self.margin) if self.margin else None
        # a margin never asks for more than 0.99 (a threshold given on its own is taken as it is)
        return min(0.99, self.threshold + self.margin) if self.margin else self.threshold

    def accepts(self, values: Sequence[float], top: Sequence[bool]) -> list[bool]:
        """Per text: whether its probability of the target (``values``), and whether the target is the checker's
        top prediction (``top``), pass the decision."""
        need = self.need
        if self.threshold is None:
            return [bool(t) and (need is None or v >= need) for v, t in zip(values, top)]
        return [v >= need for v in values]

    def score(self, first: Sequence[str], second: Sequence[Any] | None,
              targets: Sequence[str]) -> tuple[list[float], list[bool], list[bool] | None]:
        """``(probability of each target, kept, cut)`` for whole inputs: ``cut`` marks inputs the checker cut to its
        length (None when it does not say)."""
        probs = self.checker.predict_proba(list(first), None if second is None else list(second))
        cut = getattr(self.checker, "last_truncated", None)
        cut = list(cut) if isinstance(cut, list) and len(cut) == len(targets) else None
        ids = [self.checker.label_id(t) for t in targets]
        values = [float(row[i]) for row, i in zip(probs, ids)]
        return values, self.accepts(values, [int(row.argmax()) == i for row, i in zip(probs, ids)]), cut

    def flipped(self, probability: float | None, alone: Sequence[float]) -> bool:
        """Whether a whole input whose target probability is ``probability`` counts as flipped, its units read
        alone giving the source label ``alone``: it passes the decision and no unit is left at ``residual`` or
        above. (With the top-prediction rule the probability alone decides here: two labels, so over 0.5.)"""
        if probability is None:
            return False
        need = self.need if self.need is not None else 0.5
        return probability >= need and not self.carrying(alone)

    def carrying(self, alone: Sequence[float]) -> list[int]:
        """The positions of the units that, read alone, still give the source label at ``residual`` or more
        (none when the check is off)."""
        if self.residual >= 1.0:
            return []
        return [k for k, p in enumerate(alone) if p >= self.residual]

    def __repr__(self) -> str:
        return (f"FlipCheck(threshold={self.threshold}, margin={self.margin}, residual={self.residual}, "
                f"checker={type(self.checker).__name__})")
