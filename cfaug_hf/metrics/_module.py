"""Shared plumbing for the ``evaluate`` modules in this folder (each module file is a thin wrapper)."""

from __future__ import annotations

import inspect
from typing import Any

_CITATIONS = {
    "mover_score": "Zhao et al. (2019). MoverScore: Text Generation Evaluating with Contextualized Embeddings "
                   "and Earth Mover Distance. EMNLP.",
    "perturbation_types": "Wu et al. (2021). Polyjuice: Generating Counterfactuals for Explaining, Evaluating, "
                          "and Improving Models. ACL.",
    "multihop_coherence": "Wang et al. (2024). RACE: Explanation-based counterfactual generation for multi-hop "
                          "fact verification.",
}


def metric_info(name: str, function: Any, features: dict[str, Any]) -> Any:
    """An ``evaluate.MetricInfo`` whose description is the plain function's docstring."""
    import datasets
    import evaluate

    doc = inspect.getdoc(function) or name
    return evaluate.MetricInfo(
        description=doc.split("\n\n")[0], citation=_CITATIONS.get(name, ""), inputs_description=doc,
        features=datasets.Features(features), module_type="metric")
