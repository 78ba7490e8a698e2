"""Cheap, stable fingerprints for objects that ``datasets`` hashes when caching a ``map``.

``datasets`` fingerprints a transform by pickling it with dill. For an augmenter that holds a 100M-parameter model
this copies every weight just to hash it, and a tokenizer or a lambda inside can make the hash differ between
processes. Classes registered here are hashed by a short token instead: their class and ``fingerprint()``, which
digests the config and the raw weight bytes with xxhash (tens of milliseconds for a small LM).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from collections.abc import Iterable
from typing import Any

import xxhash

logger = logging.getLogger(__name__)

__all__ = ["register_cheap_hash", "stable_hash", "digest_json", "digest_module", "weights_state", "digest_object", "row_seed"]


def stable_hash(*parts: Any, bits: int = 63) -> int:
    """A non-negative integer hash of ``parts`` that is the same in every process (unlike ``hash()``)."""
    data = "\x1f".join(map(str, parts)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") & ((1 << bits) - 1)


def row_seed(seed: int, source_id: str) -> int:
    """The seed of one row: a function of the augmenter's seed and the row's source id, never of its position."""
    return stable_hash("row", seed, source_id)


def _canonical(obj: Any) -> Any:
    # A set's iteration order follows the per-process string hash seed (PEFT keeps target_modules as a set), so
    # str() of it would give a component another fingerprint in every process and miss every cache.
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=lambda v: json.dumps(v, sort_keys=True, default=_canonical))
    return str(obj)


def digest_json(obj: Any) -> str:
    return xxhash.xxh64(json.dumps(obj, sort_keys=True, default=_canonical).encode("utf-8")).hexdigest()


def digest_module(module: Any) -> str:
    """xxhash of a torch module's parameters and buffers (names, dtypes, shapes and raw bytes).

    A tensor that shares its memory with one already hashed (tied input and output embeddings) is hashed by the
    first name only, so a 135M-parameter LM with tied embeddings reads 540 MB, not 650. PEFT's frozen copy of a
    fully trained module (``modules_to_save``: ``...original_module...`` beside ``...modules_to_save...``) is left
    out: the adapter's copy computes the outputs, and the frozen one of a new head is freshly initialised at every
    load, so hashing it gave a saved checker another fingerprint in every process (and a cache miss).
    """
    import torch

    h = xxhash.xxh64()
    seen: dict[tuple[int, int, str, tuple[int, ...]], str] = {}
    state = module.state_dict(keep_vars=True)
    wrapped = {name.split(".modules_to_save.")[0] for name in state if ".modules_to_save." in name}
    for name, tensor in sorted(state.items()):
        if ".original_module." in name and name.split(".original_module.")[0] in wrapped:
            continue
        t = tensor.detach()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        if not t.numel():
            continue
        key = (t.data_ptr(), t.numel(), str(t.dtype), tuple(t.stride()))
        if key in seen:
            h.update(f"=>{seen[key]}".encode())
            continue
        seen[key] = name
        h.update(t.to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().data)
    return h.hexdigest()


def weights_state(module: Any) -> tuple[tuple[int, int], ...]:
    """A cheap key that changes whenever any of ``module``'s tensors is replaced or modified in place (torch bumps a
    tensor's version counter on every in-place write), for remembering a `digest_module`."""
    return tuple((t.data_ptr(), t._version) for t in module.state_dict(keep_vars=True).values())


def digest_object(obj: Any) -> str:
    """Fingerprint anything an augmenter may hold: registered objects by ``fingerprint()``, the rest via datasets."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return digest_json(obj)
    fp = getattr(obj, "fingerprint", None)
    if callable(fp):
        return fp()
    if isinstance(obj, (list, tuple)):
        return digest_json([digest_object(o) for o in obj])
    from datasets.fingerprint import Hasher

    return Hasher.hash(obj)


def _fingerprint_token(kind: str, fingerprint: str) -> tuple[str, str]:
    # What a registered object "unpickles" to inside datasets' hasher; never called in practice.
    return kind, fingerprint


def register_cheap_hash(classes: Iterable[type]) -> None:
    """Make ``datasets`` hash instances of ``classes`` by ``(qualified class name, obj.fingerprint())``.

    Only the hashing pickler of ``datasets`` is affected; multiprocessing (``num_proc``) still pickles the full
    object so workers get the real model.

    ``datasets`` has no public hook for this: a registry of user hash functions was proposed and closed
    (huggingface/datasets#3206), and its maintainers point to registering with the hashing pickler
    (huggingface/datasets#3178), which is what this does. ``Augmenter.augment`` does not depend on it (it passes
    the public ``new_fingerprint=``); only a bare ``dataset.map(augmenter)`` does. If a ``datasets`` release moves
    the hook, that call warns once and ``datasets`` hashes by pickling: slower, and blind to edits of our code.
    """
    pklregister = _hashing_pickler_register()
    if pklregister is None:
        return

    def save(pickler: Any, obj: Any) -> None:
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        pickler.save_reduce(_fingerprint_token, (kind, obj.fingerprint()), obj=obj)

    for cls in classes:
        pklregister(cls)(save)


@functools.lru_cache(maxsize=1)
def _hashing_pickler_register() -> Any:
    try:
        from datasets.utils._dill import pklregister
    except ImportError:
        logger.warning(
            "this datasets release has no datasets.utils._dill.pklregister: dataset.map(augmenter) will hash the "
            "augmenter by pickling its weights (slower, and blind to edits of cfaug_hf's code); "
            "augmenter.augment(dataset) is not affected")
        return None
    return pklregister


_CODE_DIGESTS: dict[type, str] = {}


def code_digest(cls: type) -> str:
    """A digest of the code that decides an augmenter's output, so editing it invalidates ``datasets``' cache.

    Covers the source of ``cls`` and its bases, and of every module of this package that their modules import,
    directly or through others (``text.py``, ``filters.py``, the method's prompts, ...), whether the import sits at
    the top or inside a function. ``datasets`` fingerprints plain functions by their code; an augmenter is
    fingerprinted by its config and weights, and without this a user who edits ``augment_examples`` or a helper it
    calls would get the old rows back from the cache. Classes whose source cannot be read (defined in a REPL) fall
    back to their methods' bytecode and constants.
    """
    cached = _CODE_DIGESTS.get(cls)
    if cached is not None:
        return cached
    import inspect

    parts = []
    modules: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__ in ("builtins", "abc", "typing"):
            continue
        try:
            parts.append(inspect.getsource(klass))
        except (OSError, TypeError):
            for name, value in sorted(vars(klass).items()):
                func = getattr(value, "__func__", getattr(value, "fget", value))
                code = getattr(func, "__code__", None)
                if code is not None:
                    parts.append(f"{name}:{_code_repr(code)}")
        modules |= package_closure(klass.__module__)
    parts += [f"{name}:{_module_source_digest(name)}" for name in sorted(modules)]
    digest = digest_json(parts)
    _CODE_DIGESTS[cls] = digest
    return digest


_PACKAGE_ROOT = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = __name__.rpartition(".")[0]


def _module_file(name: str) -> str | None:
    if name != _PACKAGE and not name.startswith(_PACKAGE + "."):
        return None
    rel = name[len(_PACKAGE):].lstrip(".").replace(".", os.sep)
    for candidate in (os.path.join(_PACKAGE_ROOT, rel + ".py"), os.path.join(_PACKAGE_ROOT, rel, "__init__.py")):
        if rel and os.path.isfile(candidate):
            return candidate
    return os.path.join(_PACKAGE_ROOT, "__init__.py") if not rel else None


@functools.lru_cache(maxsize=None)
def _module_source_digest(name: str) -> str:
    path = _module_file(name)
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def imported_names(source: str, package: str) -> list[tuple[str, list[str]]]:
    """What a module's source imports, anywhere in it (inside functions too; ``if TYPE_CHECKING:`` blocks left out):
    one ``(base, [base.name, ...])`` per import statement, relative imports resolved against ``package``."""
    import ast
    import importlib.util

    tree = ast.parse(source)
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                    else node.module or ""
            except ImportError:
                continue
            found.append((base, [f"{base}.{a.name}" for a in node.names]))
    return found


@functools.lru_cache(maxsize=None)
def _direct_imports(name: str) -> frozenset[str]:
    path = _module_file(name)
    if path is None:
        return frozenset()
    with open(path, encoding="utf-8") as f:
        source = f.read()
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for base, subs in imported_names(source, package):
        # ``from . import registry`` needs the submodule, not the package's __init__
        targets = subs if subs and all(_module_file(t) for t in subs) else [base, *subs]
        for target in targets:
            while target and _module_file(target) is None:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return frozenset(found)


def package_closure(module: str) -> set[str]:
    """The modules of this package that ``module`` imports, directly or through others (itself included)."""
    seen: set[str] = set()
    todo = [module] if _module_file(module) else []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [m for m in _direct_imports(name) if m not in seen]
    return seen


#: Process-wide settings that change what augmenters output (``text.set_lemmatizer``, ...), by name.
_GLOBAL_STATE: dict[str, Any] = {}


def register_global_state(name: str, getter: Any) -> None:
    """Declare a process-wide hook whose current value (``getter()``) is part of every augmenter's fingerprint, so
    changing it never serves rows made under the old one from the cache."""
    _GLOBAL_STATE[name] = getter


def global_state_digest() -> str:
    """A digest of the current value of every registered global hook that is set (functions by their code, via
    ``datasets``). Hooks left unset count as absent: a hook registers when its module is first imported, and which
    modules a process has imported so far must not move fingerprints (it did: an augmenter's fingerprint changed
    once another augmenter had run, and its cached rows were made again)."""
    values = {}
    for name, getter in sorted(_GLOBAL_STATE.items()):
        value = getter()
        if value is not None:
            values[name] = digest_object(value)
    return digest_json(values)


def _code_repr(code: Any) -> str:
    consts = [_code_repr(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}"
