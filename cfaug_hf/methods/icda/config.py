from __future__ import annotations

from dataclasses import dataclass, field

from ...augmenter import AugmenterConfig
from ...registry.roles import Role

__all__ = ["ROLES", "ICDAConfig", "ORIGINALS"]

#: Which originals the output keeps: every one, or the paper's lowest-error half.
ORIGINALS = ("all", "lowest_error")


@dataclass
class ICDAConfig(AugmenterConfig):
    """Rationale-swap settings; the defaults follow Plyler and Chi (ICDA) and their reference implementation."""

    splitter: str = field(default="builtin", metadata={
        "help": "How a text column is split into sentences: 'builtin', 'spacy' or 'stanza'. A column that holds a "
                "list of strings is used as already split."})
    joiner: str = field(default=" ", metadata={"help": "Joins sentences back into text for string columns."})
    pool_quantile: float = field(default=0.1, metadata={
        "help": "A class's rationale pool is the selected sentences of its correctly classified documents whose "
                "error is at or below this quantile (0.1: the 10% most confident)."})
    size: int | None = field(default=None, metadata={
        "help": "Number of counterfactuals; None makes as many as there are documents, or, with "
                "originals='lowest_error', as many as there are originals kept."})
    originals: str = field(default="all", metadata={
        "help": "Which originals the output keeps (with keep_original): 'all', or 'lowest_error': the correctly "
                "classified documents the selector is most sure of, as many from each class, half the data in all, "
                "so that originals and counterfactuals together are as many rows as the input (the paper's "
                "augmented set). Each original left out is counted as note:original_not_lowest_error."})

    def __post_init__(self) -> None:
        if self.originals not in ORIGINALS:
            raise ValueError(f"originals must be one of {ORIGINALS}, got {self.originals!r}.")
        if not 0 < self.pool_quantile <= 1:
            raise ValueError(f"pool_quantile must be in (0, 1], got {self.pool_quantile}.")
        if self.size is not None and self.size < 0:
            raise ValueError(f"size must be >= 0 or None, got {self.size}.")


#: The component roles of the augmenter (`cfaug_hf.registry.roles.Role`), by constructor keyword.
ROLES: dict[str, Role] = {
    "selector": Role(("rationale_selector",), help=(
        "the rationale selector: a saved RationaleSelector folder or Hub id [default: the one shipped for "
        "sentiment]")),
}
