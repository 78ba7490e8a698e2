from __future__ import annotations

from dataclasses import dataclass, field

from ...augmenter import AugmenterConfig

__all__ = ["CFGenConfig"]


@dataclass
class CFGenConfig(AugmenterConfig):
    """Settings of in-dataset entity replacement."""

    per_input: int = field(default=1, metadata={"help": "Counterfactuals per input row (each a fresh draw)."})
    replace: str = field(default="all", metadata={
        "help": "'all' entities of a row are replaced in each counterfactual, or 'one' drawn at random."})
    lexicon: dict[str, dict[str, int]] | None = field(default=None, metadata={
        "help": "Entity texts by type with their counts (EntityLexicon.to_dict()); CFGenAugmenter.from_dataset "
                "builds it from the training data."})
    types: list[str] | None = field(default=None, metadata={
        "help": "Entity types to replace (default: all types the lexicon holds)."})

    def __post_init__(self) -> None:
        if self.per_input < 1:
            raise ValueError(f"per_input must be >= 1, got {self.per_input}.")
        if self.replace not in ("all", "one"):
            raise ValueError(f"replace must be 'all' or 'one', got {self.replace!r}.")
