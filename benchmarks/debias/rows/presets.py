"""Paper-preset rows (sentiment): each method's ``from_preset("paper")`` as a user gets it out of the box, with the
stand-ins the package ships (`docs/methods/*.md` lists them), on the same sample of training rows as the library's
defaults (``--augment-limit``), so the two sit side by side on one yardstick.

- ``core (paper)``: CORE with the paper's settings: the shipped CF-DPR retriever and corpus, the local SmolLM2-135M
  prompted few-shot at temperature 0.7, the whole review edited, no flip checker.
- ``llm (paper)``: the LLM-prompting method with the paper's settings (Li et al.): the same local model, the paper's
  decoding and demonstration count, no filter.

Neither is a reproduction: the papers' editors are GPT-3-class models, and their figures come from other set-ups.
"""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema

from .. import settings
from ..augmented import augment_subset, cached_augment, component_digests
from ..registry import row


def preset_augment(train: Any, method: str) -> Any:
    """Original rows + the paper preset's counterfactuals of (a sample of) them, cached and resumable by parts."""
    from datasets import concatenate_datasets

    from cfaug_hf import AugmentationStats, Augmenter
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS
    from cfaug_hf.registry import augmenter_class

    schema = TaskSchema.sentiment(id_column="id")
    augmenter: Augmenter = augmenter_class(method).from_preset("paper", schema=schema, keep_original=False)
    subset, _ = augment_subset(train)
    cfs = cached_augment(augmenter, subset, f"{method}-paper", f"{method} (paper preset)", part_rows=10)
    settings.NOTES[f"{method} (paper)"] = {
        "rows_edited": len(subset), "counterfactuals": len(cfs), "components": component_digests(augmenter),
        "skipped": AugmentationStats.from_dataset(cfs).to_dict().get("skipped", {}),
        "set-up": "from_preset('paper') with the package's stand-ins (local SmolLM2-135M-Instruct for the paper's "
                  "GPT-3-class editor)"}
    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


@row("core (paper)", configs=("sentiment",), title="+ CORE, the paper's settings (shipped stand-ins)",
     same_rows="human (same rows)")
def core_paper(train: Any, seed: int, task: str) -> Any:
    """Original + CORE's paper preset: shipped CF-DPR and corpus, SmolLM2 prompted few-shot, whole review, no
    checker."""
    return preset_augment(train, "core")


@row("llm (paper)", configs=("sentiment",), title="+ LLM prompting, the paper's settings (local SmolLM2)",
     same_rows="human (same rows)")
def llm_paper(train: Any, seed: int, task: str) -> Any:
    """Original + the LLM method's paper preset with the local SmolLM2-135M-Instruct, no filter."""
    return preset_augment(train, "llm")
