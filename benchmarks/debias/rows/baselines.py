"""The rows that are not an augmenter: the original data, the human counterfactuals, an equal-size generic
augmentation (EDA) and the claim-only re-weighting baseline."""

from __future__ import annotations

import random
from typing import Any

from scripts.shared_data import cad_nli, cad_sentiment

from ..claim_only import claim_only_weights
from ..configs import CAD_TASKS, CONFIGS, FACT_VERIFICATION, schema_of
from ..registry import row

#: Every CAD training row's human counterfactuals, per task.
HUMAN = {"sentiment": lambda: cad_sentiment("new", "train"), "nli": lambda: cad_nli("revised_combined", "train")}


@row("none", configs=tuple(CONFIGS),
     title="none (original data)")
def none(train: Any, seed: int, task: str) -> Any:
    """The original training data."""
    return train


@row("human", configs=CAD_TASKS,
     title="+ human CAD")
def human(train: Any, seed: int, task: str) -> Any:
    """Original + the human counterfactuals of every row (CAD; sentiment and nli)."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, HUMAN[task]()])


def eda_copy(text: str, rng: random.Random, alpha: float = 0.1) -> str:
    """One EDA-style variant (Wei and Zou 2019) without a thesaurus: random swap, deletion or insertion of words."""
    words = text.split()
    if len(words) < 2:
        return text
    n = max(1, int(alpha * len(words)))
    op = rng.choice(["swap", "delete", "insert"])
    for _ in range(n):
        if op == "swap":
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif op == "delete" and len(words) > 1:
            words.pop(rng.randrange(len(words)))
        else:
            words.insert(rng.randrange(len(words) + 1), rng.choice(words))
    return " ".join(words)


@row("eda", configs=tuple(CONFIGS),
     title="+ EDA (same size)")
def eda(train: Any, seed: int, task: str) -> Any:
    """Original + one EDA-style copy of each row (random swap, deletion, insertion of its own words; the label
    kept): an equal-size generic augmentation."""
    from datasets import concatenate_datasets

    schema = schema_of(task)

    def copy(row: dict, idx: int) -> dict:
        rng = random.Random(f"{seed}-{idx}")
        out = dict(row)
        for col in schema.bias_columns:
            value = row[col]
            out[col] = eda_copy(value, rng) if isinstance(value, str) else [eda_copy(v, rng) for v in value]
        return out

    return concatenate_datasets([train, train.map(copy, with_indices=True)])


@row("reweight", configs=FACT_VERIFICATION,
     title="claim-only re-weighting (Schuster et al.)")
def reweight(train: Any, seed: int, task: str) -> Any:
    """The original data, each example weighted by the inverse of a claim-only model's probability of its label
    (out-of-fold, bag of words; weights normalised to mean 1): the simple, strong non-CDA baseline of Schuster et
    al. (2019) for claim-only bias."""
    return train.add_column("sample_weight", claim_only_weights(train, schema_of(task)))
