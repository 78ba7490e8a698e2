"""CFGen-style NER counterfactuals (Zeng et al., EMNLP 2020): entities replaced by other entities of the same type
seen in the dataset. The non-LLM baseline of Li et al. (2024) for NER."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import CFGenConfig

register_method("cfgen", task="token-classification", config=CFGenConfig,
                augmenter=f"{__name__}.augmenter:CFGenAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {"CFGenAugmenter": ".augmenter", "CFGEN_CITATION": ".augmenter"})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import CFGenAugmenter

__all__ = ["CFGenAugmenter", "CFGenConfig", "CFGEN_CITATION"]
