"""What an augmenter needs of its parts, as protocols: any object with these methods serves (a `LabelChecker`, a
`RationaleSelector`, an `EntityRecognizer`, or your own), and constructors say so in their types instead of probing
for attributes. `cfaug_hf.generation.TextGenerator` is the same for text generators.

Examples:
    >>> from cfaug_hf.components.ner import LexiconNER
    >>> isinstance(LexiconNER({"paris": "GPE"}), EntityRecognizing), isinstance("paris", EntityRecognizing)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["LabelScoring", "RationaleSelecting", "EntityRecognizing"]


@runtime_checkable
class LabelScoring(Protocol):
    """Scores each label of a text (or a pair of texts): the flip checkers, RACE's ad-check, CORE's reranker."""

    label_names: Sequence[str]

    def predict_proba(self, first: Sequence[str], second: Sequence[Any] | None = None) -> Any:
        """Probabilities of each label (rows in input order, columns in ``label_names`` order)."""

    def label_id(self, label: str) -> int:
        """The column of ``label`` (any case) in `predict_proba`'s output."""

    # Optional: ``accept_threshold`` (float or None), the calibrated probability a counterfactual's label must reach,
    # which `cfaug_hf.filters.FlipCheck` uses when no threshold is given; without it the top prediction decides.


@runtime_checkable
class RationaleSelecting(Protocol):
    """Picks each document's rationale sentences and predicts its label (ICDA's selector, occlusion)."""

    def select(self, documents: Sequence[Any], labels: Sequence[int], **kwargs: Any) -> Any:
        """A `cfaug_hf.methods.icda.SelectionResult`: the selected sentences, the predictions and their errors."""


@runtime_checkable
class EntityRecognizing(Protocol):
    """Finds the named entities of texts (RACE's explainer, the LLM method's entity-preserving edits)."""

    def __call__(self, texts: Sequence[str]) -> list[list[Any]]:
        """Each text's mentions (`cfaug_hf.components.ner.Mention`)."""

    def entity_texts(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's entity strings."""
