"""Counterfactual data augmentation for Hugging Face Datasets and Trainer.

Examples:
    >>> import cfaug_hf
    >>> schema = cfaug_hf.TaskSchema.fact_verification()

Names are imported on first use (as in transformers), so ``import cfaug_hf`` and ``cfaug --help`` do not load torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .verbosity import (get_verbosity, set_verbosity, set_verbosity_debug, set_verbosity_error, set_verbosity_info,
                        set_verbosity_warning)
from .verbosity import _from_environment as _verbosity_from_environment

from . import registry
from ._version import __version__

_verbosity_from_environment()


# The built-in classes register when their modules are imported; the registry imports them on the first lookup
# that misses (the method packages are cheap: each declares itself and imports its augmenter on first use).
def _methods() -> None:
    from . import methods  # noqa: F401


def _components() -> None:
    from . import components  # noqa: F401
    from .components import ner  # noqa: F401


def _filters() -> None:
    from . import filters  # noqa: F401


registry.add_source("augmenter", _methods)
registry.add_source("component", _components)
registry.add_source("filter", _filters)

#: Public name -> the submodule that defines it.
_LAZY = {
    **dict.fromkeys(("AugmentationStats", "Augmenter", "AugmenterConfig", "Counterfactual", "Example", "RowResult",
                     "PROVENANCE_COLUMNS"), "augmenter"),
    **dict.fromkeys(("Generator", "GeneratorConfig", "LabelChecker", "LabelCheckerConfig", "RationaleSelector"),
                    "components"),
    **dict.fromkeys(("BiEncoder", "CorpusIndex", "Editor", "EditorConfig", "OpenAICompatibleLLM", "local_llm"),
                    "components"),
    **dict.fromkeys(("CFGenAugmenter", "CFGenConfig", "COREAugmenter", "COREConfig", "CrossAugAugmenter",
                     "CrossAugConfig", "ICDAConfig", "LLMConfig", "LLMCounterfactualAugmenter",
                     "RACEAugmenter", "RACEConfig", "RationaleSwapAugmenter"), "methods"),
    **dict.fromkeys(("EntityLexicon",), "text.entities"),
    **dict.fromkeys(("allow_endpoints", "EndpointNotAllowedError"), "sharing.consent"),
    **dict.fromkeys(("SchemaError", "TaskSchema"), "schema"),
}

__all__ = ["__version__", *_LAZY, "get_verbosity", "set_verbosity", "set_verbosity_debug", "set_verbosity_info",
           "set_verbosity_warning", "set_verbosity_error"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cfaug_hf' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover
    from .augmenter import (PROVENANCE_COLUMNS, AugmentationStats, Augmenter, AugmenterConfig, Counterfactual, Example,
                            RowResult)
    from .components import Generator, GeneratorConfig, LabelChecker, LabelCheckerConfig, RationaleSelector
    from .components import BiEncoder, CorpusIndex, Editor, EditorConfig, OpenAICompatibleLLM, local_llm
    from .text.entities import EntityLexicon
    from .methods import (CFGenAugmenter, CFGenConfig, COREAugmenter, COREConfig, CrossAugAugmenter, CrossAugConfig,
                          ICDAConfig, LLMConfig, LLMCounterfactualAugmenter, RACEAugmenter, RACEConfig,
                          RationaleSwapAugmenter)
    from .schema import SchemaError, TaskSchema
