"""RACE (Zhu et al., EMNLP 2023): explain (rationale entities), edit evidence consistently, ad-check, generate
claims under entity constraints, post-check and filter."""

from .augmenter import RACE_CITATION, RACEAugmenter
from .config import RACEConfig
from .data import claim_generation_pairs, pieces_from_pairs, with_nei
from .editor import derangement, edit_evidence

__all__ = ["RACEAugmenter", "RACEConfig", "RACE_CITATION", "claim_generation_pairs", "pieces_from_pairs", "with_nei",
           "derangement", "edit_evidence"]
