"""Ready-made negative-claim generators trained offline from the pairs shipped with the package.

CrossAug fine-tunes BART on WikiFactCheck-English claim pairs. Neither is available offline here, so the default
recipe fine-tunes SmolLM2-135M-Instruct with LoRA on the shipped VitaminC claim pairs (both directions, as in the
paper), the closest offline match to WikiFactCheck's minimal Wikipedia claim edits.
``benchmarks/generator_base.py`` compares bases and pair sets; see the README for the figures behind the choice.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ...components.generator import Generator
from ...data import load_claim_pairs
from ...pretrained import MINILM, SMOLLM2
from ...training.common import time_budget_callback
from ...training.generator import train_generator

__all__ = ["DEFAULT_PAIRS", "NEGATION_TEMPLATE", "BASES", "negative_claim_generator", "default_claim_generator",
           "CLAIM_GENERATOR_DIR"]

#: The negative-claim generator shipped in the package (scripts/build_editors.py --task claims).
CLAIM_GENERATOR_DIR = Path(__file__).resolve().parents[2] / "data" / "editors" / "claims"

#: Shipped pairs the default generator trains on. benchmarks/generator_base.py: VitaminC alone gave the most
#: evidence edits and the fewest pure deletions; adding CAD-SNLI did not help.
DEFAULT_PAIRS = "vitaminc"

#: Prompt of the causal-LM generator; the rewrite follows it on the same line.
NEGATION_TEMPLATE = "Claim: {text}\nFalse claim:"

#: Generator bases the recipe knows: name -> (how it is built, learning rate, LoRA).
BASES: dict[str, dict[str, Any]] = {
    "smollm2-lora": {"model": SMOLLM2, "learning_rate": 3e-4, "lora": True},
    "minilm-encoder-decoder": {"model": MINILM, "learning_rate": 1e-4, "lora": False},
}


def negative_claim_generator(base: str = "smollm2-lora", *, pairs: Any = None, max_steps: int = 90,
                             batch_size: int = 16, seed: int = 0, max_seconds: float | None = None,
                             num_beams: int = 5, num_return_sequences: int = 5, device: str | None = None,
                             training_args: dict[str, Any] | None = None) -> Generator:
    """Train a negative-claim generator from real pretrained weights available offline.

    Args:
        base: ``"smollm2-lora"`` (SmolLM2-135M-Instruct with a LoRA adapter; the default) or
            ``"minilm-encoder-decoder"`` (all-MiniLM-L6-v2 as encoder and decoder, fully fine-tuned).
        pairs: a ``datasets.Dataset`` with ``source`` (positive) and ``target`` (negative) columns; default the
            shipped VitaminC pairs (`cfaug_hf.data.load_claim_pairs`; ``DEFAULT_PAIRS``). Trained in both
            directions.
        max_steps: optimiser steps (16 pairs each by default).
        max_seconds: stop earlier once this much training time has passed.
        num_beams, num_return_sequences: decoding settings saved with the generator. Returning all five beams lets
            CrossAug use the first candidate that is a real negation (not a deletion or a change of word form);
            one beam, as in the paper, often yields only a copy or a deletion.
    """
    if base not in BASES:
        raise ValueError(f"Unknown generator base {base!r}; expected one of {sorted(BASES)}.")
    spec = BASES[base]
    if spec["model"] == MINILM:
        generator = Generator.from_encoder_decoder(MINILM, device=device, num_beams=num_beams, max_new_tokens=48,
                                                   max_source_length=64)
    else:
        generator = Generator.from_base(spec["model"], device=device, input_template=NEGATION_TEMPLATE,
                                        num_beams=num_beams, max_new_tokens=48, max_source_length=96)
    pairs_given = pairs
    pairs = pairs if pairs is not None else load_claim_pairs(DEFAULT_PAIRS)
    callbacks = None
    if max_seconds:
        # A time budget makes the step count unknown, so a decaying schedule would never decay; keep the rate flat.
        callbacks = [time_budget_callback(max_seconds)]
        training_args = {"lr_scheduler_type": "constant_with_warmup", "warmup_steps": 5, **(training_args or {})}
    generator = train_generator(generator, pairs.select_columns(["source", "target"]), bidirectional=True,
                                lora=spec["lora"], learning_rate=spec["learning_rate"], max_steps=max_steps,
                                batch_size=batch_size, seed=seed, callbacks=callbacks, training_args=training_args,
                                dataset_id="cfaug_hf/data/claim_pairs.jsonl (VitaminC)"
                                if pairs_given is None else None)
    generator.training_info["for_method"] = "crossaug"
    generator.configure(num_return_sequences=min(num_return_sequences, generator.config.num_beams))
    return generator


def default_claim_generator() -> Generator:
    """The negative-claim generator shipped in the package, loaded once per process: SmolLM2-135M-Instruct with a
    half-precision LoRA adapter trained by `negative_claim_generator` on the shipped VitaminC pairs (49 steps of
    16 pairs, constant rate; rebuilt by ``scripts/build_editors.py --task claims``), CrossAug's default, and the
    generator of the leaderboard's FEVER CrossAug rows (since 2026-11-27; earlier ones used the full-precision
    adapter it was halved from, which writes other negations for many claims). Each call returns its own settings
    (``config``) over weights loaded once per process."""
    return _load_claim_generator().sharing_weights()


@functools.lru_cache(maxsize=None)
def _load_claim_generator() -> Generator:
    if not (CLAIM_GENERATOR_DIR / Generator.config_name).is_file():
        raise FileNotFoundError(f"The shipped claim generator is missing from {CLAIM_GENERATOR_DIR}; reinstall "
                                f"cfaug-hf or rebuild it with scripts/build_editors.py --task claims.")
    return Generator.from_pretrained(CLAIM_GENERATOR_DIR)
