"""CFGen-style NER counterfactuals (Zeng et al., EMNLP 2020): entities replaced by other entities of the same type
seen in the dataset. The non-LLM baseline of Li et al. (2024) for NER."""

from .augmenter import CFGEN_CITATION, CFGenAugmenter, CFGenConfig

__all__ = ["CFGenAugmenter", "CFGenConfig", "CFGEN_CITATION"]
