"""Learned or external parts that augmenters use; each saves, loads and shares like a transformers model."""

from .base import Component, ComponentLoadError, atomic_directory
from .checker import LabelChecker, LabelCheckerConfig
from .generator import GenerationResult, Generator, GeneratorConfig
from .rationale import RationaleSelector, SentenceRationaleConfig, SentenceRationaleModel

#: Component classes by ``component_type``, used to rebuild saved augmenters.
COMPONENT_TYPES = {cls.component_type: cls for cls in (Generator, LabelChecker, RationaleSelector)}

__all__ = [
    "COMPONENT_TYPES", "Component", "ComponentLoadError", "atomic_directory",
    "Generator", "GeneratorConfig", "GenerationResult", "LabelChecker", "LabelCheckerConfig",
    "RationaleSelector", "SentenceRationaleModel", "SentenceRationaleConfig",
]
