"""Cheap, stable fingerprints for objects that ``datasets`` hashes when caching a ``map``.

``datasets`` fingerprints a transform by pickling it with dill. For an augmenter that holds a 100M-parameter model
this copies every weight just to hash it, and a tokenizer or a lambda inside can make the hash differ between
processes. Classes registered here are hashed by a short token instead: their class and ``fingerprint()``, which
digests the config and the raw weight bytes with xxhash (tens of milliseconds for a small LM).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import xxhash

__all__ = ["register_cheap_hash", "stable_hash", "digest_json", "digest_module", "weights_state", "digest_object", "row_seed"]


def stable_hash(*parts: Any, bits: int = 63) -> int:
    """A non-negative integer hash of ``parts`` that is the same in every process (unlike ``hash()``)."""
    data = "\x1f".join(map(str, parts)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") & ((1 << bits) - 1)


def row_seed(seed: int, source_id: str) -> int:
    """The seed of one row: a function of the augmenter's seed and the row's source id, never of its position."""
    return stable_hash("row", seed, source_id)


def digest_json(obj: Any) -> str:
    return xxhash.xxh64(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def digest_module(module: Any) -> str:
    """xxhash of a torch module's parameters and buffers (names, dtypes, shapes and raw bytes).

    A tensor that shares its memory with one already hashed (tied input and output embeddings) is hashed by the
    first name only, so a 135M-parameter LM with tied embeddings reads 540 MB, not 650.
    """
    import torch

    h = xxhash.xxh64()
    seen: dict[tuple[int, int, str, tuple[int, ...]], str] = {}
    for name, tensor in sorted(module.state_dict(keep_vars=True).items()):
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
    tensor's version counter on every in-place write), for remembering a :func:`digest_module`."""
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
    """
    try:
        from datasets.utils._dill import pklregister
    except ImportError:  # pragma: no cover - older/newer datasets: hashing falls back to dill, slower but correct
        return

    def save(pickler: Any, obj: Any) -> None:
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        pickler.save_reduce(_fingerprint_token, (kind, obj.fingerprint()), obj=obj)

    for cls in classes:
        pklregister(cls)(save)


_CODE_DIGESTS: dict[type, str] = {}


def code_digest(cls: type) -> str:
    """A digest of the source of ``cls`` and its bases, so editing a method invalidates ``datasets``' cache.

    ``datasets`` fingerprints plain functions by their code; an augmenter is fingerprinted by its config and
    weights, and without this a user who edits ``augment_examples`` would get the old rows back from the cache.
    Classes whose source cannot be read (defined in a REPL) fall back to their methods' bytecode and constants.
    """
    cached = _CODE_DIGESTS.get(cls)
    if cached is not None:
        return cached
    import inspect

    parts = []
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
    digest = digest_json(parts)
    _CODE_DIGESTS[cls] = digest
    return digest


def _code_repr(code: Any) -> str:
    consts = [_code_repr(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}"
