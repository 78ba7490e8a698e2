"""CORE (Dixit et al., Findings of EMNLP 2022): counterfactual retrieval (CF-DPR over a FAISS corpus index), then an
LLM editor that borrows the retrieved words."""

from .augmenter import CORE_CITATION, COREAugmenter
from .config import CORE_MODES, COREConfig
from .prompts import DEMONSTRATIONS, INSTRUCTIONS, build_prompt, keywords, parse_answer
from .reranker import reranker_rows, train_reranker

__all__ = ["COREAugmenter", "COREConfig", "CORE_CITATION", "CORE_MODES", "DEMONSTRATIONS", "INSTRUCTIONS",
           "build_prompt", "keywords", "parse_answer", "reranker_rows", "train_reranker"]
