"""The constant-length dataset every regenerating callback trains on.

The Trainer builds its dataloader (and sampler) once, for one length. A `SlotDataset` is the originals
followed by a fixed number of counterfactual slots that a callback refills in place each epoch; an empty slot
repeats an original, so every epoch has the same number of steps.
"""

from __future__ import annotations

import abc
from typing import Any

import torch

__all__ = ["SlotDataset"]


class SlotDataset(torch.utils.data.Dataset, abc.ABC):
    """Originals, then ``size`` slots. Subclasses say how many originals there are, how to read one, how many slots
    are filled and how to read a filled one."""

    size: int

    @abc.abstractmethod
    def num_originals(self) -> int:
        """How many original rows come first."""

    @abc.abstractmethod
    def original(self, index: int) -> dict[str, Any]:
        """Original row ``index`` as a training item (``is_counterfactual`` False)."""

    @abc.abstractmethod
    def num_filled(self) -> int:
        """How many slots hold a counterfactual this epoch."""

    @abc.abstractmethod
    def counterfactual(self, slot: int) -> dict[str, Any]:
        """Filled slot ``slot`` as a training item (``is_counterfactual`` True)."""

    def __len__(self) -> int:
        return self.num_originals() + self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        n = self.num_originals()
        if index < 0 or index >= len(self):
            raise IndexError(index)
        if index < n:
            return self.original(index)
        slot = index - n
        return self.counterfactual(slot) if slot < self.num_filled() else self.original(slot % n)
