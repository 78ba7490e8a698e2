"""RACE (Zhu et al., EMNLP 2023): explain (rationale entities), edit evidence consistently, ad-check, generate
claims under entity constraints, post-check and filter."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import ROLES, RACEConfig

register_method("race", task="fact-verification", config=RACEConfig, roles=ROLES,
                augmenter=f"{__name__}.augmenter:RACEAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {
    "RACEAugmenter": ".augmenter", "RACE_CITATION": ".augmenter", "claim_generation_pairs": ".data",
    "pieces_from_pairs": ".data", "with_nei": ".data", "derangement": ".editor", "edit_evidence": ".editor"})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import RACEAugmenter

__all__ = ["RACEAugmenter", "RACEConfig", "RACE_CITATION", "claim_generation_pairs", "pieces_from_pairs", "with_nei",
           "derangement", "edit_evidence"]
