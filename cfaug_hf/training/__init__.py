"""Fit functions for components, built on ``transformers.Trainer``."""

from .checker import train_checker
from .generator import bidirectional_pairs, train_generator

__all__ = ["train_generator", "train_checker", "bidirectional_pairs"]
