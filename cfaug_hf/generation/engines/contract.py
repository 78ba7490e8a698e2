"""What passes between a generator and an engine: the model it decodes with (`DecodeSource`), one call's prompts,
seeds and settings (`DecodeRequest`), and what comes back (`DecodeResult`). An engine sees these and nothing else:
never the `Generator`, so a new engine needs no knowledge of how a generator keeps its weights, adapter or caches.

Examples:
    >>> from cfaug_hf.generation.engines import DecodeRequest, DecodeResult, DecodeSettings
    >>> settings = DecodeSettings(num_beams=1, num_return_sequences=2, do_sample=True)
    >>> request = DecodeRequest(["Paris is big."], [7], settings)
    >>> result = DecodeResult.empty(len(request.prompts))
    >>> result.add(0, "Paris is small.", cut=False, tokens=4)
    >>> result.texts, result.cut, result.tokens
    ([['Paris is small.']], [[False]], [[4]])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DecodeSettings", "DecodeSource", "DecodeRequest", "DecodeResult"]


@dataclass(frozen=True)
class DecodeSettings:
    """The decoding settings an engine reads (the decoding fields of a generator's config)."""

    max_new_tokens: int = field(default=64, metadata={"help": "Most tokens generated per output."})
    num_beams: int = field(default=1, metadata={"help": "Beam width; 1 means greedy decoding or sampling."})
    num_return_sequences: int = field(default=1, metadata={"help": "Outputs per prompt."})
    do_sample: bool = field(default=False, metadata={"help": "Sample, seeded per row, instead of searching."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature."})
    top_k: int = field(default=50, metadata={"help": "Sample among the k most likely tokens (0 = all)."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass (1.0 = off)."})
    batch_size: int = field(default=32, metadata={"help": "Prompts per forward pass."})
    stop: tuple[str, ...] = field(default=(), metadata={
        "help": "Causal LMs: each output is cut at the first of these strings."})
    chat: bool = field(default=False, metadata={
        "help": "The prompts hold the tokenizer's chat template, so no special tokens are added to them."})
    max_source_length: int = field(default=128, metadata={"help": "Most prompt tokens of the template's text."})
    shared_prefix: bool = field(default=True, metadata={
        "help": "transformers: sampled candidates of a row share their computation while their tokens agree (the "
                "same tokens as model.generate; False runs model.generate, the reference)."})

    @classmethod
    def of(cls, config: Any, **changes: Any) -> DecodeSettings:
        """The settings named in ``config`` (any object with these attributes, e.g. a `GeneratorConfig`)."""
        values = {f.name: getattr(config, f.name) for f in dataclasses.fields(cls) if hasattr(config, f.name)}
        return cls(**{**values, **changes})


@dataclass(eq=False)
class DecodeSource:
    """The model an engine decodes with, and the facts about it that engines need, as values and functions.

    ``weights_digest()`` names the weights (for an engine's converted copy); ``merged_model()`` returns the model
    with any LoRA adapter folded in, as a copy when there is one (the generator's own model keeps its adapter);
    ``stop_token_ids(stop)`` lists the vocabulary entries whose text holds one of the stop strings.
    """

    model: Any
    tokenizer: Any
    is_encoder_decoder: bool
    eos_ids: list[int]
    device: Any
    base_model: str | None
    weights_digest: Callable[[], Any]
    merged_model: Callable[[], Any]
    stop_token_ids: Callable[[tuple[str, ...]], list[int]]


@dataclass(frozen=True)
class DecodeRequest:
    """One call: the prompts (already templated and cut), one seed per prompt when sampling, and the settings."""

    prompts: list[str]
    seeds: list[int] | None
    settings: DecodeSettings

    def __post_init__(self) -> None:
        if self.seeds is not None and len(self.seeds) != len(self.prompts):
            raise ValueError(f"Got {len(self.seeds)} seeds for {len(self.prompts)} prompts.")
        if self.settings.do_sample and self.seeds is None:
            raise ValueError("Sampling needs one seed per prompt (a row's candidates depend on its own seed).")


@dataclass
class DecodeResult:
    """Per prompt, its outputs in order: the text (cut at a stop string), whether ``max_new_tokens`` cut it, and
    how many tokens were generated for it."""

    texts: list[list[str]]
    cut: list[list[bool]]
    tokens: list[list[int]]

    @classmethod
    def empty(cls, n: int) -> DecodeResult:
        return cls([[] for _ in range(n)], [[] for _ in range(n)], [[] for _ in range(n)])

    def add(self, i: int, text: str, *, cut: bool, tokens: int) -> None:
        self.texts[i].append(text)
        self.cut[i].append(cut)
        self.tokens[i].append(tokens)
