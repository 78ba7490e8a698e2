"""The base of every filter: the (source, counterfactual) pair a filter sees, and `Filter`."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import registry
from ..fingerprint import code_digest, digest_json, digest_object
from ..sharing.credentials import scrub_text

__all__ = ["Pair", "Filter"]


def _saveable(obj: Any) -> bool:
    """A cfaug component (it can be saved beside the augmenter or referenced on the Hub)."""
    return getattr(obj, "component_type", None) in registry.COMPONENTS


@dataclass
class Pair:
    """One candidate: the source row's values, the counterfactual's values and labels, the columns the method
    edited (``columns``) and all the schema's text columns, in the order a pair classifier reads them."""

    source: dict[str, Any]
    counterfactual: dict[str, Any]
    label: str
    original_label: str
    columns: tuple[str, ...]
    text_columns: tuple[str, ...]
    group: int  # index of the source row in the batch (TopK keeps the best k per group)

    @staticmethod
    def _text(value: Any) -> str:
        return value if isinstance(value, str) else " ".join(value)

    def before(self) -> str:
        return " ".join(self._text(self.source[c]) for c in self.columns)

    def after(self) -> str:
        return " ".join(self._text(self.counterfactual[c]) for c in self.columns)


class Filter(abc.ABC):
    """Scores pairs and keeps those whose score is in ``[low, high]``. Subclasses set ``name`` and ``scores``.

    A filter that can say why it dropped a pair sets ``reasons`` in `keep` (one short string or None per
    pair); the augmenter records each dropped pair's reason as a ``<name>:<reason>`` event, so it is counted in the
    stats, the report and the dataset card (e.g. ``shortcut_balance:not``).
    """

    name: ClassVar[str] = ""
    reasons: list[str | None] | None = None
    #: Set by `keep` when a model cut some pairs' input to its maximum length: one flag per pair (counted in
    #: the rows' outcomes as ``truncated:<name>_input``).
    truncated: list[bool] | None = None

    def __init__(self, low: float = float("-inf"), high: float = float("inf")) -> None:
        self.low, self.high = low, high

    @abc.abstractmethod
    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        """One score per pair (higher is better for every built-in filter)."""

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        values = self.scores(pairs) if pairs else []
        return [self.low <= v <= self.high for v in values], values

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        registry.register_filter(cls)

    def components(self) -> dict[str, Any]:
        """Models the filter uses, for the augmenter's fingerprint and card."""
        return {}

    def init_args(self) -> dict[str, Any] | None:
        """The constructor arguments that rebuild this filter when an augmenter is saved: JSON values, cfaug
        components (saved beside the augmenter, or referenced on the Hub) and other filters. None when the filter
        holds something that cannot be saved (a Python callable, a dataset): loading the augmenter then asks for
        ``filters=``."""
        return None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "low": self.low, "high": self.high}

    def fingerprint(self) -> str:
        return digest_json({"code": code_digest(type(self)), "config": self.get_config_dict(),
                            "components": {k: digest_object(v) for k, v in sorted(self.components().items())}})

    def __repr__(self) -> str:
        return scrub_text(f"{type(self).__name__}({self.get_config_dict()})")


def _norm(text: str) -> str:
    """Text compared without case or spacing differences."""
    return " ".join(text.casefold().split())
