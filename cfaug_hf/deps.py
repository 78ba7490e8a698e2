"""Optional dependencies in one place: whether each is installed, and an import that names the extra to install.

The core install (``pip install cfaug-hf``) needs only the Hugging Face stack; features that need more are extras:

| extra | packages | used by |
|---|---|---|
| ``lora`` | peft | LoRA generators (training and loading adapters) |
| ``retrieval`` | faiss-cpu | corpus indexes for retrieval (CORE) |
| ``ner`` | stanza, spaCy | NER components and the stanza/spaCy sentence splitters |
| ``plot`` | matplotlib | competency-test plots |
| ``llm`` | gguf | loading GGUF checkpoints (the offline SmolLM2) |
| ``fast`` | ctranslate2 | CTranslate2 generation on CPU (``Generator.use_backend``) |
| ``ray`` | ray[data] | scale-out on a Ray cluster (`cfaug_hf.distributed`) |

Examples:
    >>> is_available("json"), is_available("surely_not_a_module")
    (True, False)
    >>> require("surely_not_a_module", "this feature")
    Traceback (most recent call last):
    ...
    cfaug_hf.deps.MissingDependencyError: this feature needs surely_not_a_module, which is not installed: pip install surely_not_a_module
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__all__ = ["EXTRAS", "MissingDependencyError", "install_hint", "is_available", "require", "is_peft_available", "is_faiss_available", "is_stanza_available",
           "is_spacy_available", "is_matplotlib_available"]

#: module -> (pip package, cfaug-hf extra)
EXTRAS: dict[str, tuple[str, str]] = {
    "peft": ("peft", "lora"), "faiss": ("faiss-cpu", "retrieval"), "stanza": ("stanza", "ner"),
    "spacy": ("spacy", "spacy"), "matplotlib": ("matplotlib", "plot"), "gguf": ("gguf", "llm"),
    "sklearn": ("scikit-learn", ""), "scipy": ("scipy", ""), "ctranslate2": ("ctranslate2", "fast"),
    "ray": ("ray[data]", "ray"),
}


def is_available(module: str) -> bool:
    """Whether ``module`` can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


#: Packages installed in an environment of their own rather than beside the library (they pin their own torch).
SEPARATE = {"vllm": "install vLLM in an environment of its own (it pins its own torch; see docs/install.md), "
                    "serve the model there (vllm serve MODEL) and pass the server's URL as --llm URL"}


class MissingDependencyError(ImportError):
    """An optional package a feature needs is not installed; the message says what to install."""


def install_hint(module: str) -> str:
    """How to install the package that provides ``module``."""
    top = module.split(".")[0]
    if top in SEPARATE:
        return SEPARATE[top]
    package, extra = EXTRAS.get(top, (top, ""))
    return f"pip install 'cfaug-hf[{extra}]' (or {package})" if extra else f"pip install {package}"


def require(module: str, feature: str) -> Any:
    """Import ``module``, or raise `MissingDependencyError` saying which ``feature`` needs it and what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        package = EXTRAS.get(module.split(".")[0], (module.split(".")[0], ""))[0]
        raise MissingDependencyError(f"{feature} needs {package}, which is not installed: "
                                     f"{install_hint(module)}") from err


def is_peft_available() -> bool:
    return is_available("peft")


def is_faiss_available() -> bool:
    return is_available("faiss")


def is_stanza_available() -> bool:
    return is_available("stanza")


def is_spacy_available() -> bool:
    return is_available("spacy")


def is_matplotlib_available() -> bool:
    return is_available("matplotlib")
