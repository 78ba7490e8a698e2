"""`SemanticFidelityFilter`: keep a counterfactual whose MoverScore similarity to its source is within bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Filter, Pair

__all__ = ["SemanticFidelityFilter"]


class SemanticFidelityFilter(Filter):
    """Keeps counterfactuals whose MoverScore similarity to the source is in ``[min_similarity, max_similarity]``
    (``embedder``: a `TextEmbedder`, a Hub id or folder; default MiniLM)."""

    name = "semantic_fidelity"

    def __init__(self, embedder: Any = "sentence-transformers/all-MiniLM-L6-v2", min_similarity: float = 0.0,
                 max_similarity: float = 1.0) -> None:
        super().__init__(min_similarity, max_similarity)
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        from ..metrics.intrinsic import TextEmbedder

        if not isinstance(self._embedder, TextEmbedder):
            self._embedder = TextEmbedder(self._embedder)  # loaded once, on first use
        return self._embedder

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        from ..metrics.intrinsic import mover_score

        return mover_score([p.after() for p in pairs], [p.before() for p in pairs], self.embedder)["scores"]

    def components(self) -> dict[str, Any]:
        model = getattr(self._embedder, "model", None)
        return {"embedder": model if model is not None else str(self._embedder)}

    def init_args(self) -> dict[str, Any] | None:
        if not isinstance(self._embedder, str):
            return None
        return {"embedder": self._embedder, "min_similarity": self.low, "max_similarity": self.high}

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "min_similarity": self.low, "max_similarity": self.high}
