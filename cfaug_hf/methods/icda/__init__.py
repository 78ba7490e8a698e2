"""ICDA (Plyler and Chi, AAAI 2025): rationale-swap counterfactuals from a sentence rationale selector, iterated."""

from .augmenter import ICDA_CITATION, RationaleSwapAugmenter
from .config import ICDAConfig
from .driver import ICDAResult, ICDARun, run_icda
from .paper import PAPER_LOOP, paper_loop
from .epoch import CounterfactualEpochDataset, JoinedTextCollator, redraw
from .training import SelectorCheckpointCallback, SelectorTraining, keep_for_training, train_selector
from .selection import (CounterfactualSpec, OcclusionSelector, Plan, SelectionResult, is_degenerate,
                        occlusion_rationales, plan_counterfactuals, position_histograms, rationale_precision,
                        rationale_set_change)

__all__ = ["RationaleSwapAugmenter", "ICDAConfig", "ICDA_CITATION", "SelectionResult", "Plan", "CounterfactualSpec",
           "OcclusionSelector", "plan_counterfactuals", "rationale_set_change", "position_histograms",
           "is_degenerate", "rationale_precision", "occlusion_rationales", "run_icda", "ICDARun", "ICDAResult",
           "CounterfactualEpochDataset", "JoinedTextCollator", "redraw", "SelectorCheckpointCallback",
           "SelectorTraining", "keep_for_training", "train_selector", "paper_loop", "PAPER_LOOP"]
