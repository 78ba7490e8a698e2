"""CORE's optional cross-encoder re-ranker: a binary `LabelChecker` over (query, excerpt) pairs,
trained on the same seed pairs as CF-DPR (the counterfactual is positive, the hard negatives are negative)."""

from __future__ import annotations

from typing import Any

from ...components.checker import LabelChecker
from ...schema import TaskSchema

__all__ = ["RERANK_LABELS", "RERANK_SCHEMA", "reranker_rows", "train_reranker"]

#: The re-ranker's labels; COREAugmenter ranks excerpts by the probability of the last one.
RERANK_LABELS = ("other", "counterfactual")
RERANK_SCHEMA = TaskSchema(text_columns=("query", "excerpt"), edit_columns=(), label_column="label",
                           label_names=RERANK_LABELS, task="counterfactual-reranking")


def reranker_rows(triples: Any, *, query_column: str = "query", positive_column: str = "positive",
                  negatives_column: str = "hard_negatives") -> Any:
    """(query, excerpt, label) rows from CF-DPR training triples: one positive and one negative per hard negative.

    Examples:
        >>> from datasets import Dataset
        >>> rows = reranker_rows(Dataset.from_dict({"query": ["good"], "positive": ["bad"], "hard_negatives": [["fine"]]}))
        >>> list(rows["excerpt"]), list(rows["label"])
        (['bad', 'fine'], ['counterfactual', 'other'])
    """
    from datasets import Dataset

    out: dict[str, list[str]] = {"query": [], "excerpt": [], "label": []}
    for row in triples:
        out["query"].append(row[query_column])
        out["excerpt"].append(row[positive_column])
        out["label"].append(RERANK_LABELS[1])
        for negative in row.get(negatives_column) or []:
            out["query"].append(row[query_column])
            out["excerpt"].append(negative)
            out["label"].append(RERANK_LABELS[0])
    return Dataset.from_dict(out)


def train_reranker(base: LabelChecker | str, triples: Any, **kwargs: Any) -> LabelChecker:
    """Train the re-ranker on CF-DPR triples (see `reranker_rows`) with `train_checker`;
    ``kwargs`` go to ``train_checker`` (CORE: 10 epochs, batch 64, lr 2e-5, on BERT-base)."""
    from ...training.checker import train_checker

    if isinstance(base, str):
        base = LabelChecker.from_base(base, RERANK_LABELS)
    checker = train_checker(base, reranker_rows(triples), RERANK_SCHEMA, **kwargs)
    checker.training_info["for_method"] = "core"
    return checker
