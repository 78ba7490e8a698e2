"""What every regenerating callback shares: the guards that keep the Trainer's dataloader seeing the regenerated rows,
the start-of-epoch prologue, logging through ``Trainer.log``, and a state saved with each checkpoint so
``resume_from_checkpoint`` continues with the same counterfactuals.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place at ``on_epoch_begin``, before
the epoch's dataloader iterator (and any worker process) is created.

The state goes where the Trainer keeps its callbacks' states (``TrainerState.stateful_callbacks``, through
``transformers.ExportableState``): inside the checkpoint's ``trainer_state.json``, which the Trainer loads from
whichever checkpoint it resumes, so nothing has to find the folder. Checkpoints written by cfaug-hf 0.1.0 kept it in
a file of its own (``state_file``) in ``output_dir/checkpoint-<step>``, which is still read.
"""

from __future__ import annotations

import abc
import json
import logging
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState
from cfaug_hf.verbosity import get_logger

__all__ = ["RegenerationCallback"]

logger = get_logger(__name__)


class RegenerationCallback(TrainerCallback, ExportableState, metaclass=abc.ABCMeta):
    """Base of the callbacks that refill a dataset's rows each epoch.

    Subclasses implement `regenerate` (one epoch's redraw, returning what to log) and ``state_dict`` /
    ``load_state_dict`` (what a checkpoint must remember), and may set ``data_digest``. Hand the callback the
    Trainer with `attach` (``trainer.add_callback(callback.attach(trainer))``, or ``callback.attach(trainer)`` after
    passing it in ``callbacks=``) so its figures go through ``Trainer.log`` (console, TensorBoard, W&B); without it
    they are kept in ``trainer_state.json``'s log history only.
    """

    #: The file 0.1.0 checkpoints kept the state in (read when resuming such a checkpoint).
    state_file = "cfaug_state.json"

    def __init__(self, dataset: Any, *, tokenizer: Any = None, start_epoch: int = 1,
                 on_data_change: str = "refuse") -> None:
        if on_data_change not in ("refuse", "regenerate"):
            raise ValueError(f"on_data_change must be 'refuse' or 'regenerate', got {on_data_change!r}.")
        self.on_data_change = on_data_change
        self._digest: str | None = None
        self.dataset = dataset
        self.tokenizer = tokenizer
        self.start_epoch = start_epoch
        self.history: list[dict[str, Any]] = []
        self._length: int | None = None
        self._trainer: Any = None
        self._warned = False

    @property
    def name(self) -> str:
        return type(self).__name__

    def attach(self, trainer: Any) -> RegenerationCallback:
        """Log through ``trainer``'s ``log``; returns the callback (for ``trainer.add_callback``)."""
        self._trainer = trainer
        return self

    # ----------------------------------------------------------------------------------------------- guards
    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if getattr(args, "restore_callback_states_from_checkpoint", False):
            raise ValueError(f"{self.name} restores its own state when the Trainer resumes; leave "
                             f"TrainingArguments(restore_callback_states_from_checkpoint=False), which would rebuild "
                             f"the callback without its dataset.")

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if getattr(args, "remove_unused_columns", False):
            raise ValueError(f"{self.name} needs TrainingArguments(remove_unused_columns=False): its dataset's items "
                             f"hold the text columns, which the collator tokenizes, and the Trainer would drop them "
                             f"before the first batch (they are not arguments of the model's forward).")
        if args.dataloader_num_workers > 0 and args.dataloader_persistent_workers:
            raise ValueError(f"{self.name} cannot work with dataloader_persistent_workers=True: persistent workers "
                             f"keep their own copy of the dataset, so they would train on stale counterfactuals. "
                             f"Set dataloader_persistent_workers=False.")
        base = getattr(kwargs.get("train_dataloader"), "dataset", None)
        if base is not None and base is not self.dataset:
            raise ValueError(f"The Trainer's train_dataset is not the {type(self.dataset).__name__} given to "
                             f"{self.name}, so regenerated counterfactuals would never be seen. Pass the same "
                             f"object as train_dataset.")
        self._length = len(self.dataset)
        # The Trainer updates this entry at each save and fails on a missing one (a checkpoint from 0.1.0).
        state.stateful_callbacks = state.stateful_callbacks or {}
        saved = state.stateful_callbacks.setdefault(self.name, {"args": {}, "attributes": {}, "cfaug": None})
        if state.global_step > 0:
            if isinstance(saved, dict) and saved.get("cfaug") is not None:
                self._apply(saved["cfaug"], f"the {self.name} state in trainer_state.json")
            else:  # a checkpoint written by cfaug-hf 0.1.0, resumed from output_dir
                self._restore(Path(args.output_dir) / f"checkpoint-{state.global_step}")

    def check_length(self) -> None:
        if self._length is not None and len(self.dataset) != self._length:
            raise RuntimeError(f"The {self.name} dataset changed length ({self._length} -> {len(self.dataset)}); "
                               f"the Trainer's sampler was built for the old length and would skip or repeat rows.")

    # ------------------------------------------------------------------------------------------ each epoch
    def on_epoch_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self.check_length()
        epoch = int(math.floor(state.epoch + 1e-9))
        if epoch < self.start_epoch or self.dataset.plan_epoch == epoch:
            return  # before the first counterfactual epoch, or resumed inside an epoch already planned
        logs = self.regenerate(epoch, model, self.tokenizer or kwargs.get("processing_class"))
        self.log(state, epoch, logs)

    @abc.abstractmethod
    def regenerate(self, epoch: int, model: Any, tokenizer: Any) -> dict[str, Any]:
        """Refill the dataset's counterfactual rows for ``epoch``; returns the figures to log."""

    def log(self, state: Any, epoch: int, logs: dict[str, Any]) -> None:
        """Through ``Trainer.log`` once `attach` handed the Trainer, or into the state's log history."""
        numbers = {k: v for k, v in logs.items() if isinstance(v, (int, float)) and v is not None}
        if self._trainer is not None:
            self._trainer.log(numbers)
            return
        if not self._warned:
            self._warned = True
            logger.info("%s: call attach(trainer) to log through Trainer.log; its figures are kept in the log "
                        "history of trainer_state.json.", self.name)
        state.log_history.append({"epoch": float(epoch), "step": state.global_step, **numbers})

    # ----------------------------------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict[str, Any]:
        return {"history": self.history}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.history = data["history"]

    def data_digest(self) -> str:
        """A digest of the training data the counterfactuals were drawn from, saved with each checkpoint so a
        resume notices data that changed since (subclasses digest their dataset's rows)."""
        return ""

    def _data_digest(self) -> str:
        if self._digest is None:  # the data does not change during a run: digested once
            self._digest = self.data_digest()
        return self._digest

    def state(self) -> dict[str, Any]:
        """What the Trainer saves in ``trainer_state.json`` (``ExportableState``): the callback's state under
        ``cfaug``; ``args`` and ``attributes`` stay empty, since the callback restores itself."""
        cfaug = (None if self._length is None  # before training: nothing to save yet
                 else {"format_version": 1, "data_digest": self._data_digest(), **self.state_dict()})
        return {"args": {}, "attributes": {}, "cfaug": cfaug}

    def _restore(self, folder: Path) -> None:
        """From a 0.1.0 checkpoint's own state file."""
        path = folder / self.state_file
        if not path.is_file():
            raise FileNotFoundError(f"Resuming from {folder} but its trainer_state.json has no {self.name} state and "
                                    f"{path} is missing: the checkpoint was not written with {self.name}, so the "
                                    f"counterfactuals it trained on cannot be restored.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path} is not valid JSON ({err}); the checkpoint is damaged. Resume from another "
                             f"checkpoint, or start the run again.") from None
        self._apply(data, str(path))

    def _apply(self, data: Any, where: str) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("history"), list):
            raise ValueError(f"{where} is not a {self.name} state (expected an object with a 'history' list); the "
                             f"checkpoint is damaged. Resume from another checkpoint, or start the run again.")
        saved, now = data.get("data_digest"), self._data_digest()
        if saved and now and saved != now:
            if self.on_data_change == "refuse":
                raise ValueError(f"{where} was written for other training data: the dataset given to {self.name} "
                                 f"changed since, so its counterfactuals belong to other rows. Resume with the data "
                                 f"that checkpoint trained on, or pass on_data_change='regenerate' to {self.name} to "
                                 f"draw new counterfactuals for the new data.")
            logger.warning("%s: the training data changed since the checkpoint; its counterfactuals are not restored, "
                           "and new ones are drawn for the new data at the next epoch (on_data_change='regenerate').",
                           self.name)
            self.history = data["history"]
            return
        try:
            self.load_state_dict(data)
        except (KeyError, TypeError, IndexError) as err:
            raise ValueError(f"{where} is incomplete or damaged ({type(err).__name__}: {err}); resume from another "
                             f"checkpoint, or start the run again.") from None
