"""ICDA inside an existing ``transformers.Trainer``: a dataset whose counterfactual rows change every epoch, and the
callback that regenerates them from the model being trained.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place: :class:`CounterfactualEpochDataset`
holds the originals plus a fixed number of counterfactual slots, and :class:`ICDACallback` refills the slots at
``on_epoch_begin``, before the epoch's dataloader iterator (and any worker process) is created.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from cfaug_hf.methods.icda.epoch import CounterfactualEpochDataset, JoinedTextCollator, epoch_seed, redraw
from cfaug_hf.methods.icda.selection import (CounterfactualSpec, Plan, SelectionResult, is_degenerate,
                                             occlusion_rationales, plan_counterfactuals, rationale_set_change)

__all__ = ["CounterfactualEpochDataset", "ICDACallback", "JoinedTextCollator", "STATE_FILE", "epoch_seed", "redraw"]

logger = logging.getLogger(__name__)

#: Written into each checkpoint folder so ``resume_from_checkpoint`` continues with the same counterfactuals.
STATE_FILE = "icda_state.json"


def _calling_trainer() -> Any:
    """The Trainer whose callback handler is calling us: callbacks are not handed the Trainer itself."""
    import sys

    from transformers import Trainer

    frame = sys._getframe(1)
    for _ in range(12):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if isinstance(owner, Trainer):
            return owner
        frame = frame.f_back
    return None


class ICDACallback(TrainerCallback):
    """Regenerates ICDA counterfactuals every epoch from the model the Trainer is training.

    At each ``on_epoch_begin`` from ``start_epoch`` on: the current model selects a rationale sentence for every
    original training document; ΔA = |A_k − A_{k−1}| / |A_k| is logged; the rationale pools are rebuilt (correctly
    classified documents at or below the ``pool_quantile`` error quantile, per class); and fresh counterfactuals
    fill the dataset's slots. With a :class:`~cfaug_hf.components.SentenceRationaleModel` the rationales are the
    model's own selector (the paper's method); with any other sequence classifier they come from occlusion (the
    sentence whose removal lowers the predicted label's probability most), which is not in the paper.

    Example:
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

    def __init__(self, dataset: CounterfactualEpochDataset, *, tokenizer: Any = None, start_epoch: int = 1,
                 pool_quantile: float = 0.1, seed: int = 0, batch_size: int = 256, max_length: int = 512):
        if not isinstance(dataset, CounterfactualEpochDataset):
            raise TypeError(f"ICDACallback drives a CounterfactualEpochDataset, got {type(dataset).__name__}.")
        self.dataset, self.tokenizer = dataset, tokenizer
        self.start_epoch, self.pool_quantile, self.seed = start_epoch, pool_quantile, seed
        self.batch_size, self.max_length = batch_size, max_length
        self.previous: SelectionResult | None = None
        self.history: list[dict[str, Any]] = []
        self._length: int | None = None
        self._trainer: Any = None

    # ----------------------------------------------------------------------------------------------- guards
    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if args.dataloader_num_workers > 0 and args.dataloader_persistent_workers:
            raise ValueError("ICDACallback cannot work with dataloader_persistent_workers=True: persistent workers "
                             "keep their own copy of the dataset, so they would train on stale counterfactuals. "
                             "Set dataloader_persistent_workers=False.")
        loader = kwargs.get("train_dataloader")
        base = getattr(loader, "dataset", None)
        if base is not None and base is not self.dataset:
            raise ValueError("The Trainer's train_dataset is not the CounterfactualEpochDataset given to "
                             "ICDACallback, so regenerated counterfactuals would never be seen. Pass the same object "
                             "as train_dataset.")
        self._length = len(self.dataset)
        self._trainer = self._trainer or _calling_trainer()
        if state.global_step > 0:
            self._restore(Path(args.output_dir) / f"checkpoint-{state.global_step}")

    def _check_length(self) -> None:
        if self._length is not None and len(self.dataset) != self._length:
            raise RuntimeError(f"The ICDA dataset changed length ({self._length} -> {len(self.dataset)}); the "
                               f"Trainer's sampler was built for the old length and would skip or repeat rows.")

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
        device = next(model.parameters()).device

        def predict_proba(texts: list[str]) -> Any:
            enc = tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
            with torch.no_grad():
                logits = model(**{k: v.to(device) for k, v in enc.items()}).logits
            return torch.softmax(logits.float(), -1).cpu().numpy()

        was_training = model.training
        model.eval()
        try:
            docs = [ds.table.texts(d) for d in ds.docs]
            return occlusion_rationales(predict_proba, docs, ds.labels, batch_size=min(self.batch_size, 64))
        finally:
            model.train(was_training)

    def regenerate(self, model: Any, tokenizer: Any, epoch: int) -> Plan:
        ds = self.dataset
        selection = self.select(model, tokenizer)
        delta = rationale_set_change(selection, self.previous)
        plan = plan_counterfactuals(selection, ds.labels, ds.num_sentences, size=ds.size,
                                    pool_quantile=self.pool_quantile, seed=epoch_seed(self.seed, epoch))
        ds.set_specs(plan.specs, epoch)
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
        self._check_length()
        epoch = int(math.floor(state.epoch + 1e-9))
        if epoch < self.start_epoch or self.dataset.plan_epoch == epoch:
            return  # before the first counterfactual epoch, or resumed inside an epoch already planned
        self.regenerate(model, self.tokenizer or kwargs.get("processing_class"), epoch)
        r = self.history[-1]
        logs = {"icda_delta_A": r["icda_delta_A"], "icda_counterfactuals": r["icda_counterfactuals"],
                "icda_train_accuracy": r["icda_train_accuracy"]}
        if self._trainer is not None:
            # Through Trainer.log, so the console, TensorBoard, W&B and trainer_state.json all see them.
            self._trainer.log({k: v for k, v in logs.items() if v is not None})
        else:
            state.log_history.append({"epoch": float(epoch), "step": state.global_step, **logs})

    def attach(self, trainer: Any) -> ICDACallback:
        """Log through ``trainer`` (found automatically when the callback is given to the Trainer)."""
        self._trainer = trainer
        return self

    # ----------------------------------------------------------------------------------------- checkpoints
    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if not folder.is_dir():
            return
        prev = self.previous
        data = {"format_version": 1, "plan_epoch": self.dataset.plan_epoch,
                "specs": [[s.source, [list(x) for x in s.swaps], s.label] for s in self.dataset.specs],
                "previous": None if prev is None else {"selected": prev.selected, "predicted": prev.predicted,
                                                       "error": prev.error},
                "history": self.history, "num_documents": len(self.dataset.docs)}
        tmp = folder / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, folder / STATE_FILE)

    def _restore(self, folder: Path) -> None:
        path = folder / STATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"Resuming at step {folder.name} but {path} is missing: the checkpoint was not "
                                    f"written with ICDACallback (or is not under output_dir), so the "
                                    f"counterfactuals it trained on cannot be restored.")
        data = json.loads(path.read_text())
        if data["num_documents"] != len(self.dataset.docs):
            raise ValueError(f"{path} was written for {data['num_documents']} documents; the dataset has "
                             f"{len(self.dataset.docs)}.")
        specs = [CounterfactualSpec(src, tuple(tuple(x) for x in swaps), label) for src, swaps, label in data["specs"]]
        self.dataset.set_specs(specs, data["plan_epoch"])
        prev = data["previous"]
        self.previous = None if prev is None else SelectionResult(prev["selected"], prev["predicted"], prev["error"])
        self.history = data["history"]
