"""The dataset ICDA trains on: originals plus counterfactual slots that are refilled in place each epoch.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place before each epoch's dataloader
iterator (and any worker process) is created: `trainer_callbacks.ICDACallback` does that from the model being
trained, `redraw` from a fixed selection (the iteration driver).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from ...sharing.configs import count_arg
from ...schema import SchemaError
from ...text.sentences import SentenceTable, split_sentences
from ...training.slots import SlotDataset
from .selection import CounterfactualSpec, Plan, SelectionResult, plan_counterfactuals
from ...verbosity import get_logger

__all__ = ["CounterfactualEpochDataset", "JoinedTextCollator", "epoch_seed", "redraw"]

logger = get_logger(__name__)


class CounterfactualEpochDataset(SlotDataset):
    """Originals followed by ``size`` counterfactual slots; ``len`` never changes.

    Items are ``{"sentence_ids", "labels", "is_counterfactual"}``; sentence ids point into `table`, so use
    `SentenceBatchCollator` (rationale model; with cached vectors when the table
    is embedded) or `JoinedTextCollator` (any sequence classifier), and ``remove_unused_columns=False``.
    Until a plan is set (e.g. the first epoch, which trains the selector on originals only) a slot repeats an
    original, so every epoch has the same number of steps.

    Args:
        documents: lists of sentences, or strings split with ``splitter``, or a ``datasets.Dataset`` with
            ``text_column`` and ``label_column``.
        labels: integer class ids (taken from the dataset when ``documents`` is one; names need ``label_names``).
        size: counterfactual slots (default: as many as documents, the paper's equal-size augmentation).
        label_names: the class names in id order; needed for string labels, and bounds the ids.
        num_labels: the number of classes of the model; ids must lie in ``0..num_labels-1``. Without it (or
            ``label_names``) the ids must be exactly ``0..K-1`` for the K classes present.

    Examples:
        >>> ds = CounterfactualEpochDataset([["Good food.", "Nice room."], ["Bad food.", "Nice room."]], [1, 0])
        >>> len(ds), ds[2]["is_counterfactual"]
        (4, False)
    """

    def __init__(self, documents: Any, labels: Sequence[int] | None = None, *, size: int | None = None,
                 table: SentenceTable | None = None, splitter: str = "builtin", text_column: str = "text",
                 label_column: str = "label", label_names: Sequence[str] | None = None,
                 num_labels: int | None = None):
        if hasattr(documents, "column_names"):
            for col in (text_column, label_column):
                if col not in documents.column_names:
                    raise ValueError(f"Column {col!r} is not in the dataset; it has {documents.column_names}.")
            labels = list(documents[label_column]) if labels is None else labels
            documents = list(documents[text_column])
        if labels is None:
            raise ValueError("CounterfactualEpochDataset needs labels.")
        if len(labels) != len(documents):
            raise ValueError(f"Got {len(documents)} documents but {len(labels)} labels.")
        self.table = table if table is not None else SentenceTable()
        self.docs: list[list[int]] = []
        self.empty_sentences = 0
        for i, doc in enumerate(documents):
            if isinstance(doc, str):
                doc = split_sentences(doc, splitter)
            elif not isinstance(doc, (list, tuple)) or not all(isinstance(s, str) for s in doc):
                raise ValueError(f"Document {i}: got {type(doc).__name__}; expected a string or a list of strings.")
            kept = [s for s in doc if s.strip()]
            self.empty_sentences += len(doc) - len(kept)
            if not kept:
                raise ValueError(f"Document {i} has no non-empty sentence.")
            self.docs.append(self.table.add_document(kept))
        self.labels = [self._label(y, i, label_names, label_column) for i, y in enumerate(labels)]
        _check_label_ids(self.labels, label_column, len(label_names) if label_names else num_labels)
        if len(set(self.labels)) < 2:
            logger.warning("The training data has one class only (%s): no counterfactual can be made; the "
                           "counterfactual slots will repeat originals.", set(self.labels))
        self.size = len(self.docs) if size is None else count_arg("size", size)
        self.specs: list[CounterfactualSpec] = []
        self.plan_epoch: int | None = None
        self.epoch = 0

    @staticmethod
    def _label(value: Any, row: int, names: Sequence[str] | None, column: str) -> int:
        if isinstance(value, str):
            if names is None:
                raise SchemaError(f"Column {column!r} at row {row}: got the label name {value!r}; string labels "
                                  f"need label_names=[...] (the class names in id order), or pass integer ids.")
            if value not in names:
                raise SchemaError(f"Column {column!r} at row {row}: unknown label {value!r}; expected one of "
                                  f"{list(names)}.")
            return list(names).index(value)
        if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
            raise SchemaError(f"Column {column!r} at row {row}: got {value!r}; expected an integer class id or a "
                              f"label name.")
        return int(value)

    @classmethod
    def from_dataset(cls, dataset: Any, schema: Any, *, size: int | None = None, splitter: str = "builtin",
                     table: SentenceTable | None = None) -> CounterfactualEpochDataset:
        """From a ``datasets.Dataset`` and a `TaskSchema`: the document is the schema's first edit
        column (a string, split with ``splitter``, or a list of sentences), labels in any form the schema reads.
        Bad cells raise `SchemaError` naming the column and row.

        Examples:
            >>> from datasets import Dataset
            >>> from cfaug_hf import TaskSchema
            >>> ds = Dataset.from_dict({"text": ["Good food. Nice room.", "Bad food. Nice room."],
            ...                         "label": ["positive", "negative"]})
            >>> CounterfactualEpochDataset.from_dataset(ds, TaskSchema.sentiment()).labels
            [1, 0]
        """
        schema.validate_features(dataset.features)
        column = schema.edit_columns[0]
        schema.validate_batch({c: dataset[c] for c in (*schema.text_columns, schema.label_column)},
                              list(range(len(dataset))))
        labels = [schema.label_id(y, row=i) for i, y in enumerate(dataset[schema.label_column])]
        return cls(list(dataset[column]), labels, size=size, table=table, splitter=splitter,
                   label_column=schema.label_column, num_labels=schema.num_labels)

    def set_epoch(self, epoch: int) -> None:
        """Called by the Trainer's dataloader each epoch; the counterfactuals were set at ``on_epoch_begin``."""
        self.epoch = epoch

    def set_specs(self, specs: Sequence[CounterfactualSpec], epoch: int | None) -> None:
        """Fill the counterfactual slots (beyond ``size`` specs are cut; missing ones repeat originals)."""
        self.specs = list(specs)[:self.size]
        self.plan_epoch = epoch

    def sentences_of(self, spec: CounterfactualSpec) -> list[int]:
        ids = list(self.docs[spec.source])
        for pos, donor, donor_pos in spec.swaps:
            ids[pos] = self.docs[donor][donor_pos]
        return ids

    def num_originals(self) -> int:
        return len(self.docs)

    def original(self, index: int) -> dict[str, Any]:
        return {"sentence_ids": self.docs[index], "labels": self.labels[index], "is_counterfactual": False}

    def num_filled(self) -> int:
        return len(self.specs)

    def counterfactual(self, slot: int) -> dict[str, Any]:
        spec = self.specs[slot]
        return {"sentence_ids": self.sentences_of(spec), "labels": spec.label, "is_counterfactual": True}

    @property
    def num_sentences(self) -> list[int]:
        return [len(d) for d in self.docs]


def _check_label_ids(labels: list[int], column: str, num_labels: int | None) -> None:
    """Class ids must index the model's output; a stray id would fail deep inside torch's loss."""
    if not labels:
        return
    if num_labels is not None:
        for row, y in enumerate(labels):
            if not 0 <= y < num_labels:
                raise SchemaError(f"Column {column!r} at row {row}: class id {y} is outside 0..{num_labels - 1} "
                                  f"({num_labels} classes).")
        return
    present = sorted(set(labels))
    if present != list(range(len(present))):
        row = next(i for i, y in enumerate(labels) if y not in range(len(present)))
        raise SchemaError(f"Column {column!r} at row {row}: class id {labels[row]}; the {len(present)} classes "
                          f"present are {present}, but ids must be 0..{len(present) - 1}. Pass num_labels= (or "
                          f"label_names=) if the model has more classes than the data shows.")


class JoinedTextCollator:
    """For any sequence classifier: joins an item's sentences and tokenizes (``remove_unused_columns=False``)."""

    def __init__(self, tokenizer: Any, table: SentenceTable, *, max_length: int = 512, joiner: str = " "):
        self.tokenizer, self.table, self.max_length, self.joiner = tokenizer, table, max_length, joiner

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        texts = [self.joiner.join(self.table.texts(it["sentence_ids"])) for it in items]
        batch = dict(self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                                    return_tensors="pt"))
        batch["labels"] = torch.tensor([int(it["labels"]) for it in items], dtype=torch.long)
        return batch


def epoch_seed(seed: int, epoch: int) -> int:
    """The plan seed of an epoch: the same in every process and on resume."""
    return random.Random(f"{seed}-{epoch}").randrange(2**31)


def redraw(dataset: CounterfactualEpochDataset, selection: SelectionResult, epoch: int, *, seed: int = 0,
           pool_quantile: float = 0.1) -> Plan:
    """Fresh donors from a fixed selection (the iteration driver's per-epoch sampling)."""
    plan = plan_counterfactuals(selection, dataset.labels, dataset.num_sentences, size=dataset.size,
                                pool_quantile=pool_quantile, seed=epoch_seed(seed, epoch), sentences=dataset.docs)
    dataset.set_specs(plan.specs, epoch)
    return plan
