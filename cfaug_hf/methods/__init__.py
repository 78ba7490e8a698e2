"""One subpackage per method. Each declares itself on import (`cfaug_hf.registry.register_method`: its name, task,
config and component roles) and imports its augmenter class on first use, so importing this package is cheap."""

from .. import registry
from . import cfgen, core, crossaug, icda, llm, race
from .cfgen import CFGenConfig
from .core import COREConfig
from .crossaug import CrossAugConfig
from .icda import ICDAConfig
from .llm import LLMConfig
from .race import RACEConfig

__getattr__, __dir__ = registry.lazy_exports(__name__, {
    "CFGenAugmenter": ".cfgen", "COREAugmenter": ".core", "CrossAugAugmenter": ".crossaug",
    "RationaleSwapAugmenter": ".icda", "LLMCounterfactualAugmenter": ".llm", "RACEAugmenter": ".race"})

#: Augmenter classes imported so far, by their ``method`` name (the registry's table; kept for older code).
METHODS = registry.AUGMENTERS

__all__ = ["CFGenAugmenter", "CFGenConfig", "COREAugmenter", "COREConfig", "CrossAugAugmenter", "CrossAugConfig",
           "LLMConfig", "LLMCounterfactualAugmenter", "RACEAugmenter", "RACEConfig", "RationaleSwapAugmenter",
           "ICDAConfig", "METHODS", "cfgen", "core", "crossaug", "icda", "llm", "race"]
