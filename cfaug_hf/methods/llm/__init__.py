"""LLM-prompted counterfactuals (Li et al., LREC-COLING 2024): task templates for sentiment, NLI, NER and relation
extraction, lenient answer parsing, constraint checks and consistency filtering."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import LLM_TASKS, ROLES, LLMConfig

register_method("llm", task="sentiment-analysis", config=LLMConfig, roles=ROLES,
                augmenter=f"{__name__}.augmenter:LLMCounterfactualAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("LLMCounterfactualAugmenter", "LLM_CF_CITATION", "balanced_target_probs"), ".augmenter"),
    **dict.fromkeys(("DEMONSTRATIONS", "GUIDELINES", "build_prompt", "cot_consistent", "parse_list",
                     "parse_replacements", "parse_text", "relation_text"), ".prompts")})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import LLMCounterfactualAugmenter

__all__ = ["LLMCounterfactualAugmenter", "LLMConfig", "LLM_CF_CITATION", "LLM_TASKS", "DEMONSTRATIONS", "GUIDELINES",
           "balanced_target_probs", "build_prompt", "cot_consistent", "parse_list", "parse_replacements",
           "parse_text", "relation_text"]
