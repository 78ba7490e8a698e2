"""ICDA inside an existing ``transformers.Trainer``: a dataset whose counterfactual rows change every epoch, and the
callback that regenerates them from the model being trained.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place: `CounterfactualEpochDataset`
holds the originals plus a fixed number of counterfactual slots, and `ICDACallback` refills the slots at
``on_epoch_begin``, before the epoch's dataloader iterator (and any worker process) is created.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from cfaug_hf.sharing.configs import count_arg
from cfaug_hf.methods.icda.config import ICDAConfig
from cfaug_hf.methods.icda.epoch import CounterfactualEpochDataset, JoinedTextCollator, epoch_seed, redraw
from cfaug_hf.methods.icda.online import OnlineICDA
from cfaug_hf.methods.icda.selection import CounterfactualSpec

from .base import RegenerationCallback

__all__ = ["CounterfactualEpochDataset", "ICDACallback", "JoinedTextCollator", "STATE_FILE", "epoch_seed", "redraw"]

#: The file 0.1.0 checkpoints kept ICDA's state in (read when resuming such a checkpoint; the state now lives in
#: ``trainer_state.json``, see `trainer_callbacks.base`).
STATE_FILE = "icda_state.json"


class ICDACallback(RegenerationCallback):
    """Regenerates ICDA counterfactuals every epoch from the model the Trainer is training.

    At each ``on_epoch_begin`` from ``start_epoch`` on, one round of `OnlineICDA`: the current model selects a rationale sentence for every
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
        ...                   data_collator=selector.collator(train.table))
        >>> trainer.add_callback(icda.attach(trainer))  # attach: its figures go through Trainer.log
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
        super().__init__(dataset, tokenizer=tokenizer, start_epoch=start_epoch, on_data_change=on_data_change)
        # One config with the augmenter: seed and pool_quantile come from ICDAConfig (keywords still override).
        config = dataclasses.replace(config or ICDAConfig(), **overrides) if overrides else config or ICDAConfig()
        self.round = OnlineICDA(config, batch_size=batch_size, max_length=max_length)

    @property
    def config(self) -> ICDAConfig:
        return self.round.config

    def regenerate(self, epoch: int, model: Any, tokenizer: Any) -> dict[str, Any]:
        """One ICDA round (`cfaug_hf.methods.icda.online.OnlineICDA`) with the model being trained."""
        _, record = self.round.run(self.dataset, model, tokenizer, epoch)
        self.history.append(record)
        return {k: record[k] for k in ("icda_delta_A", "icda_counterfactuals", "icda_train_accuracy")}

    # ----------------------------------------------------------------------------------------- checkpoints
    def data_digest(self) -> str:
        from cfaug_hf.fingerprint import digest_json

        table = self.dataset.table
        return digest_json({"documents": [table.texts(doc) for doc in self.dataset.docs],
                            "labels": list(self.dataset.labels)})

    def state_dict(self) -> dict[str, Any]:
        return {"plan_epoch": self.dataset.plan_epoch,
                "specs": [[s.source, [list(x) for x in s.swaps], s.label] for s in self.dataset.specs],
                **self.round.state_dict(), "history": self.history, "num_documents": len(self.dataset.docs)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        if data["num_documents"] != len(self.dataset.docs):
            raise ValueError(f"The saved state was written for {data['num_documents']} documents; the dataset has "
                             f"{len(self.dataset.docs)}.")
        specs = [CounterfactualSpec(src, tuple(tuple(x) for x in swaps), label) for src, swaps, label in data["specs"]]
        self.dataset.set_specs(specs, data["plan_epoch"])
        self.round.load_state_dict(data)
        self.history = data["history"]
