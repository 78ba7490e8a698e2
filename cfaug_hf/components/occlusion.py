"""Occlusion attribution, shared by every method that needs rationales from a plain classifier (ICDA's sentence
rationales, RACE's evidence and entity rationales): a unit's score is how much leaving it out lowers the
probability of the label being explained.

Examples:
    >>> import numpy as np
    >>> prob_good = lambda texts: np.array([[1 - ("good" in t) * 0.8, ("good" in t) * 0.8] for t in texts])
    >>> drops, full = occlusion_drops(prob_good, [["the food", "was good", "today"]])
    >>> [round(d, 2) for d in drops[0]], int(full[0].argmax())
    ([0.0, 0.8, 0.0], 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["occlusion_drops"]


def occlusion_drops(predict_proba: Callable[..., Any], documents: Sequence[Sequence[str]], *,
                    targets: Sequence[int] | None = None, first: Sequence[str] | None = None,
                    render: Callable[[list[str]], str] | None = None,
                    render_doc: Callable[[int, list[str]], str] | None = None, min_units: int = 1,
                    batch_size: int = 64
                    ) -> tuple[list[list[float]], list[Any]]:
    """For each document (a list of units), the drop in its target label's probability when each unit is left out,
    and the whole document's probabilities.

    Args:
        predict_proba: ``texts -> (n, labels)`` probabilities, or with ``first`` ``(first_texts, texts) -> ...``
            (a pair classifier: the claim stays, the evidence is occluded).
        documents: the units of each document (sentences, evidence pieces, words).
        targets: the label explained per document (default: the one predicted on the whole document).
        first: one fixed first text per document, for pair classifiers.
        render: how the remaining units become a text (default: joined with spaces).
        render_doc: the same, told which document the units are from (``(d, units) -> text``), for documents
            rendered differently (RACE masks entities inside each instance's own evidence).
        min_units: documents with fewer units are only scored whole (their drops are 0).
    """
    import numpy as np

    one = render or " ".join
    draw = render_doc or (lambda d, units: one(units))
    texts: list[str] = []
    owners: list[tuple[int, int]] = []
    for d, doc in enumerate(documents):
        doc = list(doc)
        texts.append(draw(d, doc))
        owners.append((d, -1))
        for s in range(len(doc) if len(doc) >= min_units else 0):
            texts.append(draw(d, doc[:s] + doc[s + 1:]))
            owners.append((d, s))
    chunks = []
    for i in range(0, len(texts), batch_size):
        batch = texts[i:i + batch_size]
        if first is None:
            chunks.append(np.asarray(predict_proba(batch)))
        else:
            chunks.append(np.asarray(predict_proba([first[d] for d, _ in owners[i:i + batch_size]], batch)))
    probs = np.concatenate(chunks) if chunks else np.zeros((0, 2))
    full = [None] * len(documents)
    for i, (d, s) in enumerate(owners):
        if s == -1:
            full[d] = probs[i]
    drops: list[list[float]] = [[0.0] * len(doc) for doc in documents]
    for i, (d, s) in enumerate(owners):
        if s >= 0:
            c = int(full[d].argmax()) if targets is None else int(targets[d])
            drops[d][s] = float(full[d][c] - probs[i][c])
    return drops, full
