"""Trainer integration for cfaug_hf: regenerate counterfactuals inside an existing ``transformers.Trainer``."""

from .augment import AugmentationCallback, AugmentedEpochDataset, SchemaCollator
from .base import RegenerationCallback
from .icda import STATE_FILE, CounterfactualEpochDataset, ICDACallback, JoinedTextCollator, epoch_seed, redraw
from cfaug_hf.methods.icda.training import SelectorCheckpointCallback

__all__ = ["AugmentationCallback", "AugmentedEpochDataset", "SchemaCollator", "RegenerationCallback", "ICDACallback",
           "CounterfactualEpochDataset", "JoinedTextCollator", "STATE_FILE", "epoch_seed", "redraw",
           "SelectorCheckpointCallback"]
