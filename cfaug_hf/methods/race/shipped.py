"""The components RACE's paper preset uses that ship inside the package (``cfaug_hf/data/race/``), built by
``python -m scripts.build_race``: the evidence -> claim generator (SmolLM2-135M-Instruct + a half-precision LoRA
adapter, for the paper's T5-base) and the three-way fact verifier (all-MiniLM-L6-v2 + LoRA, for the paper's
RoBERTa), both trained on the FEVEROUS training part of the shared data. Their cards say how."""

from __future__ import annotations

import functools
from typing import Any

from ...data import DATA_DIR

__all__ = ["RACE_DIR", "shipped_generator", "shipped_checker"]

RACE_DIR = DATA_DIR / "race"


def _folder(part: str) -> Any:
    folder = RACE_DIR / part
    if not folder.is_dir():
        raise FileNotFoundError(f"RACE's shipped {part} is missing from {folder}; reinstall cfaug-hf or build it with "
                                f"python -m scripts.build_race --part {part}.")
    return folder


@functools.lru_cache(maxsize=None)
def _generator() -> Any:
    from ...components.generator import Generator

    return Generator.from_pretrained(_folder("generator"))


def shipped_generator() -> Any:
    """RACE's shipped evidence -> claim generator, loaded once per process; each call gets its own settings over
    the shared weights (RACE sets the paper's decoding on its copy)."""
    return _generator().sharing_weights()


def shipped_checker() -> Any:
    """RACE's shipped three-way checker (SUPPORTS, REFUTES, NOT ENOUGH INFO) over (claim, evidence)."""
    from ...components.checker import LabelChecker

    return LabelChecker.from_pretrained(_folder("checker"))
