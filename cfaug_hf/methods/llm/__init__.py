"""LLM-prompted counterfactuals (Li et al., LREC-COLING 2024): task templates for sentiment, NLI, NER and relation
extraction, lenient answer parsing, constraint checks and consistency filtering."""

from .augmenter import LLM_CF_CITATION, LLMCounterfactualAugmenter, balanced_target_probs
from .config import LLM_TASKS, LLMConfig
from .prompts import (DEMONSTRATIONS, GUIDELINES, build_prompt, cot_consistent, parse_list, parse_replacements,
                      parse_text, relation_text)

__all__ = ["LLMCounterfactualAugmenter", "LLMConfig", "LLM_CF_CITATION", "LLM_TASKS", "DEMONSTRATIONS", "GUIDELINES",
           "balanced_target_probs", "build_prompt", "cot_consistent", "parse_list", "parse_replacements",
           "parse_text", "relation_text"]
