"""Learned or external parts that augmenters use; each saves, loads and shares like a transformers model."""

from .. import registry
from .base import Component, ComponentLoadError, atomic_directory
from .checker import LabelChecker, LabelCheckerConfig
from .editor import Editor, EditorConfig
from ..generation import GenerationResult
from .generator import Generator, GeneratorConfig
from .llm import HTTPLLMConfig, OpenAICompatibleLLM, local_llm
from .rationale import RationaleSelector, SentenceRationaleConfig, SentenceRationaleModel
from .retriever import BiEncoder, BiEncoderConfig, CorpusIndex, IndexConfig

#: Component classes by ``component_type`` (the registry's table; kept under this name for older code).
COMPONENT_TYPES = registry.COMPONENTS

__all__ = [
    "COMPONENT_TYPES", "Component", "ComponentLoadError", "atomic_directory",
    "Editor", "EditorConfig", "Generator", "GeneratorConfig", "GenerationResult", "LabelChecker", "LabelCheckerConfig",
    "RationaleSelector", "SentenceRationaleModel", "SentenceRationaleConfig", "BiEncoder", "BiEncoderConfig",
    "CorpusIndex", "IndexConfig", "OpenAICompatibleLLM", "HTTPLLMConfig", "local_llm",
]
