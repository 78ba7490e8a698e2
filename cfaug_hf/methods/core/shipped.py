"""The retrieval parts of CORE that ship inside the package (``cfaug_hf/data/core/<task>/``), built by
``python -m scripts.build_core``: a CF-DPR retriever (all-MiniLM-L6-v2 with a LoRA adapter on each encoder, for the
paper's two BERT-base encoders) and the corpus it retrieves from (CAD's original training texts, for the paper's
1.6M Amazon and Yelp reviews). The FAISS index over the corpus is built from them on first use (about 2 CPU-minutes
for the sentiment corpus) and kept in `cfaug_hf.pretrained.cache_dir`, like a converted generator."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ...data import DATA_DIR
from ...verbosity import get_logger

__all__ = ["CORE_DIR", "SHIPPED_TASKS", "shipped_retriever", "shipped_index"]

logger = get_logger(__name__)

CORE_DIR = DATA_DIR / "core"
#: CORE's template names (``COREAugmenter.task``) with a shipped retriever and corpus.
SHIPPED_TASKS = ("sentiment", "nli")
_CORPUS = {"sentiment": "the sentences of CAD's original IMDb training reviews (Kaushik et al. 2020)",
           "nli": "CAD-SNLI's original training premises and hypotheses (Kaushik et al. 2020)"}


def _folder(task: str) -> Path:
    if task not in SHIPPED_TASKS:
        raise ValueError(f"CORE ships a retriever for {list(SHIPPED_TASKS)}, not for task {task!r}: pass retriever= "
                         f"(a BiEncoder trained with train_cf_dpr) and index= (CorpusIndex.build over your corpus).")
    folder = CORE_DIR / task
    if not (folder / "retriever").is_dir() or not (folder / "corpus.parquet").is_file():
        raise FileNotFoundError(f"CORE's shipped {task} retriever is missing from {folder}; reinstall cfaug-hf or "
                                f"build it with python -m scripts.build_core --task {task}.")
    return folder


@functools.lru_cache(maxsize=None)
def shipped_retriever(task: str) -> Any:
    """CORE's shipped CF-DPR retriever for ``task`` (``"sentiment"`` or ``"nli"``), loaded once per process."""
    from ...components.retriever import BiEncoder

    return BiEncoder.from_pretrained(_folder(task) / "retriever")


@functools.lru_cache(maxsize=None)
def shipped_index(task: str) -> Any:
    """The index of the shipped corpus under the shipped retriever: read from the cache, or built and saved there
    the first time (saving is atomic, so two processes building at once leave one whole index)."""
    from datasets import Dataset

    from ...components.retriever import CorpusIndex
    from ...pretrained import cache_dir

    retriever = shipped_retriever(task)
    cached = cache_dir() / "core-index" / f"{task}-{retriever.fingerprint()[:16]}"
    if (cached / CorpusIndex.config_name).is_file():
        return CorpusIndex.from_pretrained(cached)
    corpus = Dataset.from_parquet(str(_folder(task) / "corpus.parquet"))
    logger.warning("Indexing CORE's shipped %s corpus (%d texts) with its retriever: done once, kept in %s.", task,
                   len(corpus), cached)
    index = CorpusIndex.build(retriever, corpus, corpus_info={"corpus": _CORPUS[task], "shipped": True})
    index.save_pretrained(cached, overwrite=True)
    return index
