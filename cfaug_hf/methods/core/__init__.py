"""CORE (Dixit et al., Findings of EMNLP 2022): counterfactual retrieval (CF-DPR over a FAISS corpus index), then an
LLM editor that borrows the retrieved words."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import CORE_MODES, ROLES, COREConfig

register_method("core", task="sentiment-analysis", config=COREConfig, roles=ROLES,
                augmenter=f"{__name__}.augmenter:COREAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {
    "COREAugmenter": ".augmenter", "CORE_CITATION": ".augmenter", "DEMONSTRATIONS": ".prompts",
    "INSTRUCTIONS": ".prompts", "build_prompt": ".prompts", "keywords": ".prompts", "parse_answer": ".prompts",
    "reranker_rows": ".reranker", "train_reranker": ".reranker"})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import COREAugmenter

__all__ = ["COREAugmenter", "COREConfig", "CORE_CITATION", "CORE_MODES", "DEMONSTRATIONS", "INSTRUCTIONS",
           "build_prompt", "keywords", "parse_answer", "reranker_rows", "train_reranker"]
