"""Learned or external parts that augmenters use; each saves, loads and shares like a transformers model."""

from .base import Component, ComponentLoadError, atomic_directory
from .checker import LabelChecker, LabelCheckerConfig
from .generator import GenerationResult, Generator, GeneratorConfig

__all__ = ["Component", "ComponentLoadError", "atomic_directory", "Generator", "GeneratorConfig", "GenerationResult",
           "LabelChecker", "LabelCheckerConfig"]
