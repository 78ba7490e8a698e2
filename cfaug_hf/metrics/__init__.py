"""Metrics for counterfactuals: plain functions in `.intrinsic`, and the same as local ``evaluate`` modules.

Examples:
    >>> from cfaug_hf import metrics
    >>> edit = metrics.load("edit_distance")
    >>> edit.compute(predictions=["the film was bad"], references=["the film was good"])["edit_distance"]
    0.25
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .intrinsic import (PERTURBATION_TYPES, TextEmbedder, bleu_diversity, edit_distance, flip_rate, mover_score,
                        multihop_coherence, perplexity, perturbation_type, perturbation_types)

__all__ = ["load", "MODULES", "module_path", "flip_rate", "perplexity", "mover_score", "bleu_diversity",
           "edit_distance", "multihop_coherence", "perturbation_type", "perturbation_types", "PERTURBATION_TYPES",
           "TextEmbedder"]

_HERE = Path(__file__).parent
#: Names of the ``evaluate`` modules shipped in this package.
MODULES = tuple(sorted(p.name for p in _HERE.iterdir() if (p / f"{p.name}.py").is_file()))


def module_path(name: str) -> str:
    """The folder of a shipped ``evaluate`` module, for ``evaluate.load(path)``."""
    if name not in MODULES:
        raise ValueError(f"Unknown cfaug metric {name!r}; the shipped modules are {', '.join(MODULES)}.")
    return str(_HERE / name)


def load(name: str, **kwargs: Any) -> Any:
    """``evaluate.load`` of a shipped module by name; works offline (the script is local, nothing is fetched)."""
    import evaluate

    return evaluate.load(module_path(name), **kwargs)
