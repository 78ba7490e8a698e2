"""`FluencyFilter`: keep a counterfactual whose perplexity is at most a multiple of its source's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair

__all__ = ["FluencyFilter"]


class FluencyFilter(Filter):
    """Keeps counterfactuals whose perplexity under a causal LM is at most ``max_ratio`` times their source's
    (``model``: a Hub id or folder, or ``(model, tokenizer)``; default SmolLM2). The score is source / counterfactual
    perplexity, so higher is more fluent."""

    name = "fluency"

    def __init__(self, model: Any = "HuggingFaceTB/SmolLM2-135M-Instruct", max_ratio: float = 1.5) -> None:
        if max_ratio <= 0:
            raise ValueError(f"FluencyFilter max_ratio must be > 0, got {max_ratio}.")
        super().__init__(1.0 / max_ratio)
        self._model, self.max_ratio = model, max_ratio

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from ..metrics.intrinsic import load_model_and_tokenizer, perplexity

        if isinstance(self._model, str):
            self._model = load_model_and_tokenizer(self._model, "AutoModelForCausalLM")  # loaded once
        after = perplexity([p.after() for p in pairs], self._model)["perplexities"]
        before = perplexity([p.before() for p in pairs], self._model)["perplexities"]
        return [b / a if a > 0 else 0.0 for a, b in zip(after, before)]

    def components(self) -> dict[str, Any]:
        return {"model": self._model[0] if isinstance(self._model, tuple) else str(self._model)}

    def init_args(self) -> dict[str, Any] | None:
        return {"model": self._model, "max_ratio": self.max_ratio} if isinstance(self._model, str) else None

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "max_ratio": self.max_ratio}
