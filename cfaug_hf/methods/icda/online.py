"""One round of online ICDA: the rationales of the current model, ΔA against the last round, and a fresh draw of
counterfactuals into a `CounterfactualEpochDataset` (what `trainer_callbacks.ICDACallback` runs at each epoch).

Examples:
    >>> from cfaug_hf.methods.icda import ICDAConfig
    >>> round_ = OnlineICDA(ICDAConfig(seed=3), batch_size=8)
    >>> round_.previous is None, round_.state_dict()
    (True, {'previous': None})
"""

from __future__ import annotations

from typing import Any

from .config import ICDAConfig
from .epoch import CounterfactualEpochDataset, redraw
from .selection import OcclusionSelector, Plan, SelectionResult, is_degenerate, rationale_set_change
from ...verbosity import get_logger

__all__ = ["OnlineICDA"]

logger = get_logger(__name__)


class OnlineICDA:
    """The ICDA round run inside a training loop: select, measure ΔA, rebuild the pools, redraw.

    Args:
        config: the `ICDAConfig` (its ``seed`` and ``pool_quantile`` apply).
        batch_size: documents per selection batch.
        max_length: tokens per document for occlusion (a classifier that is not a rationale model).
    """

    def __init__(self, config: ICDAConfig, *, batch_size: int = 256, max_length: int = 512) -> None:
        self.config = config
        self.batch_size, self.max_length = batch_size, max_length
        self.previous: SelectionResult | None = None

    def select(self, dataset: CounterfactualEpochDataset, model: Any, tokenizer: Any) -> SelectionResult:
        """Rationales of the dataset's original documents under ``model``: a `SentenceRationaleModel`'s own
        selector, or occlusion for any other sequence classifier (which is not in the paper)."""
        from ...components.rationale import RationaleSelector, SentenceRationaleModel

        device = str(next(model.parameters()).device)
        if isinstance(model, SentenceRationaleModel):
            selector = RationaleSelector(model, tokenizer, batch_size=self.batch_size, device=device)
            return selector.select(dataset.docs, dataset.labels, table=dataset.table)
        if tokenizer is None:
            raise ValueError("ICDA needs the tokenizer (tokenizer=... or the Trainer's processing_class) to derive "
                             "rationales from a sequence classifier.")
        occlusion = OcclusionSelector(model, tokenizer, max_length=self.max_length,
                                      batch_size=min(self.batch_size, 64), device=device)
        return occlusion.select([dataset.table.texts(d) for d in dataset.docs], dataset.labels)

    def run(self, dataset: CounterfactualEpochDataset, model: Any, tokenizer: Any, epoch: int) -> tuple[Plan, dict]:
        """Select, redraw the dataset's counterfactual slots for ``epoch``; returns the plan and what to record."""
        selection = self.select(dataset, model, tokenizer)
        delta = rationale_set_change(selection, self.previous, labels=dataset.labels,
                                     sentences=[dataset.table.texts(d) for d in dataset.docs])
        plan = redraw(dataset, selection, epoch, seed=self.config.seed, pool_quantile=self.config.pool_quantile)
        degenerate, gap = is_degenerate(selection, dataset.labels, dataset.num_sentences)
        correct = sum(p == y for p, y in zip(selection.predicted, dataset.labels)) / max(len(dataset.labels), 1)
        record = {"epoch": epoch, "icda_delta_A": delta, "icda_counterfactuals": len(plan.specs),
                  "icda_train_accuracy": correct, "icda_position_gap": gap, "icda_degenerate": degenerate,
                  "icda_skipped": {k: v for k, v in plan.counts.items() if k.startswith("skipped")},
                  "icda_pool_sizes": {str(c): len(p) for c, p in plan.pools.items()}}
        self.previous = selection
        logger.info("ICDA epoch %d: %d counterfactuals, delta A = %s", epoch, len(plan.specs),
                    "n/a" if delta is None else f"{delta:.3f}")
        return plan, record

    def state_dict(self) -> dict[str, Any]:
        prev = self.previous
        return {"previous": None if prev is None else {"selected": prev.selected, "predicted": prev.predicted,
                                                       "error": prev.error}}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        prev = data["previous"]
        self.previous = None if prev is None else SelectionResult(prev["selected"], prev["predicted"], prev["error"])
