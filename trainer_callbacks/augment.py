"""Any registered augmenter inside an unchanged ``transformers.Trainer``: fresh counterfactuals every epoch.

`AugmentedEpochDataset` holds a ``datasets.Dataset``'s rows plus a fixed number of counterfactual slots (so
the Trainer's sampler never sees the length change); `AugmentationCallback` refills the slots at each
``on_epoch_begin`` by running the augmenter over the originals, in one of two modes:

* ``"sampling"``: a fresh seed each epoch (sampling generators, donor redraws), so every epoch sees new
  counterfactuals;
* ``"hard"``: the model being trained scores the counterfactuals, and only those it still gets wrong (probability
  of the counterfactual's label under 0.5, hardest first) fill the slots, within ``budget``.

Regeneration runs under ``torch.no_grad``, batched, and its share of the epoch's wall time is logged through
``Trainer.log`` with the counts. Checkpoints keep the slots, so ``resume_from_checkpoint`` continues with the same
counterfactuals.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import time
from typing import Any

import torch

from cfaug_hf.augmenter import PROVENANCE_COLUMNS, AugmentationStats, Augmenter, whole_dataset
from cfaug_hf.sharing.configs import count_arg
from cfaug_hf.schema import TaskSchema
from cfaug_hf.training.slots import SlotDataset

from .base import RegenerationCallback

__all__ = ["AugmentedEpochDataset", "SchemaCollator", "AugmentationCallback"]


class AugmentedEpochDataset(SlotDataset):
    """The rows of ``dataset`` followed by ``size`` counterfactual slots; ``len`` never changes.

    Items are ``{<text columns>, "labels": class id, "is_counterfactual"}``; use `SchemaCollator` and
    ``remove_unused_columns=False``. An empty slot repeats an original, so every epoch has the same steps.

    Examples:
        >>> from datasets import Dataset
        >>> ds = AugmentedEpochDataset(Dataset.from_dict({"text": ["good", "bad"],
        ...                                               "label": ["positive", "negative"]}), TaskSchema.sentiment())
        >>> len(ds), ds[3]["labels"], ds[3]["is_counterfactual"]
        (4, 0, False)
    """

    def __init__(self, dataset: Any, schema: TaskSchema, *, size: int | None = None) -> None:
        dataset = whole_dataset(dataset, "AugmentedEpochDataset")
        present = [c for c in PROVENANCE_COLUMNS if c in dataset.column_names]
        if present:
            raise ValueError(f"Column {present[0]!r} is present: pass the original data, not an augmenter's output.")
        schema.validate_features(dataset.features)
        if len(dataset) == 0:
            raise ValueError("AugmentedEpochDataset needs at least one row.")
        self.originals, self.schema = dataset, schema
        self.size = len(dataset) if size is None else count_arg("size", size)
        self.slots: list[dict[str, Any]] = []
        self.plan_epoch: int | None = None

    def set_counterfactuals(self, rows: list[dict[str, Any]], epoch: int | None) -> None:
        self.slots = list(rows)[:self.size]
        self.plan_epoch = epoch

    def _item(self, row: dict[str, Any], is_cf: bool) -> dict[str, Any]:
        item = {c: row[c] for c in self.schema.text_columns}
        item["labels"] = self.schema.label_id(row[self.schema.label_column])
        item["is_counterfactual"] = is_cf
        return item

    def num_originals(self) -> int:
        return len(self.originals)

    def original(self, index: int) -> dict[str, Any]:
        return self._item(self.originals[index], False)

    def num_filled(self) -> int:
        return len(self.slots)

    def counterfactual(self, slot: int) -> dict[str, Any]:
        return self._item(self.slots[slot], True)


class SchemaCollator:
    """Tokenizes a schema's text columns (as a pair when there are two; list cells joined) and stacks the labels."""

    def __init__(self, tokenizer: Any, schema: TaskSchema, *, max_length: int = 256) -> None:
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and limit < 100_000:  # never past what the model's positions allow
            max_length = min(max_length, limit)
        self.tokenizer, self.schema, self.max_length = tokenizer, schema, max_length

    def encode(self, rows: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        from cfaug_hf.pretrained import token_head

        cols, tok, limit = self.schema.text_columns, self.tokenizer, self.max_length
        # each side cut to max_length tokens first: tokenizers' pair truncation is quadratic in the input's length
        first = [token_head(tok, self.schema.joined(r[cols[0]]), limit) for r in rows]
        second = [token_head(tok, self.schema.joined(r[cols[1]]), limit) for r in rows] if len(cols) > 1 else None
        args = (first,) if second is None else (first, second)
        return dict(self.tokenizer(*args, padding=True, truncation=True, max_length=self.max_length,
                                   return_tensors="pt"))

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = self.encode(items)
        batch["labels"] = torch.tensor([int(it["labels"]) for it in items], dtype=torch.long)
        return batch


class AugmentationCallback(RegenerationCallback):
    """Regenerates any augmenter's counterfactuals every epoch inside a plain Trainer.

    Args:
        augmenter: any `Augmenter` (CrossAug, ICDA's ``RationaleSwapAugmenter``, your own).
        dataset: the `AugmentedEpochDataset` given to the Trainer as ``train_dataset``.
        mode: ``"sampling"`` (a fresh augmenter seed each epoch) or ``"hard"`` (keep what the model gets wrong).
        tokenizer: for ``"hard"`` mode (default: the Trainer's ``processing_class``).
        start_epoch: the first epoch that trains on counterfactuals (0: from the start).
        budget: most counterfactuals per epoch (default: the dataset's slots).
        batch_size: rows per augmenter call and per scoring pass.
        on_data_change: resuming from a checkpoint written for other training data ``"refuse"``s (default), or
            ``"regenerate"``s the counterfactuals for the new data (with a warning).

    Examples:
        >>> from datasets import Dataset
        >>> from transformers import Trainer, TrainingArguments
        >>> from cfaug_hf import TaskSchema
        >>> from cfaug_hf.testing import NegateAugmenter, tiny_classifier
        >>> schema = TaskSchema.sentiment()
        >>> model, tok = tiny_classifier(("negative", "positive"))
        >>> train = AugmentedEpochDataset(Dataset.from_dict({"text": ["the film was good"] * 4,
        ...                                                  "label": ["positive"] * 4}), schema)
        >>> callback = AugmentationCallback(NegateAugmenter(schema), train)
        >>> args = TrainingArguments("/tmp/cfaug-cb-doc", num_train_epochs=2, per_device_train_batch_size=4,
        ...                          remove_unused_columns=False, report_to=[], save_strategy="no",
        ...                          disable_tqdm=True, use_cpu=True, logging_strategy="no")
        >>> trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=SchemaCollator(tok, schema))
        >>> trainer.add_callback(callback.attach(trainer))  # attach: its figures go through Trainer.log
        >>> _ = trainer.train()
        {'cfaug_counterfactuals': 4, ...}
        ...
        >>> [h["cfaug_counterfactuals"] for h in callback.history]
        [4, 4]
    """

    #: The file 0.1.0 checkpoints kept the state in (see `trainer_callbacks.base`).
    state_file = "cfaug_augment_state.json"

    def __init__(self, augmenter: Augmenter, dataset: AugmentedEpochDataset, *, mode: str = "sampling",
                 tokenizer: Any = None, start_epoch: int = 0, budget: int | None = None, batch_size: int = 64,
                 max_length: int = 256, on_data_change: str = "refuse") -> None:
        if not isinstance(augmenter, Augmenter):
            raise TypeError(f"AugmentationCallback drives a cfaug_hf Augmenter, got {type(augmenter).__name__}.")
        if not isinstance(dataset, AugmentedEpochDataset):
            raise TypeError(f"AugmentationCallback fills an AugmentedEpochDataset, got {type(dataset).__name__}.")
        if mode not in ("sampling", "hard"):
            raise ValueError(f"mode must be 'sampling' or 'hard', got {mode!r}.")
        if augmenter.schema.label_names != dataset.schema.label_names:
            raise ValueError(f"The augmenter's labels {list(augmenter.schema.label_names)} differ from the "
                             f"dataset's {list(dataset.schema.label_names)}.")
        budget = count_arg("budget", budget, allow_none=True)
        batch_size, max_length = count_arg("batch_size", batch_size, minimum=1), count_arg("max_length", max_length,
                                                                                          minimum=1)
        start_epoch = count_arg("start_epoch", start_epoch)
        super().__init__(dataset, tokenizer=tokenizer, start_epoch=start_epoch, on_data_change=on_data_change)
        self.augmenter, self.mode = augmenter, mode
        self.batch_size, self.max_length = batch_size, max_length
        self.budget = dataset.size if budget is None else min(int(budget), dataset.size)
        self._regen_s = 0.0
        self._epoch_start: float | None = None
        #: What the augmenter did in the last regeneration (a fresh count each epoch).
        self.epoch_stats = AugmentationStats()

    # ---------------------------------------------------------------------------------------- regeneration
    def generate(self, epoch: int) -> list[dict[str, Any]]:
        """Counterfactual rows of all originals with this epoch's seed (no originals, no trace rows)."""
        aug = copy.copy(self.augmenter)
        aug.stats = AugmentationStats()  # the epoch's own counts (self.epoch_stats); the user's object is untouched
        aug.config = dataclasses.replace(aug.config, seed=random.Random(f"{aug.config.seed}-{epoch}").randrange(2**31))
        originals = self.dataset.originals
        aug.fit(originals)  # a no-op unless the method plans over the whole dataset (ICDA's donor pools)
        rows: list[dict[str, Any]] = []
        keep = (*self.dataset.schema.text_columns, self.dataset.schema.label_column)
        with torch.no_grad():
            for start in range(0, len(originals), self.batch_size):
                out = aug(originals[start:start + self.batch_size],
                          list(range(start, min(start + self.batch_size, len(originals)))))
                for i, is_cf in enumerate(out["cf_is_counterfactual"]):
                    if is_cf:
                        rows.append({c: out[c][i] for c in keep})
        self.epoch_stats = aug.stats
        return rows

    def hardest(self, rows: list[dict[str, Any]], model: Any, tokenizer: Any) -> list[dict[str, Any]]:
        """The rows the model gets wrong (probability of their label under 0.5), hardest first."""
        if tokenizer is None:
            raise ValueError("mode='hard' needs the tokenizer (tokenizer=... or the Trainer's processing_class).")
        collate = SchemaCollator(tokenizer, self.dataset.schema, max_length=self.max_length)
        device = next(model.parameters()).device
        was_training = model.training
        model.eval()
        probs: list[float] = []
        try:
            with torch.no_grad():
                for start in range(0, len(rows), self.batch_size):
                    chunk = rows[start:start + self.batch_size]
                    batch = collate.encode(chunk)
                    logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float()
                    p = torch.softmax(logits, -1).cpu()
                    ids = [self.dataset.schema.label_id(r[self.dataset.schema.label_column]) for r in chunk]
                    probs += [float(p[j, y]) for j, y in enumerate(ids)]
        finally:
            model.train(was_training)
        order = sorted((i for i, p in enumerate(probs) if p < 0.5), key=lambda i: (probs[i], i))
        return [rows[i] for i in order]

    def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._epoch_start = time.perf_counter()  # for the share of the epoch spent regenerating
        super().on_epoch_begin(args, state, control, **kwargs)

    def regenerate(self, epoch: int, model: Any, tokenizer: Any) -> dict[str, Any]:
        """This epoch's counterfactuals into the dataset's slots: all of them shuffled (``sampling``) or those the
        model gets wrong, hardest first (``hard``), up to ``budget``."""
        t0 = time.perf_counter()
        rows = self.generate(epoch)
        generated = len(rows)
        if self.mode == "hard":
            rows = self.hardest(rows, model, tokenizer)
        else:
            random.Random(f"slots-{epoch}").shuffle(rows)
        rows = rows[:self.budget]
        self.dataset.set_counterfactuals(rows, epoch)
        self._regen_s = time.perf_counter() - t0
        record = {"epoch": epoch, "cfaug_counterfactuals": len(rows), "cfaug_generated": generated,
                  "cfaug_regeneration_s": round(self._regen_s, 3)}
        self.history.append(record)
        return {k: v for k, v in record.items() if k != "epoch"}

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._epoch_start is None or not self.history or self.history[-1]["epoch"] != int(state.epoch + 1e-9) - 1:
            return
        total = time.perf_counter() - self._epoch_start
        self.history[-1]["cfaug_regeneration_share"] = round(self._regen_s / total, 4) if total > 0 else 0.0

    # ----------------------------------------------------------------------------------------- checkpoints
    def data_digest(self) -> str:
        import hashlib
        import json

        schema = self.dataset.schema
        columns = [c for c in (*schema.text_columns, schema.label_column, schema.id_column) if c]
        h = hashlib.sha256()
        for batch in self.dataset.originals.select_columns(columns).iter(batch_size=1000):
            h.update(json.dumps(batch, sort_keys=True, default=str).encode())
        return h.hexdigest()

    def state_dict(self) -> dict[str, Any]:
        return {"plan_epoch": self.dataset.plan_epoch, "slots": self.dataset.slots, "history": self.history,
                "num_rows": len(self.dataset.originals)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        if data["num_rows"] != len(self.dataset.originals):
            raise ValueError(f"{self.state_file} was written for {data['num_rows']} rows; the dataset has "
                             f"{len(self.dataset.originals)}.")
        self.dataset.set_counterfactuals(data["slots"], data["plan_epoch"])
        self.history = data["history"]
