"""What every regenerating callback shares: the guards that keep the Trainer's dataloader seeing the regenerated rows,
logging through ``Trainer.log``, and a state file in each checkpoint so ``resume_from_checkpoint`` continues with
the same counterfactuals.

The Trainer builds its train dataloader once, so swapping ``trainer.train_dataset`` from a callback does nothing.
What works is one dataset object of constant length whose rows are redrawn in place at ``on_epoch_begin``, before
the epoch's dataloader iterator (and any worker process) is created.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

__all__ = ["RegenerationCallback", "calling_trainer", "resumed_checkpoint"]


def calling_trainer() -> Any:
    """The Trainer whose callback handler is calling us: callbacks are not handed the Trainer itself."""
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


def resumed_checkpoint(args: Any, state: Any) -> Path:
    """The checkpoint folder the Trainer is resuming from: the ``resume_from_checkpoint`` it was given (a folder
    anywhere, or the last one of ``output_dir`` for ``True``), as the Trainer itself resolved it. Callbacks are not
    handed it, so it is read from the Trainer's own call; without one, ``TrainingArguments.resume_from_checkpoint``,
    then ``output_dir/checkpoint-<global_step>``."""
    from transformers import Trainer

    frame = sys._getframe(1)
    for _ in range(16):
        if frame is None:
            break
        if isinstance(frame.f_locals.get("self"), Trainer) and "resume_from_checkpoint" in frame.f_locals:
            value = frame.f_locals["resume_from_checkpoint"]
            if isinstance(value, (str, os.PathLike)):
                return Path(value)
        frame = frame.f_back
    given = getattr(args, "resume_from_checkpoint", None)
    if isinstance(given, (str, os.PathLike)) and os.path.isdir(given):
        return Path(given)
    return Path(args.output_dir) / f"checkpoint-{state.global_step}"


class RegenerationCallback(TrainerCallback):
    """Base of the callbacks that refill a dataset's rows each epoch. Subclasses set ``state_file`` and implement
    ``state_dict`` / ``load_state_dict`` (what a checkpoint must remember) and regenerate in ``on_epoch_begin``."""

    state_file = "cfaug_state.json"

    def __init__(self, dataset: Any, *, on_data_change: str = "refuse") -> None:
        if on_data_change not in ("refuse", "regenerate"):
            raise ValueError(f"on_data_change must be 'refuse' or 'regenerate', got {on_data_change!r}.")
        self.on_data_change = on_data_change
        self._digest: str | None = None
        self.dataset = dataset
        self.history: list[dict[str, Any]] = []
        self._length: int | None = None
        self._trainer: Any = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def attach(self, trainer: Any) -> RegenerationCallback:
        """Log through ``trainer`` (found automatically when the callback is given to the Trainer)."""
        self._trainer = trainer
        return self

    # ----------------------------------------------------------------------------------------------- guards
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
        self._trainer = self._trainer or calling_trainer()
        if state.global_step > 0:
            self._restore(resumed_checkpoint(args, state))

    def check_length(self) -> None:
        if self._length is not None and len(self.dataset) != self._length:
            raise RuntimeError(f"The {self.name} dataset changed length ({self._length} -> {len(self.dataset)}); "
                               f"the Trainer's sampler was built for the old length and would skip or repeat rows.")

    def log(self, state: Any, epoch: int, logs: dict[str, Any]) -> None:
        """Through ``Trainer.log`` (console, TensorBoard, W&B, trainer_state.json), or straight into the state's
        log history when no Trainer was found."""
        if self._trainer is not None:
            self._trainer.log({k: v for k, v in logs.items() if isinstance(v, (int, float)) and v is not None})
        else:
            state.log_history.append({"epoch": float(epoch), "step": state.global_step, **logs})

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

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if not folder.is_dir():
            return
        tmp = folder / (self.state_file + ".tmp")
        tmp.write_text(json.dumps({"format_version": 1, "data_digest": self._data_digest(), **self.state_dict()}))
        os.replace(tmp, folder / self.state_file)

    def _restore(self, folder: Path) -> None:
        path = folder / self.state_file
        if not path.is_file():
            raise FileNotFoundError(f"Resuming from {folder} but {path} is missing: the checkpoint was not written "
                                    f"with {self.name}, so the counterfactuals it trained on cannot be restored.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path} is not valid JSON ({err}); the checkpoint is damaged. Resume from another "
                             f"checkpoint, or start the run again.") from None
        if not isinstance(data, dict) or not isinstance(data.get("history"), list):
            raise ValueError(f"{path} is not a {self.name} state (expected an object with a 'history' list); the "
                             f"checkpoint is damaged. Resume from another checkpoint, or start the run again.")
        saved, now = data.get("data_digest"), self._data_digest()
        if saved and now and saved != now:
            if self.on_data_change == "refuse":
                raise ValueError(f"{path} was written for other training data: the dataset given to {self.name} "
                                 f"changed since {folder.name}, so its counterfactuals belong to other rows. Resume "
                                 f"with the data that checkpoint trained on, or pass on_data_change='regenerate' to "
                                 f"{self.name} to draw new counterfactuals for the new data.")
            import logging

            logging.getLogger(__name__).warning(
                "%s: the training data changed since %s; its counterfactuals are not restored, and new ones are "
                "drawn for the new data at the next epoch (on_data_change='regenerate').", self.name, folder)
            self.history = data["history"]
            return
        try:
            self.load_state_dict(data)
        except (KeyError, TypeError, IndexError) as err:
            raise ValueError(f"{path} is incomplete or damaged ({type(err).__name__}: {err}); resume from another "
                             f"checkpoint, or start the run again.") from None
