"""ICDA (Plyler and Chi, AAAI 2025): rationale-swap counterfactuals from a sentence rationale selector, iterated."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import ROLES, ICDAConfig

register_method("icda", task="sentiment-analysis", config=ICDAConfig, roles=ROLES,
                augmenter=f"{__name__}.augmenter:RationaleSwapAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("RationaleSwapAugmenter", "ICDA_CITATION"), ".augmenter"),
    **dict.fromkeys(("ICDAResult", "ICDARun", "run_icda"), ".driver"),
    **dict.fromkeys(("PAPER_LOOP", "paper_loop"), ".paper"), "OnlineICDA": ".online",
    **dict.fromkeys(("CounterfactualEpochDataset", "JoinedTextCollator", "redraw"), ".epoch"),
    **dict.fromkeys(("SelectorCheckpointCallback", "SelectorTraining", "keep_for_training", "train_selector"),
                    ".training"),
    **dict.fromkeys(("CounterfactualSpec", "OcclusionSelector", "Plan", "SelectionResult", "is_degenerate",
                     "occlusion_rationales", "plan_counterfactuals", "position_histograms", "rationale_precision",
                     "rationale_set_change"), ".selection")})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import RationaleSwapAugmenter

__all__ = ["RationaleSwapAugmenter", "ICDAConfig", "ICDA_CITATION", "SelectionResult", "Plan", "CounterfactualSpec",
           "OcclusionSelector", "plan_counterfactuals", "rationale_set_change", "position_histograms",
           "is_degenerate", "rationale_precision", "occlusion_rationales", "run_icda", "ICDARun", "ICDAResult",
           "CounterfactualEpochDataset", "JoinedTextCollator", "redraw", "SelectorCheckpointCallback",
           "SelectorTraining", "keep_for_training", "train_selector", "paper_loop", "PAPER_LOOP", "OnlineICDA"]
