"""Does augmentation make a classifier rely less on shortcuts? Train on original vs augmented data, test in-domain
and on contrast / out-of-distribution sets, over several seeds.

    python -m benchmarks.debias --config sentiment|nli|fv|all [--model bow|MODEL_ID_OR_PATH] [--seeds 0 1 2]
                                [--rows none human eda crossaug] [--max-length 256] [--epochs 3]

Configurations (data from ../shared/data, see its MANIFEST.md):
  sentiment  train CAD IMDb orig/train (1707); test orig/test, new/test (human counterfactuals), contrast set dev
  nli        train CAD SNLI original/train; test original/test, revised_hypothesis/test, revised_premise/test
  fv         train FEVEROUS claims+evidence (80% of 2962); test the other 20% and FEVER-Symmetric v0.2 dev
  fever      the CrossAug paper's setup for claim-only bias: train FEVER claims+evidence in FEVER's own format (90%
             of the 10746 decontaminated FEVER paper-dev rows); test the held-out 10% and FEVER-Symmetric v0.2 dev
  fv-ood     RACE's out-of-domain setup: train FEVEROUS (as fv); test the FEVEROUS 20%, a seeded 2000 of the FEVER
             paper dev set, VitaminC real (the 100 cases held out from the shipped CrossAug components: 400 rows)
             and FM2 dev (1169)
Rows (training sets):
  none       the original training data
  human      original + the human counterfactuals (CAD; sentiment and nli)
  eda        original + one EDA-style copy of each row (random swap, deletion, insertion of its own words; the
             label kept): an equal-size generic augmentation
  reweight   the original data, each example weighted by the inverse of a claim-only model's probability of its
             label (out-of-fold, bag of words; weights normalised to mean 1): the simple, strong non-CDA baseline
             of Schuster et al. (2019) for claim-only bias (fv, fever)
  crossaug   original + CrossAug counterfactuals (fv, fever) from the library's default negative-claim generator
             (the recipe on the shipped VitaminC pairs; never FEVER-Symmetric, a test set here),
             trained once under a 300 s budget and cached in benchmarks/.cache/ (the folder
             benchmarks/generator_base.py saves it to), as is the augmented training set
             (--crossaug-data FOLDER reuses one saved elsewhere). With ``none`` in the same run, the flip rate
             of the generated claims is recorded: the share of c'+e rows the ``none`` model labels REFUTES.
             --augment-limit N augments a seeded sample of N training rows (a CPU-sized run)
  crossaug+checker
             the same counterfactuals passed through the shipped flip checker (CrossAugAugmenter's default:
             kept when the VitaminC-trained checker's top label over (claim, evidence) is the counterfactual's)
  crossaug+balance
             the same CrossAug output passed through cfaug_hf.filters.ShortcutBalanceFilter (counterfactuals whose
             claim words would become significantly label-correlated are dropped; the words are recorded)
  race       original + RACE's claim and evidence counterfactuals (fv-ood) of a seeded sample of --augment-limit
             training rows: SpacyNER, the checker and claim generator benchmarks/race_intrinsic.py trains and caches,
             decoding reduced to beam 4 / 2 candidates / 48 tokens (RACE_DECODING); the share of RACE's claims a
             separate checker (the shipped VitaminC one) labels with their target is recorded
  crossaug-shipped
             original + CrossAug as it ships (CrossAugAugmenter("default"): packaged generator and flip checker) of
             the same rows (fv-ood)
  icda       original + ICDA rationale swaps (sentiment): RationaleSwapAugmenter with occlusion rationales from
             a bag-of-words classifier trained on the same data (one sentence per review; the plan is seeded
             per run)
  core, cf-dpr, llm-edit
             original + CORE counterfactuals (sentiment, nli): retrieve with the CF-DPR encoder and corpus index
             that benchmarks/core_retrieval.py trains and caches, then edit with the offline SmolLM2-135M editor
             (core); the best retrieved excerpt itself (cf-dpr); the editor without retrieval (llm-edit).
             Sentiment edits the one sentence of each review that a bag-of-words model finds most polar; NLI the
             hypothesis of entailment/contradiction rows. --augment-limit N edits a seeded sample of N rows.
             A ``+checker`` suffix (core+checker, llm-edit+checker) passes the same counterfactuals through the
             flip checker shipped for the task, COREAugmenter's default
  human (same rows)
             original + the human counterfactuals of the same rows CORE edits (the fair ceiling with
             --augment-limit)
  editor+checker, amplify, human (quarter), human (editor rows)
             the editors learned from human counterfactuals (sentiment, nli): the shipped editor was trained on
             the CAD pairs of a seeded annotated quarter of the training rows (scripts/build_editors.py);
             editor+checker is original + its counterfactuals of rows outside that quarter (a seeded sample of
             --augment-limit of them), through COREAugmenter(mode="editor_only") with its defaults (the shipped
             flip checker picks among 4 candidates and filters); amplify adds the quarter's human counterfactuals
             too (the amplification protocol); human (quarter) is original + the quarter's human counterfactuals
             only; human (editor rows) is original + the human counterfactuals of the rows the editor rewrote;
             crossfit gives every row a machine counterfactual from an editor that never saw its human pair (the
             shipped editor for rows outside the quarter, an editor trained on a second quarter, built by
             scripts/build_editors.py --quarter 1, for the quarter's rows; with --augment-limit N, N and N/3 of
             them); core+editor is CORE proper with the shipped editor on the editor+checker row's rows (CF-DPR
             excerpts retrieved for each row, their keywords in the editor's input; benchmarks/core_retrieval.py
             builds the encoder and index). --editor-data sentiment=FOLDER (or nli=) reuses counterfactuals the
             editor wrote before (sentiment_q1 / nli_q1: the cross-fitting editor's; --core-editor-data sentiment=FOLDER
             or nli=: core+editor's)
Models: ``bow`` is TF-IDF word 1-2 grams per text column + logistic regression (minutes for everything);
``frozen`` is the frozen-encoder yardstick (benchmarks/frozen_yardstick.py: MiniLM vectors computed once and cached,
then a ``--head lr`` or ``mlp`` trained per seed on a bootstrap sample of the rows); any other value is a Hugging
Face model id or folder fine-tuned with Trainer (default MiniLM, resolved offline).
Each table is checked for validity (``VALIDITY``): a yardstick counts for a task only if the human counterfactuals
(IMDb, SNLI) or the claim-only re-weighting (FEVER) beat ``none`` on the contrast set by more than 2 sd of the
difference (and, for FEVER, the held-out accuracy is at least 80%). A table whose checks fail says so in its heading.
Writes benchmarks/results/debias_<config>_<model>.{md,json}, with the git commit, date and settings.
"""

from __future__ import annotations

from benchmarks.harness import CACHE, ROOT
import argparse
import json
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.leaderboard import validity
from scripts.shared_data import (cad_nli, cad_sentiment, fever_paper, fever_paper_sample, fever_symmetric, feverous, fm2,
                         imdb_contrast, vitaminc_rows)

from cfaug_hf import TaskSchema

#: Where this run's tables go (``--results-dir``).
RESULTS = ROOT / "benchmarks" / "results"
#: Counterfactuals written earlier, reused instead of generating (``--crossaug-data``, ``--editor-data``,
#: ``--core-editor-data``): "crossaug", and per editor row its key ("sentiment", "nli_q1", "core_sentiment").
REUSE: dict[str, str] = {}
#: The commit a copy of the tree run elsewhere measured (``--commit``).
COMMIT: str | None = None
#: Committed copies of the editors' finished generation parts (the cache is not kept between sessions).
PARTS_ARCHIVE = ROOT / "benchmarks" / "results" / "editor_parts"
#: Augmenter fingerprints (first 12 hex digits) whose output was checked equal to an archived older one's
#: (``--check-parts TASK``): their parts are restored from the older archive. A fingerprint covers the library's
#: code, so a refactoring that changes no output would otherwise throw hours of generation away.
EQUIVALENT = PARTS_ARCHIVE / "equivalent.json"


# -------------------------------------------------------------------------------------------- configurations
def sentiment_config() -> dict[str, Any]:
    from datasets import concatenate_datasets

    train = cad_sentiment("orig", "train")
    return {"schema": TaskSchema.sentiment(id_column="id"), "train": train,
            "human": lambda train, seed: concatenate_datasets([train, cad_sentiment("new", "train")]),
            "icda": icda_occlusion, **core_rows("sentiment"), **editor_table_rows("sentiment"),
            "tests": {"orig/test": cad_sentiment("orig", "test"), "new/test (CAD)": cad_sentiment("new", "test"),
                      "contrast dev": imdb_contrast("contrast")}}


def nli_config() -> dict[str, Any]:
    from datasets import concatenate_datasets

    train = cad_nli("original", "train")
    return {"schema": TaskSchema.nli(id_column="id"), "train": train,
            "human": lambda train, seed: concatenate_datasets([train, cad_nli("revised_combined", "train")]),
            **core_rows("nli"), **editor_table_rows("nli"),
            "tests": {"original/test": cad_nli("original", "test"),
                      "revised_hypothesis/test": cad_nli("revised_hypothesis", "test"),
                      "revised_premise/test": cad_nli("revised_premise", "test")}}


def fv_config() -> dict[str, Any]:
    train, dev = feverous()
    return {"schema": TaskSchema.fact_verification(id_column="id"), "train": train, "human": None,
            **CROSSAUG_ROWS, "tests": {"feverous dev": dev, "fever-symmetric": fever_symmetric()}}


def fever_config() -> dict[str, Any]:
    train, dev = fever_paper()
    return {"schema": TaskSchema.fact_verification(id_column="id"), "train": train, "human": None,
            **CROSSAUG_ROWS, "tests": {"fever held-out": dev, "fever-symmetric": fever_symmetric()}}


def fv_ood_config() -> dict[str, Any]:
    """RACE's out-of-domain table (the paper's Table 3 shape): train on FEVEROUS, test in domain and on three
    other fact-verification sets. VitaminC is its 100 held-out cases only: the shipped CrossAug generator and
    checker were trained on the other cases."""
    train, dev = feverous()
    return {"schema": TaskSchema.fact_verification(id_column="id"), "train": train, "human": None,
            "race": race_rows, "crossaug-shipped": shipped_crossaug_rows,
            "probes": {"flip rate of RACE's claims (c', E labelled with the target)": ("race", race_claims),
                       "flip rate of CrossAug's claims (c', e labelled REFUTES)":
                           ("crossaug-shipped", shipped_crossaug_claims)},
            "tests": {"feverous dev": dev, "fever paper dev (2000)": fever_paper_sample(2000),
                      "vitaminc real (held-out cases)": vitaminc_rows("heldout").remove_columns("case_id"),
                      "fm2 dev": fm2("dev")}}


CONFIGS = {"sentiment": sentiment_config, "nli": nli_config, "fv": fv_config, "fever": fever_config,
           "fv-ood": fv_ood_config}


# --------------------------------------------------------------------------------------------- augmentations
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


def eda(train: Any, schema: TaskSchema, seed: int) -> Any:
    from datasets import concatenate_datasets

    def copy(row: dict, idx: int) -> dict:
        rng = random.Random(f"{seed}-{idx}")
        out = dict(row)
        for col in schema.bias_columns:
            value = row[col]
            out[col] = eda_copy(value, rng) if isinstance(value, str) else [eda_copy(v, rng) for v in value]
        return out

    return concatenate_datasets([train, train.map(copy, with_indices=True)])


def default_generator() -> Any:
    """The library's default negative-claim generator (recipe defaults, 300 s budget), trained once and cached."""
    from cfaug_hf import Generator
    from cfaug_hf.methods.crossaug.recipes import negative_claim_generator

    gen_dir = CACHE / "generator-smollm2-lora-vitaminc"  # where benchmarks/generator_base.py saves it
    if (gen_dir / "cfaug_generator.json").is_file():
        return Generator.from_pretrained(gen_dir)
    print("Training the default negative-claim generator (300 s on 2 CPU cores)...")
    generator = negative_claim_generator(max_steps=10_000, max_seconds=300)
    generator.save_pretrained(gen_dir)
    return generator


def crossaug_counterfactuals(train: Any) -> Any:
    """CrossAug's counterfactuals (provenance columns kept) of ``train``, or of a seeded sample of --augment-limit
    of its rows, made with the default generator and no checker (the paper's method), cached by the data's and the
    augmenter's fingerprints (the same for every seed: the classifier's seed varies, the augmented set does not).
    The checker and balancing rows filter these same counterfactuals."""
    from datasets import load_from_disk

    from cfaug_hf import CrossAugAugmenter

    generator = default_generator()
    generator.config.num_return_sequences = 5
    augmenter = CrossAugAugmenter(generator, TaskSchema.fact_verification(id_column="id"), reject_deletions=True,
                                  checker=None)
    subset, _ = augment_subset(train)
    out_dir = Path(REUSE["crossaug"]) if REUSE.get("crossaug") else \
        CACHE / f"crossaug_{subset._fingerprint[:12]}_{augmenter.fingerprint()[:12]}"
    superset = _cached_superset(subset, augmenter) if not (out_dir / "dataset_info.json").is_file() else None
    if (out_dir / "dataset_info.json").is_file():
        augmented = load_from_disk(str(out_dir))
        if REUSE.get("crossaug"):
            augmented = _rows_of(augmented, subset)
    elif superset is not None:
        augmented = _rows_of(superset, subset)
    else:
        start = time.perf_counter()
        augmented = augmenter.augment(subset)
        print("\n".join(augmenter.stats.summary_lines()))
        print(f"CrossAug took {time.perf_counter() - start:.0f}s")
        augmented.save_to_disk(str(out_dir))
    cfs = augmented.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    NOTES["crossaug"] = {"generator": "default (SmolLM2 + LoRA on the shipped VitaminC pairs)",
                         "rows_augmented": len(subset), "components": component_digests(augmenter),
                         "counterfactuals": dict(Counter(cfs["cf_kind"]))}
    return cfs


def _with(train: Any, cfs: Any) -> Any:
    """The training rows plus counterfactual rows, provenance columns dropped."""
    from datasets import concatenate_datasets

    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


def crossaug(train: Any, seed: int = 0) -> Any:
    """Original rows + CrossAug counterfactuals, no checker."""
    return _with(train, crossaug_counterfactuals(train))


def _flip_pairs(cfs: Any, schema: TaskSchema) -> list[Any]:
    from cfaug_hf.filters import Pair

    return [Pair(source={}, counterfactual=row, label=schema.label_name(row[schema.label_column]),
                 original_label=row["cf_original_label"], columns=schema.bias_columns,
                 text_columns=schema.text_columns, group=i) for i, row in enumerate(cfs)]


def checked_crossaug(train: Any, seed: int = 0) -> Any:
    """The same counterfactuals passed through the shipped flip checker, the default of ``CrossAugAugmenter`` (its
    LabelFlipFilter keeps a counterfactual whose label is the checker's top prediction over (claim, evidence)):
    the decisions the filter takes inside ``augment()``, without generating the claims again."""
    from cfaug_hf.components.checker import default_checker
    from cfaug_hf.filters import LabelFlipFilter
    from cfaug_hf.fingerprint import digest_object

    schema = TaskSchema.fact_verification(id_column="id")
    cfs = crossaug_counterfactuals(train)
    checker = default_checker("fact-verification")
    keep, _ = LabelFlipFilter(checker).keep(_flip_pairs(cfs, schema)) if len(cfs) else ([], [])
    kept = cfs.select([i for i, k in enumerate(keep) if k])
    NOTES["crossaug+checker"] = {"kept": len(kept), "of": len(cfs), "kept_by_kind": dict(Counter(kept["cf_kind"])),
                                 "checker": digest_object(checker)[:16]}
    return _with(train, kept)


def component_digests(augmenter: Any) -> dict[str, str]:
    """The fingerprint of each component an augmenter used (generator, checker, editor, ...) and of its filters:
    a result names exactly what made it, so a table made with a superseded component can be found."""
    from cfaug_hf.fingerprint import digest_object

    out = {role: digest_object(c)[:16] for role, c in sorted(augmenter.components().items()) if c is not None}
    out.update({f"filter:{f.name}": f.fingerprint()[:16] for f in augmenter.filters})
    return out


def _rows_of(augmented: Any, train: Any) -> Any:
    """The rows of an augmented set whose source is in ``train`` (CrossAug's output for a row depends on that row
    only, so a larger cached run serves a smaller training sample)."""
    ids = set(train["id"])
    return augmented.filter(lambda sid: sid in ids, input_columns="cf_source_id")


def _cached_superset(train: Any, augmenter: Any) -> Any | None:
    """A cached CrossAug output of the same augmenter over a superset of ``train``'s rows, if there is one."""
    from datasets import load_from_disk

    ids = set(train["id"])
    for folder in sorted(CACHE.glob(f"crossaug_*_{augmenter.fingerprint()[:12]}")):
        if (folder / "dataset_info.json").is_file():
            data = load_from_disk(str(folder))
            if ids <= set(data["cf_source_id"]):
                return data
    return None


def balanced_crossaug(train: Any, seed: int = 0) -> Any:
    """The same counterfactuals with :class:`~cfaug_hf.filters.ShortcutBalanceFilter` applied in row order: the
    decisions the filter takes inside ``augment()`` (it is stateful and sees the counterfactuals in the same order),
    without generating the claims again. The words that caused drops are recorded in the results."""
    from cfaug_hf.filters import ShortcutBalanceFilter

    schema = TaskSchema.fact_verification(id_column="id")
    cfs = crossaug_counterfactuals(train)
    balance = ShortcutBalanceFilter(train, schema)
    keep, _ = balance.keep(_flip_pairs(cfs, schema)) if len(cfs) else ([], [])
    NOTES["crossaug+balance"] = {"counterfactuals_dropped": sum(not k for k in keep), "of": len(cfs),
                                 "blocked_words": dict(balance.blocked.most_common(10))}
    return _with(train, cfs.select([i for i, k in enumerate(keep) if k]))


def generated_negations(train: Any) -> Any:
    """CrossAug's c'+e rows (a generated claim with the original evidence, labelled REFUTES): a model trained on
    the original data that labels them REFUTES measures the generator's flip rate."""
    return crossaug_counterfactuals(train).filter(lambda kind: kind == "c'+e", input_columns="cf_kind")


#: RACE's decoding in the benchmark: the paper's beam 30 / 10 candidates / 96 tokens cost about 10 s a claim on two
#: CPU cores (RACEConfig's defaults keep the paper's); this is race_intrinsic.py's reduced setting.
RACE_DECODING = {"num_beams": 4, "num_candidates": 2, "max_new_tokens": 48}


def race_counterfactuals(train: Any) -> Any:
    """RACE's counterfactuals of (a seeded sample of --augment-limit of) the FEVEROUS training rows: SpacyNER, the
    3-way MiniLM checker and the SmolLM2 + LoRA evidence-to-claim generator that benchmarks/race_intrinsic.py
    trains on these training rows and caches; resumable parts cached by data and augmenter fingerprints."""
    from benchmarks.race_intrinsic import checker_model, generator_model

    from cfaug_hf import RACEAugmenter
    from cfaug_hf.components.ner import SpacyNER
    from cfaug_hf.pretrained import MINILM

    schema = TaskSchema.fact_verification(id_column="id")
    subset, _ = augment_subset(train)
    augmenter = RACEAugmenter(generator_model(train, schema, 180), checker_model(train, schema, 180), SpacyNER(),
                              TaskSchema.fact_verification(nei=True, id_column="id"), embedder=MINILM,
                              keep_original=False, **RACE_DECODING)
    augmenter.fit(train)
    cfs = cached_augment(augmenter, subset, "race", "RACE", part_rows=10)
    cfs = cfs.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    NOTES["race"] = {"rows_augmented": len(subset), "ner": "SpacyNER (en_core_web_sm)", "decoding": RACE_DECODING,
                     "components": component_digests(augmenter), "counterfactuals": dict(Counter(cfs["cf_kind"])),
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


def race_rows(train: Any, seed: int = 0) -> Any:
    """Original rows + RACE's claim and evidence counterfactuals."""
    return _with(train, race_counterfactuals(train))


def race_claims(train: Any) -> Any:
    return race_counterfactuals(train).filter(lambda kind: kind == "race_claim", input_columns="cf_kind")


def shipped_crossaug_counterfactuals(train: Any) -> Any:
    """CrossAug as it ships (``CrossAugAugmenter("default")``: the packaged negative-claim generator, decoded on
    CTranslate2 float32 when installed, and its flip checker) over the same rows as RACE."""
    from cfaug_hf import CrossAugAugmenter

    augmenter = CrossAugAugmenter("default", TaskSchema.fact_verification(id_column="id"), keep_original=False)
    augmenter.generator.use_backend("auto")
    subset, _ = augment_subset(train)
    cfs = cached_augment(augmenter, subset, "crossaug-shipped", "CrossAug (shipped)")
    cfs = cfs.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    NOTES["crossaug-shipped"] = {"rows_augmented": len(subset), "components": component_digests(augmenter),
                                 "counterfactuals": dict(Counter(cfs["cf_kind"]))}
    return cfs


def shipped_crossaug_rows(train: Any, seed: int = 0) -> Any:
    return _with(train, shipped_crossaug_counterfactuals(train))


def shipped_crossaug_claims(train: Any) -> Any:
    return shipped_crossaug_counterfactuals(train).filter(lambda kind: kind == "c'+e", input_columns="cf_kind")


#: Probes: test sets scored by the ``none`` model only, built when the row they measure is part of the run.
CROSSAUG_ROWS = {"crossaug": crossaug, "crossaug+checker": checked_crossaug, "crossaug+balance": balanced_crossaug,
                 "probes": {"flip rate (c'+e labelled REFUTES)": ("crossaug", generated_negations)}}

#: What a row's augmentation did (counts, words the balancing filter blocked), recorded in the results.
NOTES: dict[str, Any] = {}


def bow_pipeline() -> Any:
    """TF-IDF word 1-2 grams + logistic regression: the bag-of-words model every BoW part of this benchmark uses."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                         LogisticRegression(max_iter=2000, C=4.0))


class BowTextModel:
    """A bag-of-words classifier fitted on the training texts, fingerprinted by its weights (cheap for ``map``)."""

    fingerprint_key = "bow"

    def __init__(self, train: Any, schema: TaskSchema) -> None:
        self.schema = schema
        self.model = bow_pipeline().fit(_columns(train, schema)[schema.text_columns[0]], _labels(train, schema))

    def fingerprint(self) -> str:
        from cfaug_hf.fingerprint import digest_json

        return digest_json({self.fingerprint_key: [list(c) for c in self.model[-1].coef_.round(6)]})


class BowOcclusionSelector(BowTextModel):
    """ICDA rationales by occlusion over a bag-of-words classifier trained on the documents it selects from."""

    fingerprint_key = "bow_occlusion"

    def select(self, documents: Any, labels: Any = None) -> Any:
        from cfaug_hf.methods.icda.selection import occlusion_rationales

        return occlusion_rationales(self.model.predict_proba, documents, labels)


def icda_occlusion(train: Any, seed: int) -> Any:
    from cfaug_hf import RationaleSwapAugmenter

    schema = TaskSchema.sentiment(id_column="id")
    augmenter = RationaleSwapAugmenter(BowOcclusionSelector(train, schema), schema, seed=seed)
    return augmenter.augment(train, load_from_cache_file=False)


# ------------------------------------------------------------------------------------------------------- CORE
#: Set by --augment-limit: CORE and CrossAug edit only this many training rows (a seeded sample), a CPU-sized run.
AUGMENT_LIMIT: int | None = None
EDITOR_LIMIT: int | None = None  # --editor-limit: rows the learned editors rewrite (default AUGMENT_LIMIT)


class BowSentenceScorer(BowTextModel):
    """p(label | sentence) from a bag-of-words classifier trained on the training reviews: picks the sentence of a
    review that carries its sentiment most, for CORE's sentence-level editing."""

    fingerprint_key = "bow_sentence_scorer"

    def __call__(self, sentences: list[str], label: str) -> list[float]:
        return list(self.model.predict_proba(sentences)[:, self.schema.label_id(label)])


def augment_subset(train: Any) -> tuple[Any, list[int]]:
    """The rows CORE and CrossAug edit: all, or a seeded sample of AUGMENT_LIMIT of them."""
    if not AUGMENT_LIMIT or AUGMENT_LIMIT >= len(train):
        return train, list(range(len(train)))
    rows = sorted(random.Random(0).sample(range(len(train)), AUGMENT_LIMIT))
    return train.select(rows), rows


def _archive_parts(parts_dir: Path, archive: Path) -> None:
    """Every finished part of ``parts_dir`` into one compressed JSON Lines file (rows tagged with their part) and
    its features beside it: the cache is not kept between sessions, this file is committed."""
    import gzip

    from datasets import load_from_disk

    features = None
    archive.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(archive.with_suffix(".tmp"), "wt", encoding="utf-8") as f:
        for part in sorted(parts_dir.glob("*/dataset_info.json")):
            data = load_from_disk(str(part.parent))
            features = features or data.features.to_dict()
            for row in data:
                f.write(json.dumps({"_part": part.parent.name, **row}, ensure_ascii=False) + "\n")
    archive.with_suffix(".tmp").replace(archive)
    archive.with_name(archive.name.replace(".jsonl.gz", ".features.json")).write_text(json.dumps(features) + "\n")


def _restore_parts(archive: Path, parts_dir: Path) -> None:
    """The parts an earlier session archived, as part folders again (those not already there)."""
    import gzip
    from collections import defaultdict

    from datasets import Dataset, Features

    if not archive.is_file():
        return
    features = Features.from_dict(json.loads(archive.with_name(archive.name.replace(".jsonl.gz", ".features.json"))
                                             .read_text()))
    rows: dict[str, list] = defaultdict(list)
    with gzip.open(archive, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows[row.pop("_part")].append(row)
    for name, part in rows.items():
        if not (parts_dir / name / "dataset_info.json").is_file():
            Dataset.from_list(part, features=features).save_to_disk(str(parts_dir / name))


def equivalent_fingerprint(fingerprint: str) -> str | None:
    """The older augmenter fingerprint whose archived parts ``fingerprint`` was checked to reproduce, if any."""
    if not EQUIVALENT.is_file():
        return None
    return json.loads(EQUIVALENT.read_text()).get(fingerprint, {}).get("archived_as")


def check_parts(task: str, rows: int = 20) -> dict[str, Any]:
    """Regenerate the first ``rows`` rows of the editor's coverage order with this code and compare them with each
    archived part 0 of the same order under another augmenter fingerprint; an equal one is recorded in
    `EQUIVALENT`, so the archive serves this code."""
    import gzip

    from cfaug_hf import COREAugmenter

    train = CONFIGS[task]()["train"]
    order = editor_order_key(train, task)
    augmenter = COREAugmenter(_editor_of(task, 0), _schema_of(task), mode="editor_only", keep_original=False,
                              edit_sentences=3 if task == "sentiment" else 0)
    now = augmenter.fingerprint()[:12]
    global EDITOR_LIMIT
    EDITOR_LIMIT = rows
    fresh = [_comparable(r) for r in augmenter.augment(editor_subset(train, task))]
    report: dict[str, Any] = {"fingerprint": now, "rows": rows, "archives": {}}
    for path in sorted(PARTS_ARCHIVE.glob(f"{task}_editor_{order[:12]}_*.jsonl.gz")):
        older = path.name.removesuffix(".jsonl.gz").rsplit("_", 1)[1]
        with gzip.open(path, "rt", encoding="utf-8") as f:
            archived = [_comparable(r) for r in map(json.loads, f) if r.get("_part", "").startswith("00000-")]
        same = archived[:len(fresh)] == fresh and len(archived) >= len(fresh)
        report["archives"][older] = {"equal": same, "archived_rows": len(archived)}
        if same and older != now:
            known = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.is_file() else {}
            known[now] = {"archived_as": older, "checked": f"part 0 ({len(fresh)} rows) regenerated at commit "
                                                          f"{str(provenance().get('git_commit'))[:10]}: equal"}
            EQUIVALENT.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    print(json.dumps(report, indent=1))
    return report


def _comparable(row: dict[str, Any]) -> tuple:
    """What a counterfactual says, without the provenance that names the code (its fingerprint)."""
    return tuple((k, json.dumps(v, sort_keys=True, default=str)) for k, v in sorted(row.items())
                 if k not in ("_part", "cf_edit"))


def cached_augment(augmenter: Any, subset: Any, prefix: str, what: str, part_rows: int = 25,
                   parts_key: str | None = None, archive: Path | None = None) -> Any:
    """``augmenter.augment(subset)``, saved in CACHE under the data's and the augmenter's fingerprints and loaded
    from there on later runs (generation is the slow part of every augmented row).

    The rows are augmented in parts of ``part_rows`` consecutive rows, each saved as it finishes, so a run killed
    after hours resumes from its last finished part; a row's output does not depend on its batch (the augmenter
    contract seeds per row), so the parts concatenate to what one call would have written. ``parts_key`` names the
    parts by something other than this subset (the full row order a subset is a prefix of), so subsets that are
    prefixes of one order share their parts. ``archive``: a committed file the finished parts are also written to
    after each part, and read back from when the cache is empty (a later session resumes where this one stopped)."""
    from datasets import concatenate_datasets, load_from_disk

    out_dir = CACHE / f"{prefix}_{subset._fingerprint[:12]}_{augmenter.fingerprint()[:12]}"
    if (out_dir / "dataset_info.json").is_file():
        return load_from_disk(str(out_dir))
    parts_dir = CACHE / f"{prefix}_{(parts_key or subset._fingerprint)[:12]}_{augmenter.fingerprint()[:12]}.parts"
    if archive is not None:
        base = archive
        archive = archive.with_name(f"{archive.name}_{parts_dir.name.removesuffix('.parts')}.jsonl.gz")
        _restore_parts(archive, parts_dir)
        older = equivalent_fingerprint(augmenter.fingerprint()[:12])
        if older and not archive.is_file():
            _restore_parts(base.with_name(f"{base.name}_{prefix}_{(parts_key or subset._fingerprint)[:12]}_{older}"
                                          f".jsonl.gz"), parts_dir)
    start = time.perf_counter()
    n_parts = max(1, -(-len(subset) // part_rows))
    parts = []
    for index in range(n_parts):
        rows = range(index * part_rows, min((index + 1) * part_rows, len(subset)))
        part_dir = parts_dir / f"{index:05d}-{len(rows)}"
        if (part_dir / "dataset_info.json").is_file():
            parts.append(load_from_disk(str(part_dir)))
            continue
        part = augmenter.augment(subset.select(rows))
        part.save_to_disk(str(part_dir))
        parts.append(part)
        if archive is not None:
            _archive_parts(parts_dir, archive)
        print(f"{what}: part {index + 1}/{n_parts} done after {time.perf_counter() - start:.0f}s", flush=True)
    cfs = concatenate_datasets(parts) if len(parts) > 1 else parts[0]
    from cfaug_hf import AugmentationStats

    print("\n".join(AugmentationStats.from_dataset(cfs).summary_lines()))
    print(f"{what} took {time.perf_counter() - start:.0f}s")
    cfs.save_to_disk(str(out_dir))
    return cfs


def core_augment(train: Any, seed: int, *, task: str, mode: str, checker: bool = False) -> Any:
    """Original rows + CORE counterfactuals of (a sample of) them, cached by data and augmenter fingerprints.

    The counterfactuals are made without a checker and cached; ``checker=True`` then passes them through the flip
    checker shipped for the task (COREAugmenter's default), the decisions its LabelFlipFilter takes inside
    ``augment()``, without running the editor again."""
    from datasets import concatenate_datasets

    from cfaug_hf import COREAugmenter, local_llm
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    schema = TaskSchema.sentiment(id_column="id") if task == "sentiment" else TaskSchema.nli(id_column="id")
    parts: dict[str, Any] = {}
    if mode != "editor_only":
        parts = retrieval_parts(task)
    if mode != "retrieval_only":
        parts["editor"] = local_llm(max_new_tokens=64 if task == "sentiment" else 40, batch_size=16)
    options = {"edit_sentences": 1, "sentence_scorer": BowSentenceScorer(train, schema)} if task == "sentiment" else {}
    augmenter = COREAugmenter(schema=schema, mode=mode, keep_original=False, checker=None, **parts, **options)
    subset, _ = augment_subset(train)
    cfs = cached_augment(augmenter, subset, "core", f"CORE ({mode})")
    from cfaug_hf import AugmentationStats

    stats = AugmentationStats.from_dataset(cfs).to_dict()
    row = ROW_OF_MODE[mode]
    NOTES[row] = {"rows_edited": len(subset), "counterfactuals": len(cfs),
                  "components": component_digests(augmenter),
                  "skipped": stats.get("skipped", {}),
                  "editor": "SmolLM2-135M-Instruct (local_llm)" if mode != "retrieval_only" else None}
    if checker:
        from cfaug_hf.components.checker import default_checker
        from cfaug_hf.filters import LabelFlipFilter
        from cfaug_hf.fingerprint import digest_object

        shipped = default_checker(schema.task)
        keep, _ = LabelFlipFilter(shipped).keep(_flip_pairs(cfs, schema)) if len(cfs) else ([], [])
        cfs = cfs.select([i for i, k in enumerate(keep) if k])
        NOTES[f"{row}+checker"] = {**NOTES.pop(row), "kept by the checker": len(cfs),
                                   "checker": digest_object(shipped)[:16]}
    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


def human_same_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the human counterfactuals of the same sample CORE edits (CAD pairs), for a fair ceiling."""
    from datasets import Dataset, concatenate_datasets

    from scripts.shared_data import cad_nli_pairs, cad_sentiment_pairs

    subset, _ = augment_subset(train)
    if task == "sentiment":
        flip = {"negative": "positive", "positive": "negative"}
        human = {p["query"]: (p["positive"], flip[p["label"]]) for p in cad_sentiment_pairs("train")}
        key = lambda r: r["text"]
    else:
        human = {(p["premise"], p["hypothesis"]): (p["positive"], {"entailment": "contradiction",
                                                                  "contradiction": "entailment"}[p["label"]])
                 for p in cad_nli_pairs("train")}
        key = lambda r: (r["premise"], r["hypothesis"])
    rows = []
    for r in subset:
        if key(r) in human:
            text, label = human[key(r)]
            rows.append({**r, ("text" if task == "sentiment" else "hypothesis"): text, "label": label,
                         "id": r["id"] + "-human"})
    NOTES["human (same rows)"] = {"rows": len(subset), "counterfactuals": len(rows)}
    return concatenate_datasets([train, Dataset.from_list(rows).cast(train.features)])


def _schema_of(task: str) -> TaskSchema:
    return TaskSchema.sentiment(id_column="id") if task == "sentiment" else TaskSchema.nli(id_column="id")


def _human_by_row(task: str) -> dict[Any, list[tuple[str, str]]]:
    """Human counterfactuals of CAD train by original row key: [(edited text, its label)]."""
    from scripts.shared_data import cad_nli_edit_rows, cad_sentiment_edit_rows

    out: dict[Any, list[tuple[str, str]]] = {}
    if task == "sentiment":
        for r in cad_sentiment_edit_rows("train"):
            out.setdefault(r["text"], []).append((r["counterfactual"], r["target"]))
    else:
        for r in cad_nli_edit_rows("train"):
            out.setdefault((r["premise"], r["text"]), []).append((r["counterfactual"], r["target"]))
    return out


def _row_key(task: str, row: dict[str, Any]) -> Any:
    return row["text"] if task == "sentiment" else (row["premise"], row["hypothesis"])


def annotated_rows(train: Any, task: str) -> list[int]:
    """The training rows of the annotated quarter the shipped editor learned from (scripts/build_editors.py)."""
    from scripts.shared_data import annotated_quarter, cad_nli_edit_rows, cad_sentiment_edit_rows

    if task == "sentiment":
        rows = cad_sentiment_edit_rows("train")
        keys = {rows[i]["text"] for i in annotated_quarter(len(rows))}
    else:
        rows = cad_nli_edit_rows("train")
        quarter = annotated_quarter(max(rows["original"]) + 1)
        keys = {(r["premise"], r["text"]) for r in rows if r["original"] in quarter}
    return [i for i, r in enumerate(train) if _row_key(task, r) in keys]


def editor_subset(train: Any, task: str) -> Any:
    """The rows the shipped editor rewrites: the rows outside the annotated quarter (so it never rewrites a row whose
    human counterfactual it learned from) in one seeded order, the first EDITOR_LIMIT (else AUGMENT_LIMIT) of them,
    or all. Every limit takes a prefix of the same order, so the coverage curve's points (25%, 50%, 100% of the
    rows) share their counterfactuals: a larger limit only writes the rows the smaller one had not."""
    seen, limit = set(annotated_rows(train, task)), EDITOR_LIMIT or AUGMENT_LIMIT
    rest = [i for i in range(len(train)) if i not in seen]
    random.Random(0).shuffle(rest)
    return train.select(rest[:limit] if limit else rest)


def editor_order_key(train: Any, task: str) -> str:
    """A name for the full row order of `editor_subset` (the data and the rows left out), shared by every limit."""
    from cfaug_hf.fingerprint import digest_json

    return digest_json({"data": train._fingerprint, "left_out": annotated_rows(train, task), "order_seed": 0})


def human_rows(train: Any, task: str, subset: Any, note: str) -> Any:
    """The human counterfactuals (CAD) of ``subset``'s rows, in ``train``'s features."""
    from datasets import Dataset

    human, column = _human_by_row(task), ("text" if task == "sentiment" else "hypothesis")
    rows = [{**r, column: text, "label": label, "id": f"{r['id']}-human{k}"}
            for r in subset for k, (text, label) in enumerate(human.get(_row_key(task, r), []))]
    NOTES[note] = {"rows": len(subset), "counterfactuals": len(rows)}
    return Dataset.from_list(rows).cast(train.features)


def human_quarter(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the human counterfactuals of the annotated quarter (what the amplification protocol buys)."""
    from datasets import concatenate_datasets

    quarter = train.select(annotated_rows(train, task))
    return concatenate_datasets([train, human_rows(train, task, quarter, "human (quarter)")])


def human_editor_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the human counterfactuals of the rows the editor rewrites (its ceiling)."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, human_rows(train, task, editor_subset(train, task), "human (editor rows)")])


def quarter_subset(train: Any, task: str) -> Any:
    """The annotated quarter's rows, which the cross-fitting editor (trained on quarter 1) rewrites: all of them, or
    a seeded third of AUGMENT_LIMIT (the same share of the quarter as editor_subset takes of the rest)."""
    rows, limit = annotated_rows(train, task), EDITOR_LIMIT or AUGMENT_LIMIT
    if limit:
        rows = sorted(random.Random(0).sample(rows, min(len(rows), limit // 3)))
    return train.select(rows)


def _editor_of(task: str, quarter: int) -> Any:
    from cfaug_hf import Editor

    if not quarter:
        return Editor.default(task)
    folder = CACHE / "editors" / f"{task}-q{quarter}"
    if not (folder / "cfaug_editor.json").is_file():
        raise SystemExit(f"No editor in {folder}: run scripts/build_editors.py --task {task} --quarter {quarter}.")
    return Editor.from_pretrained(folder)


def retrieval_parts(task: str) -> dict[str, Any]:
    """The CF-DPR encoder and corpus index benchmarks/core_retrieval.py trained and cached for ``task``."""
    from cfaug_hf import BiEncoder, CorpusIndex

    enc_dir, index_dir = CACHE / f"cf-dpr-{task}", CACHE / f"core-index-{task}"
    if not (index_dir / "cfaug_corpus_index.json").is_file():
        raise SystemExit(f"No CF-DPR encoder and index in {CACHE}: run benchmarks/core_retrieval.py first.")
    return {"retriever": BiEncoder.from_pretrained(enc_dir), "index": CorpusIndex.from_pretrained(index_dir)}


def editor_counterfactuals(train: Any, task: str, quarter: int = 0, *, retrieval: bool = False) -> Any:
    """Counterfactuals written by the editor trained on annotation quarter ``quarter`` (0: the shipped editor, for
    :func:`editor_subset`; 1: the cross-fitting editor of scripts/build_editors.py --quarter 1, for the quarter-0
    rows), through COREAugmenter(mode="editor_only") with its defaults (the shipped flip checker picks among 4
    candidates and filters); sentiment rewrites the 3 sentences of each review the checker finds most polar.
    ``retrieval``: CORE proper (mode="core"), the editor reading the keywords of the CF-DPR excerpts retrieved for
    each row. Cached by data and augmenter fingerprints."""
    from datasets import load_from_disk

    from cfaug_hf import AugmentationStats, COREAugmenter

    subset = editor_subset(train, task) if not quarter else quarter_subset(train, task)
    given = REUSE.get(("core_" if retrieval else "") + task + (f"_q{quarter}" if quarter else ""))
    note = "core+editor" if retrieval else "editor+checker" if not quarter else f"editor q{quarter}"
    if given:  # counterfactuals this editor wrote earlier (a code change since then moves the cache key)
        cfs = load_from_disk(given)
        wanted = {str(i) for i in subset["id"]}
        if not set(cfs["cf_source_id"]) <= wanted or len(set(cfs["cf_source_id"])) < 0.3 * len(wanted):
            raise SystemExit(f"{given} does not hold counterfactuals of this run's {len(wanted)} rows.")
        print(f"Reusing the {task} editor's counterfactuals in {given}")
        components = {"reused": Path(given).name}  # no editor is loaded (a machine without its base model runs this)
    else:
        parts = retrieval_parts(task) if retrieval else {}
        augmenter = COREAugmenter(_editor_of(task, quarter), _schema_of(task), mode="core" if retrieval else
                                  "editor_only", keep_original=False, edit_sentences=3 if task == "sentiment" else 0,
                                  **parts)
        order = None if quarter else editor_order_key(train, task)
        cfs = cached_augment(augmenter, subset, "editor", f"{note} ({task})", part_rows=20, parts_key=order,
                             archive=None if quarter or retrieval else PARTS_ARCHIVE / task)
        components = component_digests(augmenter)
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    NOTES[note] = {
                               "rows_edited": len(subset), "counterfactuals": len(cfs),
                               "components": components, "skipped": stats.get("skipped", {}),
                               "filtered": stats.get("filtered", {}),
                               "editor": (f"shipped {task} editor" if not quarter else f"{task} editor of quarter {quarter}")
                             + " (SmolLM2-135M + LoRA, scripts/build_editors.py)"}
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    return cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)


def editor_rows(train: Any, seed: int, *, task: str, amplify: bool = False) -> Any:
    """Original rows + the shipped editor's counterfactuals; ``amplify``: + the annotated quarter's human ones too
    (the amplification protocol: annotate a quarter, let the editor write for the rest)."""
    from datasets import concatenate_datasets

    parts = [train]
    if amplify:
        parts.append(human_rows(train, task, train.select(annotated_rows(train, task)), "human (quarter)"))
    parts.append(editor_counterfactuals(train, task))
    if amplify:
        NOTES["amplify"] = {**NOTES.pop("human (quarter)"), **NOTES["editor+checker"]}
    return concatenate_datasets(parts)


def core_editor_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + CORE's counterfactuals with the shipped editor (CF-DPR retrieval, keywords in the editor's
    input, the shipped checker choosing and filtering) of the same rows the editor+checker row rewrites."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, editor_counterfactuals(train, task, retrieval=True)])


def crossfit_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + a machine counterfactual for every row from an editor that never saw that row's human pair:
    the shipped editor (quarter 0) writes for the other quarters, the quarter-1 editor for quarter 0."""
    from datasets import concatenate_datasets

    rest, first = editor_counterfactuals(train, task), editor_counterfactuals(train, task, quarter=1)
    NOTES["crossfit"] = {"quarter 0 editor": NOTES.pop("editor+checker"), "quarter 1 editor": NOTES.pop("editor q1")}
    return concatenate_datasets([train, rest, first])


def editor_table_rows(task: str) -> dict[str, Any]:
    from functools import partial

    return {"human (quarter)": partial(human_quarter, task=task),
            "editor+checker": partial(editor_rows, task=task),
            "amplify": partial(editor_rows, task=task, amplify=True),
            "crossfit": partial(crossfit_rows, task=task),
            "core+editor": partial(core_editor_rows, task=task),
            "human (editor rows)": partial(human_editor_rows, task=task)}


ROW_OF_MODE = {"core": "core", "retrieval_only": "cf-dpr", "editor_only": "llm-edit"}


def core_rows(task: str) -> dict[str, Any]:
    from functools import partial

    rows: dict[str, Any] = {ROW_OF_MODE[m]: partial(core_augment, task=task, mode=m) for m in ROW_OF_MODE}
    rows.update({f"{ROW_OF_MODE[m]}+checker": partial(core_augment, task=task, mode=m, checker=True)
                 for m in ROW_OF_MODE})
    rows["human (same rows)"] = partial(human_same_rows, task=task)
    return rows


def claim_only_weights(train: Any, schema: TaskSchema, folds: int = 5) -> list[float]:
    """1 / p(label | claim) from a bag-of-words claim-only model, out-of-fold so no example scores itself;
    normalised to mean 1 (Schuster et al. 2019's re-weighting baseline)."""
    import numpy as np
    from sklearn.model_selection import cross_val_predict

    claims = [v if isinstance(v, str) else " ".join(v) for v in train[schema.bias_columns[0]]]
    labels = np.array(_labels(train, schema))
    probs = cross_val_predict(bow_pipeline(), claims, labels, cv=folds, method="predict_proba")
    weights = 1.0 / np.clip(probs[np.arange(len(labels)), labels], 0.05, 1.0)
    return list(weights / weights.mean())


def training_set(config: dict[str, Any], row: str, seed: int) -> Any | None:
    train = config["train"]
    if row == "none":
        return train
    if row == "reweight":
        if config["schema"].task != "fact-verification":
            return None
        return train.add_column("sample_weight", claim_only_weights(train, config["schema"]))
    if row == "eda":
        return eda(train, config["schema"], seed)
    maker = config.get(row)
    return maker(train, seed) if maker else None


# ---------------------------------------------------------------------------------------------- classifiers
def _columns(data: Any, schema: TaskSchema) -> dict[str, list[str]]:
    return {c: [v if isinstance(v, str) else " ".join(v) for v in data[c]] for c in schema.text_columns}


def _labels(data: Any, schema: TaskSchema) -> list[int]:
    return [schema.label_id(x) for x in data[schema.label_column]]


def run_bow(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, **_: Any) -> dict[str, float]:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    cols = _columns(train, schema)
    vecs = {c: TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=100_000, sublinear_tf=True).fit(v)
            for c, v in cols.items()}

    def features(data: Any) -> Any:
        return hstack([vecs[c].transform(v) for c, v in _columns(data, schema).items()]).tocsr()

    weights = train["sample_weight"] if "sample_weight" in train.column_names else None
    clf = LogisticRegression(max_iter=2000, C=4.0, random_state=seed).fit(features(train), _labels(train, schema),
                                                                        sample_weight=weights)
    return {name: float((clf.predict(features(d)) == _labels(d, schema)).mean()) for name, d in tests.items()}


def run_hf(train: Any, tests: dict[str, Any], schema: TaskSchema, seed: int, *, model: str, max_length: int,
           epochs: float, batch_size: int, learning_rate: float, bf16: bool = False) -> dict[str, float]:
    import numpy as np
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding, Trainer, TrainingArguments

    from cfaug_hf.pretrained import load_model, load_tokenizer

    tok = load_tokenizer(model)
    net = load_model(AutoModelForSequenceClassification, model, num_labels=schema.num_labels,
                     id2label=dict(enumerate(schema.label_names)),
                     label2id={n: i for i, n in enumerate(schema.label_names)}).float()  # fp32 even from fp16 files

    def encode(batch: dict) -> dict:
        cols = [[v if isinstance(v, str) else " ".join(v) for v in batch[c]] for c in schema.text_columns]
        enc = tok(*cols, truncation=True, max_length=max_length)
        enc["labels"] = [schema.label_id(x) for x in batch[schema.label_column]]
        if "sample_weight" in batch:
            enc["sample_weight"] = batch["sample_weight"]
        return enc

    class WeightedTrainer(Trainer):
        """Per-example loss weights from a ``sample_weight`` column (the re-weighting baseline)."""

        def compute_loss(self, model: Any, inputs: dict, return_outputs: bool = False, **kwargs: Any) -> Any:
            weights = inputs.pop("sample_weight", None)
            if weights is None:
                return super().compute_loss(model, inputs, return_outputs=return_outputs, **kwargs)
            import torch

            labels = inputs.pop("labels")
            outputs = model(**inputs)
            loss = torch.nn.functional.cross_entropy(outputs.logits, labels, reduction="none")
            loss = (loss * weights.to(loss.dtype)).mean()
            return (loss, outputs) if return_outputs else loss

    def prepare(data: Any) -> Any:
        return data.map(encode, batched=True, remove_columns=data.column_names)


    args = TrainingArguments(output_dir=str(CACHE / "trainer"), num_train_epochs=epochs, learning_rate=learning_rate,
                             per_device_train_batch_size=batch_size, per_device_eval_batch_size=64,
                             weight_decay=0.01, seed=seed, save_strategy="no", report_to=[],
                             remove_unused_columns=False,  # prepare() keeps only model inputs and sample_weight
                             logging_steps=50, disable_tqdm=True, bf16=bf16)
    trainer = WeightedTrainer(model=net, args=args, train_dataset=prepare(train).shuffle(seed=seed),
                              data_collator=DataCollatorWithPadding(tok))
    trainer.train()
    out = {}
    for name, data in tests.items():
        pred = trainer.predict(prepare(data))
        out[name] = float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())
    return out


# ----------------------------------------------------------------------------------------------------- main
def fmt(values: list[float]) -> str:
    mean = statistics.mean(values) * 100
    spread = statistics.stdev(values) * 100 if len(values) > 1 else 0.0
    return f"{mean:.1f} ± {spread:.1f}"


def provenance() -> dict[str, Any]:
    """When and from which code a result was made (`benchmarks.harness.provenance`, with ``--commit``)."""
    from benchmarks.harness import provenance as made

    return made(COMMIT)


def run_config(name: str, args: argparse.Namespace) -> dict[str, Any]:
    config = CONFIGS[name]()
    if args.max_train and len(config["train"]) > args.max_train:
        config["train"] = config["train"].shuffle(seed=0).select(range(args.max_train))
    schema, tests = config["schema"], config["tests"]
    model_label = {"bow": "bow", "frozen": f"frozen-{args.head}"}.get(args.model, Path(args.model).name)
    results: dict[str, Any] = {"config": name, "model": args.model, "seeds": args.seeds,
                               "train_rows": len(config["train"]), "tests": {t: len(d) for t, d in tests.items()},
                               "rows": {}, **provenance(),
                               "settings": {k: v for k, v in vars(args).items() if k not in ("config", "rows")}}
    if args.model == "frozen":
        from cfaug_hf.pretrained import MINILM

        results["components"] = {"encoder": MINILM, "head": args.head}
    earlier = earlier_run(results, model_label) if args.merge else None
    if args.device_note:
        results["device"] = args.device_note
    if AUGMENT_LIMIT:
        results["augment_limit"] = AUGMENT_LIMIT
    # Probes are scored by the ``none`` model only (e.g. the flip rate of generated claims), when the rows they
    # measure are part of the run.
    probes = {p: make(config["train"]) for p, (needs, make) in config.get("probes", {}).items()
              if "none" in args.rows and needs in args.rows}
    for row in args.rows:
        per_seed, sizes, seconds = [], [], []
        for seed in args.seeds:
            train = training_set(config, row, seed)
            if train is None:
                break
            scored = {**tests, **probes} if row == "none" else tests
            start = time.perf_counter()
            if args.model == "bow":
                acc = run_bow(train, scored, schema, seed)
            elif args.model == "frozen":
                from benchmarks.frozen_yardstick import run_frozen, run_top_layers

                if args.head.startswith("top"):
                    acc = run_top_layers(train, scored, schema, seed, top=int(args.head[3:]), epochs=args.epochs,
                                         learning_rate=args.learning_rate)
                else:
                    acc = run_frozen(train, scored, schema, seed, head=args.head)
            else:
                acc = run_hf(train, scored, schema, seed, model=args.model, max_length=args.max_length,
                             epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                             bf16=args.bf16)
            seconds.append(time.perf_counter() - start)
            per_seed.append(acc)
            sizes.append(len(train))
            print(f"[{name} {model_label}] {row} seed {seed}: " + ", ".join(f"{t} {a:.3f}" for t, a in acc.items()),
                  flush=True)
        if per_seed:
            results["rows"][row] = {"train_rows": sizes[0], "seconds": statistics.mean(seconds),
                                    "accuracy": {t: [a[t] for a in per_seed] for t in tests}}
            if row in NOTES:
                results["rows"][row]["augmentation"] = NOTES[row]
            if row == "none" and probes:
                results["probes"] = {p: {"rows": len(d), "none_model": [a[p] for a in per_seed]}
                                     for p, d in probes.items()}
            if row != args.rows[-1]:  # a table so far, so a run cut off keeps what it finished
                so_far = {**results, "rows": merged_rows(results, earlier), "partial": True}
                write({**so_far, "validity": validity(name, so_far)}, model_label, quiet=True)
    results["rows"] = merged_rows(results, earlier)
    results["validity"] = validity(name, results)
    write(results, model_label)
    return results


def earlier_run(results: dict[str, Any], model_label: str) -> dict[str, Any] | None:
    """The table's earlier run, whose rows this one keeps where it does not redo them (--merge); refused when the
    two runs differ in settings or seeds, which would make the rows incomparable."""
    path = RESULTS / f"debias_{results['config']}_{model_label}.json"
    if not path.is_file():
        return None
    earlier = json.loads(path.read_text())
    ignore = {"merge", "device_note"}
    mine = {k: v for k, v in results["settings"].items() if k not in ignore}
    theirs = {k: v for k, v in earlier.get("settings", {}).items() if k not in ignore and k in mine}
    if any(earlier.get(k) != results[k] for k in ("seeds", "train_rows", "tests")) or \
            theirs != {k: mine[k] for k in theirs}:
        raise SystemExit(f"--merge: {path} was made with other settings; run every row again instead.")
    return earlier


def merged_rows(results: dict[str, Any], earlier: dict[str, Any] | None) -> dict[str, Any]:
    """This run's rows in the earlier run's order, each earlier row it did not redo marked with its commit."""
    if earlier is None:
        return results["rows"]
    rows = {row: results["rows"].get(row) or {**r, "made_at": r.get("made_at", earlier.get("git_commit"))}
            for row, r in earlier["rows"].items()}
    rows.update({row: r for row, r in results["rows"].items() if row not in rows})
    return rows


def write(results: dict[str, Any], model_label: str, quiet: bool = False) -> None:
    tests = list(results["tests"])
    check = results.get("validity")
    verdict = "" if check is None else (" (validity checks passed)" if check["passed"] else
                                        " (VALIDITY CHECKS FAILED: this table cannot show a debiasing effect)")
    lines = [f"# Debiasing benchmark: {results['config']}, {results['model']}{verdict}", "",
             f"Made {results.get('date')} at commit {str(results.get('git_commit'))[:10]}"
             + (" with uncommitted changes" if results.get("uncommitted_changes") else "") + ".", "",
             f"Accuracy (%) mean ± standard deviation over seeds {results['seeds']}; training set "
             f"{results['train_rows']} original rows; test sizes " +
             ", ".join(f"{t} {n}" for t, n in results["tests"].items()) + ".", "",
             "| training data | rows | " + " | ".join(tests) + " | seconds/run |",
             "|---|---|" + "---|" * len(tests) + "---|"]
    for row, r in results["rows"].items():
        lines.append(f"| {row} | {r['train_rows']} | " + " | ".join(fmt(r["accuracy"][t]) for t in tests) +
                     f" | {r['seconds']:.0f} |")
    for probe, p in results.get("probes", {}).items():
        lines.append(f"\n{probe}, by the `none` model: {fmt(p['none_model'])} % of {p['rows']} rows.")
    earlier = {row: str(r["made_at"])[:10] for row, r in results["rows"].items() if r.get("made_at")}
    if earlier:
        lines.append("\nRows kept from earlier runs with the same settings (--merge), by commit: "
                     + ", ".join(f"{row} ({c})" for row, c in earlier.items()) + ".")
    for row, r in results["rows"].items():
        if r.get("augmentation"):
            lines.append(f"\n{row}: {json.dumps(r['augmentation'])}")
    if check is not None:
        lines.append(f"\nValidity: `{check['row']}` minus `none` on {check['test']} = {check['gain']:+.1f} points "
                     f"(needs > 2 sd = {check['two_sd']:.1f})"
                     + (f"; `none` in-domain on {check['in_domain']['test']} {check['in_domain']['none']:.1f}% "
                        f"(needs >= {check['in_domain']['minimum']:.0f}%)" if check.get("in_domain") else "")
                     + (": passed." if check["passed"] else ": FAILED."))
    if results.get("partial"):
        lines.append("\nPartial: the run had not finished every row when this was written.")
    table = "\n".join(lines) + "\n"
    if not quiet:
        print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = RESULTS / f"debias_{results['config']}_{model_label}"
    stem.with_suffix(".md").write_text(table)
    stem.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")


def main() -> None:
    from cfaug_hf.pretrained import MINILM

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", choices=[*CONFIGS, "all"], default="all")
    ap.add_argument("--model", default="bow", help=f"'bow', 'frozen' or a model id/folder (e.g. {MINILM})")
    ap.add_argument("--head", choices=["lr", "mlp", "top1", "top2"], default="lr",
                    help="the frozen yardstick's head: lr or mlp over pooled features, or topN: the encoder's top N "
                         "layers fine-tuned over cached lower-layer states (models claim-evidence interaction; "
                         "uses --epochs and --learning-rate)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rows", nargs="+", default=["none", "human", "eda", "reweight", "crossaug"])
    ap.add_argument("--max-train", type=int, default=None, help="cap the training rows (a CPU-sized run)")
    ap.add_argument("--device-note", default=None, help="where it ran, recorded in the results and leaderboard")
    ap.add_argument("--augment-limit", type=int, default=None,
                    help="CORE and CrossAug rows edit only a seeded sample of this many training rows (CPU-sized)")
    ap.add_argument("--editor-limit", type=int, default=None,
                    help="the editor rows (editor+checker, amplify, crossfit) rewrite a seeded sample of this many "
                         "rows (default: --augment-limit)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the table's earlier run (same settings) that this run does not redo")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    ap.add_argument("--bf16", action="store_true", help="fine-tuning in bf16 mixed precision (a GPU with bf16)")
    ap.add_argument("--results-dir", type=Path, default=None, help="where the tables go [benchmarks/results]")
    ap.add_argument("--crossaug-data", default=None, help="a saved dataset of CrossAug output to reuse")
    ap.add_argument("--editor-data", nargs="*", default=[], metavar="TASK=FOLDER",
                    help="counterfactuals the editor wrote earlier, reused for TASK (sentiment, nli; sentiment_q1 for "
                         "the cross-fitting editor of quarter 1)")
    ap.add_argument("--core-editor-data", nargs="*", default=[], metavar="TASK=FOLDER",
                    help="the same for the core+editor row")
    ap.add_argument("--commit", default=None, help="the commit measured, for a copy of the tree run elsewhere")
    ap.add_argument("--check-parts", choices=["sentiment", "nli"], default=None,
                    help="regenerate the editor's first 20 coverage rows with this code and, when they equal an "
                         "archived run's, let that archive serve this code (benchmarks/results/editor_parts/)")
    args = ap.parse_args()
    if args.check_parts:
        check_parts(args.check_parts)
        return
    global AUGMENT_LIMIT, EDITOR_LIMIT, RESULTS, COMMIT
    AUGMENT_LIMIT, EDITOR_LIMIT, COMMIT = args.augment_limit, args.editor_limit, args.commit
    RESULTS = args.results_dir or RESULTS
    for option, prefix in ((args.editor_data, ""), (args.core_editor_data, "core_")):
        for item in option:
            task, sep, folder = item.partition("=")
            if not sep or not folder:
                ap.error(f"expected TASK=FOLDER, got {item!r}")
            REUSE[prefix + task.lower()] = folder
    if args.crossaug_data:
        REUSE["crossaug"] = args.crossaug_data
    for name in CONFIGS if args.config == "all" else [args.config]:
        run_config(name, args)


if __name__ == "__main__":
    main()
