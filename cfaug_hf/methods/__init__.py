"""One subpackage per method: a config dataclass and an augmenter, registered here by name."""

from .. import registry
from .cfgen import CFGenAugmenter, CFGenConfig
from .core import COREAugmenter, COREConfig
from .crossaug import CrossAugAugmenter, CrossAugConfig
from .icda import ICDAConfig, RationaleSwapAugmenter
from .llm import LLMConfig, LLMCounterfactualAugmenter
from .race import RACEAugmenter, RACEConfig

#: Augmenter classes by their ``method`` name (the registry's table; kept under this name for older code).
METHODS = registry.AUGMENTERS

__all__ = ["CFGenAugmenter", "CFGenConfig", "COREAugmenter", "COREConfig", "CrossAugAugmenter", "CrossAugConfig",
           "LLMConfig", "LLMCounterfactualAugmenter", "RACEAugmenter", "RACEConfig", "RationaleSwapAugmenter",
           "ICDAConfig", "METHODS"]
