"""Trainer integration for cfaug_hf: regenerate counterfactuals inside an existing ``transformers.Trainer``."""

from .icda import STATE_FILE, CounterfactualEpochDataset, ICDACallback, JoinedTextCollator, epoch_seed, redraw

__all__ = ["ICDACallback", "CounterfactualEpochDataset", "JoinedTextCollator", "STATE_FILE", "epoch_seed", "redraw"]
