"""Counterfactual data augmentation for Hugging Face Datasets and Trainer.

>>> import cfaug_hf
>>> schema = cfaug_hf.TaskSchema.fact_verification()
"""

__version__ = "0.1.0"

from .augmenter import (AugmentationStats, Augmenter, AugmenterConfig, Counterfactual, Example, RowResult,
                        PROVENANCE_COLUMNS)
from .components import Generator, GeneratorConfig, LabelChecker, LabelCheckerConfig, RationaleSelector
from .methods import CrossAugAugmenter, CrossAugConfig, ICDAConfig, RationaleSwapAugmenter
from .schema import SchemaError, TaskSchema
from .verbosity import (get_verbosity, set_verbosity, set_verbosity_debug, set_verbosity_error, set_verbosity_info,
                        set_verbosity_warning)
from .verbosity import _from_environment as _verbosity_from_environment

_verbosity_from_environment()

__all__ = [
    "__version__", "TaskSchema", "SchemaError", "Augmenter", "AugmenterConfig", "AugmentationStats", "Counterfactual",
    "Example", "RowResult", "PROVENANCE_COLUMNS", "Generator", "GeneratorConfig", "LabelChecker",
    "LabelCheckerConfig", "CrossAugAugmenter", "CrossAugConfig", "RationaleSelector", "RationaleSwapAugmenter",
    "ICDAConfig", "get_verbosity", "set_verbosity", "set_verbosity_debug", "set_verbosity_info",
    "set_verbosity_warning", "set_verbosity_error",
]
