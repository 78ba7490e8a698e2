"""Training data recipes for RACE's models."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["with_nei", "claim_generation_pairs", "pieces_from_pairs"]


def pieces_from_pairs(pairs: Any, *, with_title: bool = True) -> list[str]:
    """Evidence given as (title, sentence) pairs as a list of pieces ("Title: sentence", or the sentences)."""
    return [f"{t}: {s}" if with_title and t else str(s) for t, s in pairs]


def with_nei(dataset: Any, schema: Any, *, seed: int = 0, nei_label: str = "NOT ENOUGH INFO") -> Any:
    """The paper's recipe for a three-way checker when the data has no NOT ENOUGH INFO rows: half the SUPPORTS and
    half the REFUTES rows get a perturbed copy labelled NEI, made with equal probability by removing one evidence
    piece (when there are two or more) or by pairing the claim with another row's evidence. Returns the rows plus
    the copies; labels become names."""
    from datasets import Dataset

    claim_col, ev_col = schema.text_columns
    rows = dataset.to_list()
    rng = random.Random(seed)
    extra = []
    for label in ("SUPPORTS", "REFUTES"):
        idx = [i for i, r in enumerate(rows) if schema.label_name(r[schema.label_column]).upper() == label]
        for i in rng.sample(idx, len(idx) // 2):
            row = dict(rows[i])
            pieces = schema.pieces(row[ev_col])
            if len(pieces) > 1 and rng.random() < 0.5:
                drop = rng.randrange(len(pieces))
                kept = pieces[:drop] + pieces[drop + 1:]
                row[ev_col] = kept if not isinstance(row[ev_col], str) else " ".join(kept)
            else:
                other = rng.randrange(len(rows) - 1)
                other += other >= i
                row[ev_col] = rows[other][ev_col]
            row[schema.label_column] = nei_label
            extra.append(row)
    for r in rows:
        r[schema.label_column] = schema.label_name(r[schema.label_column])
    return Dataset.from_list(rows + extra)


def claim_generation_pairs(dataset: Any, schema: Any, *, separator: str = " ") -> Any:
    """``source`` (the joined evidence) -> ``target`` (the claim) rows from the SUPPORTS instances, for
    `cfaug_hf.training.train_generator` (RACE's E -> c generator)."""
    claim_col, ev_col = schema.text_columns
    sup = dataset.filter(lambda y: schema.label_name(y).upper() == "SUPPORTS", input_columns=schema.label_column)
    return sup.map(lambda c, e: {"source": schema.joined(e, separator), "target": c}, input_columns=[claim_col, ev_col],
                   remove_columns=sup.column_names)
