"""ICDA's row (sentiment): original + ICDA rationale swaps, RationaleSwapAugmenter with occlusion rationales from a
bag-of-words classifier trained on the same data (one sentence per review; the plan is seeded per run)."""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema

from ..classifiers import BowTextModel
from ..registry import row


class BowOcclusionSelector(BowTextModel):
    """ICDA rationales by occlusion over a bag-of-words classifier trained on the documents it selects from."""

    fingerprint_key = "bow_occlusion"

    def select(self, documents: Any, labels: Any = None) -> Any:
        from cfaug_hf.methods.icda.selection import occlusion_rationales

        return occlusion_rationales(self.model.predict_proba, documents, labels)


@row("icda", configs=("sentiment",),
     title="+ rationale swaps, occlusion selector (not ICDA's trained loop)")
def icda_occlusion(train: Any, seed: int, task: str = "sentiment") -> Any:
    """Original + ICDA rationale swaps (RationaleSwapAugmenter) with occlusion rationales from a bag-of-words
    classifier trained on the same reviews (one sentence per review; the plan is seeded per run)."""
    from cfaug_hf import RationaleSwapAugmenter

    schema = TaskSchema.sentiment(id_column="id")
    augmenter = RationaleSwapAugmenter(BowOcclusionSelector(train, schema), schema, seed=seed)
    return augmenter.augment(train, load_from_cache_file=False)
