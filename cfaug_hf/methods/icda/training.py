"""Training one rationale selector to convergence, as the ICDA reference does: AdamW at a constant learning rate,
gradients accumulated to 64 samples, an evaluation before the first step and after every epoch, a checkpoint only
when the dev loss falls *and* the selections pass both degeneracy tests, and early stopping after ``patience``
epochs without a checkpoint.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from .epoch import CounterfactualEpochDataset, redraw
from .selection import SelectionResult, is_degenerate

__all__ = ["SelectorCheckpointCallback", "SelectorTraining", "train_selector", "dev_selection"]


@dataclass
class SelectorTraining:
    """What one `train_selector` run did. ``best_epoch`` is -1 when no epoch beat the starting point with
    non-degenerate selections (the weights are then the starting ones)."""

    best_loss: float
    initial_loss: float
    best_epoch: int
    epochs_run: int
    degenerate: bool
    position_gap: float
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def checkpointed(self) -> bool:
        """Did any epoch after the start earn a checkpoint?"""
        return self.best_epoch >= 0


def dev_selection(selector: Any, dev: CounterfactualEpochDataset) -> tuple[list[dict[str, Any]], SelectionResult]:
    """The dev items (originals, then filled counterfactual slots) and the selector's selection on them."""
    items = [dev[i] for i in range(dev.num_originals() + dev.num_filled())]
    result = selector.select([it["sentence_ids"] for it in items], [it["labels"] for it in items], table=dev.table)
    return items, result


class SelectorCheckpointCallback(TrainerCallback):
    """Early stopping on dev loss with the ICDA degeneracy checks, for a `RationaleSelector` in a Trainer.

    After every epoch (and once before training, by calling `evaluate`) the selector classifies the dev set;
    the epoch earns a checkpoint (its weights are kept in memory) when its dev loss (mean negative log-likelihood)
    is below the best so far and the selected positions are not degenerate, checked separately on the dev
    originals and on the dev counterfactuals (the reference's two dev files). Training stops after ``patience``
    epochs without a checkpoint; `restore` loads the kept weights.

    Args:
        selector: the `RationaleSelector` being trained (its ``model`` is the Trainer's model).
        dev: the dev `CounterfactualEpochDataset` (originals, plus counterfactuals from iteration 1 on).
        patience: epochs without a checkpoint before stopping (the reference's 10).
        degeneration_threshold: the largest class gap in selected-position histograms (0.2).
        chance_floor: a gap must also exceed this quantile of the gaps chance gives (`is_degenerate`'s
            ``noise_quantile``, 0.99); ``None``: the paper's test as written.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> from cfaug_hf import RationaleSelector
        >>> selector = RationaleSelector.from_encoder(tiny_encoder(), sentence_layers=1, sentence_heads=2)
        >>> dev = CounterfactualEpochDataset([["Good food.", "Nice room."], ["Bad food.", "Nice room."]], [1, 0],
        ...                                  size=0)
        >>> callback = SelectorCheckpointCallback(selector, dev, patience=3)
        >>> callback.evaluate(epoch=-1)["checkpoint"]
        True
    """

    def __init__(self, selector: Any, dev: CounterfactualEpochDataset, *, patience: int = 10,
                 degeneration_threshold: float = 0.2, chance_floor: float | None = 0.99) -> None:
        if patience < 1:
            raise ValueError(f"patience must be >= 1, got {patience}.")
        self.selector, self.dev = selector, dev
        self.patience, self.threshold, self.chance_floor = patience, degeneration_threshold, chance_floor
        self.best_loss = math.inf
        self.best_epoch: int | None = None
        self.state_dict: dict[str, Any] | None = None
        self.history: list[dict[str, Any]] = []
        self.best_degenerate, self.best_gap = False, 0.0

    def evaluate(self, epoch: int) -> dict[str, Any]:
        """Score the current weights; keep them if they earn a checkpoint. ``epoch=-1`` is the starting point,
        which is always kept (as the reference does) so a run that never improves ends where it began."""
        items, result = dev_selection(self.selector, self.dev)
        loss = sum(-math.log(max(1.0 - e, 1e-12)) for e in result.error) / max(len(items), 1)
        degenerate, gap = False, 0.0
        for part in (False, True):  # originals, then counterfactuals: each must pass on its own
            idx = [i for i, it in enumerate(items) if bool(it["is_counterfactual"]) == part]
            if len(idx) < 2:
                continue
            sub = SelectionResult([result.selected[i] for i in idx], [result.predicted[i] for i in idx],
                                  [result.error[i] for i in idx])
            flag, g = is_degenerate(sub, [items[i]["labels"] for i in idx],
                                    [len(items[i]["sentence_ids"]) for i in idx], threshold=self.threshold,
                                    noise_quantile=self.chance_floor)
            degenerate, gap = degenerate or flag, max(gap, g)
        checkpoint = epoch < 0 or (loss < self.best_loss - 1e-9 and not degenerate)
        if checkpoint:
            self.best_loss, self.best_epoch = loss, epoch
            self.state_dict = {k: v.detach().clone().cpu() for k, v in self.selector.model.state_dict().items()}
            self.best_degenerate, self.best_gap = degenerate, gap
        record = {"epoch": epoch, "dev_loss": loss, "degenerate": degenerate, "position_gap": gap,
                  "checkpoint": checkpoint}
        self.history.append(record)
        return record

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        epoch = int(round(state.epoch or 0)) - 1
        self.evaluate(epoch)
        if self.best_epoch is not None and epoch - self.best_epoch >= self.patience:
            control.should_training_stop = True
        self.selector.model.train()

    def restore(self) -> None:
        """Load the weights of the best checkpoint into the selector."""
        if self.state_dict is not None:
            self.selector.model.load_state_dict(self.state_dict)


def train_selector(selector: Any, train: CounterfactualEpochDataset, dev: CounterfactualEpochDataset, *,
                   seed: int = 0, max_epochs: float = 100, patience: int = 10, learning_rate: float = 1e-4,
                   encoder_learning_rate: float = 1e-6, batch_size: int = 16, samples_per_step: int = 64,
                   weight_decay: float = 0.01, redraw_from: SelectionResult | None = None,
                   pool_quantile: float = 0.1, degeneration_threshold: float = 0.2,
                   chance_floor: float | None = 0.99, output_dir: str | Path = "runs/icda-selector",
                   training_args: dict[str, Any] | None = None) -> SelectorTraining:
    """Train ``selector`` on ``train`` with ``transformers.Trainer`` until the dev loss stops improving.

    The reference's loop: AdamW at a constant learning rate (``learning_rate`` for the new layers,
    ``encoder_learning_rate`` for a token encoder that is not frozen), gradients accumulated to
    ``samples_per_step`` samples, no gradient clipping; `SelectorCheckpointCallback` for checkpoints and early
    stopping; with ``redraw_from`` the counterfactual slots get fresh donors every epoch. The selector ends with
    the weights of its best checkpoint.
    """
    import torch
    from transformers import Trainer, TrainingArguments

    model = selector.model
    encoder = [p for n, p in model.named_parameters() if n.startswith("encoder.") and p.requires_grad]
    others = [p for n, p in model.named_parameters() if not n.startswith("encoder.") and p.requires_grad]
    groups = [{"params": others, "lr": learning_rate}]
    if encoder:
        groups.append({"params": encoder, "lr": encoder_learning_rate})
    optimizer = torch.optim.AdamW(groups, lr=learning_rate, weight_decay=weight_decay)

    class Redraw(TrainerCallback):
        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if redraw_from is not None:
                redraw(train, redraw_from, int(math.floor(state.epoch + 1e-9)), seed=seed,
                       pool_quantile=pool_quantile)

    args = {"per_device_train_batch_size": batch_size, "gradient_accumulation_steps":
            max(1, samples_per_step // batch_size), "lr_scheduler_type": "constant", "max_grad_norm": 0.0,
            "logging_strategy": "no", "report_to": [], "disable_tqdm": True, "save_strategy": "no",
            "eval_strategy": "no", "dataloader_pin_memory": torch.cuda.is_available(), **(training_args or {})}
    targs = TrainingArguments(output_dir=str(output_dir), num_train_epochs=max_epochs, seed=seed,
                              remove_unused_columns=False, **args)
    checkpoints = SelectorCheckpointCallback(selector, dev, patience=patience, chance_floor=chance_floor,
                                             degeneration_threshold=degeneration_threshold)
    trainer = Trainer(model=model, args=targs, train_dataset=train, data_collator=selector.collator(train.table),
                      optimizers=(optimizer, None), callbacks=[Redraw(), checkpoints])
    initial = checkpoints.evaluate(-1)["dev_loss"]
    model.train()
    trainer.train()
    checkpoints.restore()
    epochs_run = max((h["epoch"] for h in checkpoints.history), default=-1) + 1
    return SelectorTraining(best_loss=checkpoints.best_loss, initial_loss=initial,
                            best_epoch=checkpoints.best_epoch if checkpoints.best_epoch is not None else -1,
                            epochs_run=epochs_run, degenerate=checkpoints.best_degenerate,
                            position_gap=checkpoints.best_gap, history=checkpoints.history)


def keep_for_training(result: SelectionResult, labels: Sequence[int], num_sentences: Sequence[int], *,
                      cap_factor: float = 4) -> list[int]:
    """The reference's training set for iterations after the first: the correctly classified documents with two or
    more sentences, lowest error first, the same number from every class: at most ``len(labels) / cap_factor``
    per class, and no more than the smallest class has.

    Examples:
        >>> r = SelectionResult([[0]] * 6, [0, 0, 1, 1, 1, 0], [0.3, 0.1, 0.2, 0.4, 0.1, 0.9])
        >>> keep_for_training(r, [0, 0, 1, 1, 1, 1], [2] * 6, cap_factor=2)
        [1, 0, 4, 2]
    """
    if result.error is None:
        raise ValueError("keep_for_training needs prediction errors: call select(..., labels=...).")
    by_class: dict[int, list[int]] = {}
    for d, y in enumerate(labels):
        by_class.setdefault(int(y), [])
        if result.predicted[d] == int(y) and num_sentences[d] >= 2 and result.selected[d]:
            by_class[int(y)].append(d)
    per_class = min([int(len(labels) / cap_factor)] + [len(v) for v in by_class.values()])
    kept: list[int] = []
    for c in sorted(by_class):
        kept += sorted(by_class[c], key=lambda d: (result.error[d], d))[:per_class]
    return kept
