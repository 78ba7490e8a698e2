"""Fit functions for components, built on ``transformers.Trainer``."""

from .checker import train_checker
from .common import time_budget_callback
from .editor import edit_pairs, train_editor
from .generator import bidirectional_pairs, train_generator
from .partial import partial_flips, sentence_verdicts
from .retriever import mine_hard_negatives, retrieval_accuracy, train_cf_dpr
from .tagger import TokenTagger, train_tagger

__all__ = ["train_generator", "train_checker", "train_editor", "edit_pairs", "partial_flips", "sentence_verdicts", "bidirectional_pairs",
           "time_budget_callback", "train_cf_dpr",
           "mine_hard_negatives", "retrieval_accuracy", "TokenTagger", "train_tagger"]
