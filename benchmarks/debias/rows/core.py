"""CORE rows (sentiment, nli): retrieve with the CF-DPR encoder and corpus index that benchmarks/core_retrieval.py
trains and caches, then edit with the offline SmolLM2-135M editor (``core``); the best retrieved excerpt itself
(``cf-dpr``); the editor without retrieval (``llm-edit``). Sentiment edits the one sentence of each review that a
bag-of-words model finds most polar; NLI the hypothesis of entailment/contradiction rows. ``--augment-limit N``
edits a seeded sample of N rows. A ``+checker`` suffix passes the same counterfactuals through the flip checker
shipped for the task, COREAugmenter's default. ``human (same rows)`` is the fair ceiling: the human counterfactuals
of the same rows."""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema

from .. import settings
from ..augmented import augment_subset, cached_augment, component_digests, flip_pairs
from ..classifiers import BowTextModel
from ..configs import CAD_TASKS
from ..registry import row


class BowSentenceScorer(BowTextModel):
    """p(label | sentence) from a bag-of-words classifier trained on the training reviews: picks the sentence of a
    review that carries its sentiment most, for CORE's sentence-level editing."""

    fingerprint_key = "bow_sentence_scorer"

    def __call__(self, sentences: list[str], label: str) -> list[float]:
        return list(self.model.predict_proba(sentences)[:, self.schema.label_id(label)])


def retrieval_parts(task: str) -> dict[str, Any]:
    """The CF-DPR encoder and corpus index benchmarks/core_retrieval.py trained and cached for ``task``."""
    from cfaug_hf import BiEncoder, CorpusIndex

    enc_dir, index_dir = settings.CACHE / f"cf-dpr-{task}", settings.CACHE / f"core-index-{task}"
    if not (index_dir / "cfaug_corpus_index.json").is_file():
        raise SystemExit(f"No CF-DPR encoder and index in {settings.CACHE}: run benchmarks/core_retrieval.py first.")
    return {"retriever": BiEncoder.from_pretrained(enc_dir), "index": CorpusIndex.from_pretrained(index_dir)}


ROW_OF_MODE = {"core": "core", "retrieval_only": "cf-dpr", "editor_only": "llm-edit"}


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
    settings.NOTES[row] = {"rows_edited": len(subset), "counterfactuals": len(cfs),
                  "components": component_digests(augmenter),
                  "skipped": stats.get("skipped", {}),
                  "editor": "SmolLM2-135M-Instruct (local_llm)" if mode != "retrieval_only" else None}
    if checker:
        from cfaug_hf.components.checker import default_checker
        from cfaug_hf.filters import LabelFlipFilter
        from cfaug_hf.fingerprint import digest_object

        shipped = default_checker(schema.task)
        keep, _ = LabelFlipFilter(shipped).keep(flip_pairs(cfs, schema)) if len(cfs) else ([], [])
        cfs = cfs.select([i for i, k in enumerate(keep) if k])
        settings.NOTES[f"{row}+checker"] = {**settings.NOTES.pop(row), "kept by the checker": len(cfs),
                                   "checker": digest_object(shipped)[:16]}
    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


@row("core", configs=CAD_TASKS,
     title="+ CORE (CF-DPR + SmolLM2 editor)", same_rows="human (same rows)")
def core(train: Any, seed: int, task: str) -> Any:
    """Original + CORE counterfactuals: CF-DPR excerpts retrieved for each row, their keywords in the prompt of the
    offline SmolLM2-135M editor."""
    return core_augment(train, seed, task=task, mode="core")


@row("cf-dpr", configs=CAD_TASKS,
     title="+ CF-DPR retrieved text only", same_rows="human (same rows)")
def cf_dpr(train: Any, seed: int, task: str) -> Any:
    """Original + the best CF-DPR excerpt retrieved for each row, as its counterfactual."""
    return core_augment(train, seed, task=task, mode="retrieval_only")


@row("llm-edit", configs=CAD_TASKS,
     title="+ SmolLM2 editor without retrieval", same_rows="human (same rows)")
def llm_edit(train: Any, seed: int, task: str) -> Any:
    """Original + the SmolLM2-135M editor's counterfactuals without retrieval."""
    return core_augment(train, seed, task=task, mode="editor_only")


@row("core+checker", configs=CAD_TASKS,
     title="+ CORE, flip-checked", same_rows="human (same rows)")
def core_checked(train: Any, seed: int, task: str) -> Any:
    """``core``'s counterfactuals through the task's shipped flip checker."""
    return core_augment(train, seed, task=task, mode="core", checker=True)


@row("cf-dpr+checker", configs=CAD_TASKS,
     title="+ CF-DPR retrieved text, flip-checked", same_rows="human (same rows)")
def cf_dpr_checked(train: Any, seed: int, task: str) -> Any:
    """``cf-dpr``'s counterfactuals through the task's shipped flip checker."""
    return core_augment(train, seed, task=task, mode="retrieval_only", checker=True)


@row("llm-edit+checker", configs=CAD_TASKS,
     title="+ SmolLM2 editor without retrieval, flip-checked", same_rows="human (same rows)")
def llm_edit_checked(train: Any, seed: int, task: str) -> Any:
    """``llm-edit``'s counterfactuals through the task's shipped flip checker."""
    return core_augment(train, seed, task=task, mode="editor_only", checker=True)


@row("human (same rows)", configs=CAD_TASKS,
     title="+ human CAD, same rows as CORE")
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
    settings.NOTES["human (same rows)"] = {"rows": len(subset), "counterfactuals": len(rows)}
    return concatenate_datasets([train, Dataset.from_list(rows).cast(train.features)])
