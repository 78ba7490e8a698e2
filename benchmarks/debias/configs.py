"""The five configurations: a task's training rows, its schema and its test sets (data from ../shared/data, see
its MANIFEST.md). Which training-set rows apply to a configuration each row says itself (`benchmarks.debias.rows`).

  sentiment  train CAD IMDb orig/train (1707); test orig/test, new/test (human counterfactuals), contrast set dev
  nli        train CAD SNLI original/train; test original/test, revised_hypothesis/test, revised_premise/test
  fv         train FEVEROUS claims+evidence (80% of 2962); test the other 20% and FEVER-Symmetric v0.2 dev
  fever      the CrossAug paper's setup for claim-only bias: train FEVER claims+evidence in FEVER's own format (90%
             of the 10746 decontaminated FEVER paper-dev rows); test the held-out 10% and FEVER-Symmetric v0.2 dev,
             also split into the rows a claim-only model gets right and wrong (`benchmarks.debias.claim_only`)
  fv-ood     RACE's out-of-domain setup: train FEVEROUS (as fv); test the FEVEROUS 20%, a seeded 2000 of the FEVER
             paper dev set, VitaminC real (the 100 cases held out from the shipped CrossAug components: 400 rows)
             and FM2 dev (1169)
"""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema
from scripts.shared_data import (cad_nli, cad_sentiment, fever_paper, fever_paper_sample, fever_symmetric, feverous,
                                 fm2, imdb_contrast, vitaminc_rows)

#: The configurations of each kind of task, for the rows that apply to a kind.
CAD_TASKS = ("sentiment", "nli")
FACT_VERIFICATION = ("fv", "fever", "fv-ood")


def schema_of(task: str) -> TaskSchema:
    """The schema of configuration ``task`` (without loading its data)."""
    if task == "sentiment":
        return TaskSchema.sentiment(id_column="id")
    return TaskSchema.nli(id_column="id") if task == "nli" else TaskSchema.fact_verification(id_column="id")


def sentiment_config() -> dict[str, Any]:
    return {"schema": schema_of("sentiment"), "train": cad_sentiment("orig", "train"),
            "tests": {"orig/test": cad_sentiment("orig", "test"), "new/test (CAD)": cad_sentiment("new", "test"),
                      "contrast dev": imdb_contrast("contrast")}}


def nli_config() -> dict[str, Any]:
    return {"schema": schema_of("nli"), "train": cad_nli("original", "train"),
            "tests": {"original/test": cad_nli("original", "test"),
                      "revised_hypothesis/test": cad_nli("revised_hypothesis", "test"),
                      "revised_premise/test": cad_nli("revised_premise", "test")}}


def fv_config() -> dict[str, Any]:
    train, dev = feverous()
    return {"schema": schema_of("fv"), "train": train,
            "tests": {"feverous dev": dev, "fever-symmetric": fever_symmetric()}}


def fever_config() -> dict[str, Any]:
    from .claim_only import RIGHT, WRONG, split_by_claim_only

    train, dev = fever_paper()
    symmetric = fever_symmetric()
    right, wrong = split_by_claim_only(train, symmetric, schema_of("fever"))
    return {"schema": schema_of("fever"), "train": train,
            "tests": {"fever held-out": dev, "fever-symmetric": symmetric, RIGHT: right, WRONG: wrong}}


def fv_ood_config() -> dict[str, Any]:
    """RACE's out-of-domain table (the paper's Table 3 shape): train on FEVEROUS, test in domain and on three
    other fact-verification sets. VitaminC is its 100 held-out cases only: the shipped CrossAug generator and
    checker were trained on the other cases."""
    train, dev = feverous()
    return {"schema": schema_of("fv-ood"), "train": train,
            "tests": {"feverous dev": dev, "fever paper dev (2000)": fever_paper_sample(2000),
                      "vitaminc real (held-out cases)": vitaminc_rows("heldout").remove_columns("case_id"),
                      "fm2 dev": fm2("dev")}}


def capped(train: Any, max_train: int | None) -> Any:
    """``--max-train``: a seeded ``max_train`` of the training rows (all of them when there are no more)."""
    if max_train and len(train) > max_train:
        return train.shuffle(seed=0).select(range(max_train))
    return train


CONFIGS = {"sentiment": sentiment_config, "nli": nli_config, "fv": fv_config, "fever": fever_config,
           "fv-ood": fv_ood_config}
