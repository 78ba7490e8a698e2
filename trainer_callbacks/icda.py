"""ICDA inside an existing ``transformers.Trainer``: a dataset whose counterfactual rows change every epoch, and the
callback that regenerates them from the model being trained.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place: `CounterfactualEpochDataset`
holds the originals plus a fixed number of counterfactual slots, and `ICDACallback` refills the slots at
``on_epoch_begin``, before the epoch's dataloader iterator (and any worker process) is created.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any

from cfaug_hf.methods.icda.epoch import CounterfactualEpochDataset, JoinedTextCollator, epoch_seed, redraw
from cfaug_hf.configs import count_arg
from cfaug_hf.methods.icda.config import ICDAConfig
from cfaug_hf.methods.icda.selection import (CounterfactualSpec, OcclusionSelector, Plan, SelectionResult,
                                             is_degenerate, rationale_set_change)

from .base import RegenerationCallback

__all__ = ["CounterfactualEpochDataset", "ICDACallback", "JoinedTextCollator", "STATE_FILE", "epoch_seed", "redraw"]

logger = logging.getLogger(__name__)

#: Written into each checkpoint folder so ``resume_from_checkpoint`` continues with the same counterfactuals.
STATE_FILE = "icda_state.json"


class ICDACallback(RegenerationCallback):
    """Regenerates ICDA counterfactuals every epoch from the model the Trainer is training.

    At each ``on_epoch_begin`` from ``start_epoch`` on: the current model selects a rationale sentence for every
    original training document; ΔA = |A_k − A_{k−1}| / |A_k| is logged; the rationale pools are rebuilt (correctly
    classified documents at or below the ``pool_quantile`` error quantile, per class); and fresh counterfactuals
    fill the dataset's slots. With a `SentenceRationaleModel` the rationales are the
    model's own selector; with any other sequence classifier they come from occlusion (the sentence whose removal
    lowers the predicted label's probability most), which is not in the paper.

    This is an online variant of ICDA, not the paper's loop: the paper trains a selector to convergence on each
    augmented set, keeps the best of three seeds and a warm start, uses the lowest-error originals with an equal
    number of counterfactuals, and stops when the warm start no longer improves
    (`run_icda` with `paper_loop` does that). Here the
    counterfactuals are redrawn each epoch of one training run, every original is kept (2N rows), and ΔA and
    degeneracy are logged, not acted on.

    Examples:
        >>> from transformers import Trainer, TrainingArguments
        >>> from cfaug_hf import RationaleSelector
        >>> from cfaug_hf.testing import tiny_encoder
        >>> selector = RationaleSelector.from_encoder(tiny_encoder(), sentence_layers=1, sentence_heads=2)
        >>> train = CounterfactualEpochDataset([["the food was good .", "the room was clean ."],
        ...                                     ["the food was bad .", "the room was clean ."]] * 4, [1, 0] * 4)
        >>> args = TrainingArguments("/tmp/icda-doc", num_train_epochs=2, per_device_train_batch_size=4,
        ...                          remove_unused_columns=False, report_to=[], save_strategy="no",
        ...                          disable_tqdm=True, use_cpu=True)
        >>> icda = ICDACallback(train, tokenizer=selector.tokenizer)
        >>> trainer = Trainer(model=selector.model, args=args, train_dataset=train,
        ...                   data_collator=selector.collator(train.table), callbacks=[icda])
        >>> _ = trainer.train()
        {'icda_counterfactuals': ...}
        {'train_runtime': ...}
        >>> [(h["epoch"], h["icda_counterfactuals"] <= 8) for h in icda.history]
        [(1, True)]
    """

    state_file = STATE_FILE

    def __init__(self, dataset: CounterfactualEpochDataset, *, tokenizer: Any = None, config: ICDAConfig | None = None,
                 start_epoch: int = 1, batch_size: int = 256, max_length: int = 512, on_data_change: str = "refuse",
                 **overrides: Any):
        if not isinstance(dataset, CounterfactualEpochDataset):
            raise TypeError(f"ICDACallback drives a CounterfactualEpochDataset, got {type(dataset).__name__}.")
        start_epoch = count_arg("start_epoch", start_epoch)
        batch_size, max_length = count_arg("batch_size", batch_size, minimum=1), count_arg("max_length", max_length,
                                                                                          minimum=1)
        super().__init__(dataset, on_data_change=on_data_change)
        # One config with the augmenter: seed and pool_quantile come from ICDAConfig (keywords still override).
        self.config = dataclasses.replace(config or ICDAConfig(), **overrides) if overrides else config or ICDAConfig()
        self.tokenizer = tokenizer
        self.start_epoch = start_epoch
        self.seed, self.pool_quantile = self.config.seed, self.config.pool_quantile
        self.batch_size, self.max_length = batch_size, max_length
        self.previous: SelectionResult | None = None

    # ------------------------------------------------------------------------------------------ regeneration
    def select(self, model: Any, tokenizer: Any) -> SelectionResult:
        """Rationales of the original training documents under ``model``."""
        from cfaug_hf.components.rationale import RationaleSelector, SentenceRationaleModel

        ds = self.dataset
        if isinstance(model, SentenceRationaleModel):
            selector = RationaleSelector(model, tokenizer, batch_size=self.batch_size,
                                         device=str(next(model.parameters()).device))
            return selector.select(ds.docs, ds.labels, table=ds.table)
        if tokenizer is None:
            raise ValueError("ICDACallback needs the tokenizer (tokenizer=... or the Trainer's processing_class) "
                             "to derive rationales from a sequence classifier.")
        occlusion = OcclusionSelector(model, tokenizer, max_length=self.max_length,
                                      batch_size=min(self.batch_size, 64), device=str(next(model.parameters()).device))
        return occlusion.select([ds.table.texts(d) for d in ds.docs], ds.labels)

    def regenerate(self, model: Any, tokenizer: Any, epoch: int) -> Plan:
        ds = self.dataset
        selection = self.select(model, tokenizer)
        delta = rationale_set_change(selection, self.previous, labels=ds.labels,
                                     sentences=[ds.table.texts(d) for d in ds.docs])
        plan = redraw(ds, selection, epoch, seed=self.seed, pool_quantile=self.pool_quantile)
        degenerate, gap = is_degenerate(selection, ds.labels, ds.num_sentences)
        correct = sum(p == y for p, y in zip(selection.predicted, ds.labels)) / max(len(ds.labels), 1)
        record = {"epoch": epoch, "icda_delta_A": delta, "icda_counterfactuals": len(plan.specs),
                  "icda_train_accuracy": correct, "icda_position_gap": gap, "icda_degenerate": degenerate,
                  "icda_skipped": {k: v for k, v in plan.counts.items() if k.startswith("skipped")},
                  "icda_pool_sizes": {str(c): len(p) for c, p in plan.pools.items()}}
        self.history.append(record)
        self.previous = selection
        logger.info("ICDA epoch %d: %d counterfactuals, delta A = %s", epoch, len(plan.specs),
                    "n/a" if delta is None else f"{delta:.3f}")
        return plan

    def on_epoch_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self.check_length()
        epoch = int(math.floor(state.epoch + 1e-9))
        if epoch < self.start_epoch or self.dataset.plan_epoch == epoch:
            return  # before the first counterfactual epoch, or resumed inside an epoch already planned
        self.regenerate(model, self.tokenizer or kwargs.get("processing_class"), epoch)
        r = self.history[-1]
        self.log(state, epoch, {"icda_delta_A": r["icda_delta_A"], "icda_counterfactuals": r["icda_counterfactuals"],
                                "icda_train_accuracy": r["icda_train_accuracy"]})

    # ----------------------------------------------------------------------------------------- checkpoints
    def data_digest(self) -> str:
        from cfaug_hf.fingerprint import digest_json

        table = self.dataset.table
        return digest_json({"documents": [table.texts(doc) for doc in self.dataset.docs],
                            "labels": list(self.dataset.labels)})

    def state_dict(self) -> dict[str, Any]:
        prev = self.previous
        return {"plan_epoch": self.dataset.plan_epoch,
                "specs": [[s.source, [list(x) for x in s.swaps], s.label] for s in self.dataset.specs],
                "previous": None if prev is None else {"selected": prev.selected, "predicted": prev.predicted,
                                                       "error": prev.error},
                "history": self.history, "num_documents": len(self.dataset.docs)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        if data["num_documents"] != len(self.dataset.docs):
            raise ValueError(f"{self.state_file} was written for {data['num_documents']} documents; the dataset has "
                             f"{len(self.dataset.docs)}.")
        specs = [CounterfactualSpec(src, tuple(tuple(x) for x in swaps), label) for src, swaps, label in data["specs"]]
        self.dataset.set_specs(specs, data["plan_epoch"])
        prev = data["previous"]
        self.previous = None if prev is None else SelectionResult(prev["selected"], prev["predicted"], prev["error"])
        self.history = data["history"]
