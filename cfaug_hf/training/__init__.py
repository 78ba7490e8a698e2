"""Fit functions for components, built on ``transformers.Trainer``."""

from .checker import train_checker
from .common import time_budget_callback
from .generator import bidirectional_pairs, train_generator

__all__ = ["train_generator", "train_checker", "bidirectional_pairs", "time_budget_callback"]
