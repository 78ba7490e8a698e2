"""RACE's rows: original + RACE's claim and evidence counterfactuals of a seeded sample of ``--augment-limit``
training rows (all of them without one), decoding reduced to beam 4 / 2 candidates / 48 tokens (`RACE_DECODING`),
SpacyNER; the share of RACE's claims a separate checker (the shipped VitaminC one) labels with their target is
recorded.

* ``race`` (fv-ood): the checker and claim generator benchmarks/race_intrinsic.py trains on these training rows and
  caches;
* ``race (shipped)`` (fever): the evidence -> claim generator and three-way checker shipped in the package (trained
  on FEVEROUS, never on FEVER), with the library's other defaults: RACE as a user gets it on FEVER-format data.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from cfaug_hf import TaskSchema

from .. import settings
from ..augmented import (archived_run, augment_subset, cached_augment, component_digests, record_equivalence,
                         with_counterfactuals)
from ..configs import CONFIGS, capped, schema_of
from ..registry import archive_check, row


#: RACE's decoding in the benchmark: the paper's beam 30 / 10 candidates / 96 tokens cost about 10 s a claim on two
#: CPU cores (RACEConfig's defaults keep the paper's); this is race_intrinsic.py's reduced setting.
RACE_DECODING = {"num_beams": 4, "num_candidates": 2, "max_new_tokens": 48}


def race_counterfactuals(train: Any) -> Any:
    """RACE's counterfactuals of (a seeded sample of --augment-limit of) the FEVEROUS training rows: SpacyNER, the
    3-way MiniLM checker and the SmolLM2 + LoRA evidence-to-claim generator that benchmarks/race_intrinsic.py
    trains on these training rows and caches; resumable parts cached by data and augmenter fingerprints."""
    from benchmarks.race_intrinsic import checker_model, generator_model

    schema = TaskSchema.fact_verification(id_column="id")
    return race_of(train, generator_model(train, schema, 180), checker_model(train, schema, 180),
                   TaskSchema.fact_verification(nei=True, id_column="id"), "race", "RACE")


#: The row that runs RACE with the shipped components, and the name its whole runs are archived under.
SHIPPED, SHIPPED_ARCHIVE = "race (shipped)", "race_shipped"


def run_prefix(name: str) -> str:
    """The cache and archive prefix of the row ``name``: ``race (shipped)`` -> ``race-shipped``."""
    return name.replace(" (", "-").rstrip(")")


def shipped_counterfactuals(train: Any) -> Any:
    """RACE's counterfactuals with the generator and checker shipped in the package; a run over every training row
    is archived (`settings.PARTS_ARCHIVE`: 36 minutes of generation for the FEVER yardstick's 2000 rows)."""
    return race_of(train, "default", "default", schema_of("fever"), SHIPPED, "RACE (shipped)",
                   archive=settings.PARTS_ARCHIVE / SHIPPED_ARCHIVE)


#: The FEVER yardstick's training rows (``--max-train``) whose RACE run is archived.
FEVER_ROWS = 2000


@archive_check("fever_race_shipped")
def check_fever_race_shipped(rows: int = 10) -> dict[str, Any]:
    """RACE with the shipped components over the FEVER yardstick's 2000 training rows"""
    train = capped(CONFIGS["fever"]()["train"], FEVER_ROWS)
    augmenter = race_augmenter(train, "default", "default", schema_of("fever"))
    pattern = archived_run(SHIPPED_ARCHIVE, run_prefix(SHIPPED), train._fingerprint)
    return record_equivalence(augmenter, train.select(range(rows)), pattern)  # part 0: the first 10 rows


def race_augmenter(train: Any, generator: Any, checker: Any, schema: TaskSchema) -> Any:
    """RACE as the rows run it, fitted on ``train`` (its in-dataset replacements come from every training row)."""
    from cfaug_hf import RACEAugmenter
    from cfaug_hf.components.ner import SpacyNER
    from cfaug_hf.pretrained import MINILM

    augmenter = RACEAugmenter(generator, checker, SpacyNER(), schema, embedder=MINILM, keep_original=False,
                              **RACE_DECODING)
    augmenter.fit(train)
    return augmenter


def race_of(train: Any, generator: Any, checker: Any, schema: TaskSchema, name: str, what: str,
            archive: Any = None) -> Any:
    """RACE's counterfactuals of `augment_subset` (rows of ``schema``) with ``generator`` and ``checker``
    (``"default"``: the shipped ones), cached in resumable parts by data and augmenter fingerprints (and in
    ``archive`` when every row is augmented); what was made is noted under ``name``."""
    subset, _ = augment_subset(train)
    augmenter = race_augmenter(train, generator, checker, schema)
    whole = len(subset) == len(train)
    cfs = cached_augment(augmenter, subset, run_prefix(name), what, part_rows=10,
                         archive=archive if whole else None)
    cfs = cfs.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    settings.NOTES[name] = {"rows_augmented": len(subset), "ner": "SpacyNER (en_core_web_sm)",
                            "decoding": RACE_DECODING, "components": component_digests(augmenter),
                            "counterfactuals": dict(Counter(cfs["cf_kind"])),
                            "flip_rate_by_separate_checker": {k: separate_flip_rate(cfs, k)
                                                              for k in ("race_claim", "race_evidence")}}
    return cfs


def separate_flip_rate(cfs: Any, kind: str) -> dict[str, Any]:
    """The share of ``kind`` counterfactuals that a checker the method never consulted labels with the
    counterfactual's label: the shipped fact-verification checker (MiniLM on VitaminC pairs), a judge independent
    of RACE's own (the paper judged with a separate RoBERTa). Not used for CrossAug, which filters with it."""
    from cfaug_hf.components.checker import default_checker

    rows = cfs.filter(lambda k: k == kind, input_columns="cf_kind")
    if not len(rows):
        return {"rows": 0}
    predicted = default_checker("fact-verification").predict(rows["claim"], [list(e) for e in rows["evidence"]])
    return {"rows": len(rows), "checker": "shipped fact-verification checker (MiniLM, VitaminC pairs)",
            "flip_rate": round(sum(p == y for p, y in zip(predicted, rows["label"])) / len(rows), 4)}


def race_claims(train: Any) -> Any:
    return race_counterfactuals(train).filter(lambda kind: kind == "race_claim", input_columns="cf_kind")


@row("race", configs=("fv-ood",), probe=("flip rate of RACE's claims (c', E labelled with the target)", race_claims),
     title="+ RACE (claim and evidence counterfactuals)")
def race_rows(train: Any, seed: int = 0, task: str = "fv") -> Any:
    """Original rows + RACE's claim and evidence counterfactuals."""
    return with_counterfactuals(train, race_counterfactuals(train))


@row(SHIPPED, configs=("fever",), title="+ RACE (shipped generator and checker)")
def race_shipped_rows(train: Any, seed: int = 0, task: str = "fever") -> Any:
    """Original rows + RACE's claim and evidence counterfactuals with the generator and three-way checker shipped in
    the package (trained on FEVEROUS), decoding reduced to beam 4 / 2 candidates / 48 tokens."""
    return with_counterfactuals(train, shipped_counterfactuals(train))
