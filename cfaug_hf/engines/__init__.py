"""Generation engines: what decodes a `Generator`'s prompts, chosen per call from a table.

Everything around decoding stays the generator's (prompt template, truncation, stop strings, per-row seeds,
constraints checked on the outputs, stats), so an augmenter never knows which engine ran. An engine is one module in
this package that defines an `Engine` subclass and registers it with `register_engine`; the table,
``use_backend(name)`` and the command line's ``--backend`` choices read it, so adding an engine is adding one file.

``"auto"`` (the default) picks, for each call, the highest-ranked installed engine that supports the generator and
its decoding settings and reproduces the transformers outputs: CTranslate2 in float32 for beam search and greedy
decoding of causal LMs, transformers for everything else (sampling stays on transformers, where each row's
candidates depend on its own seed only).

Examples:
    >>> from cfaug_hf.engines import engine_names
    >>> "transformers" in engine_names() and "ctranslate2" in engine_names()
    True
"""

from __future__ import annotations

import abc
import importlib
import pkgutil
from typing import Any, ClassVar

__all__ = ["Engine", "register_engine", "engine_class", "engine_names", "choose_engine", "AUTO"]

#: The engine choice that picks the best installed engine for each call.
AUTO = "auto"

_ENGINES: dict[str, type[Engine]] = {}
_LOADED = False


class Engine(abc.ABC):
    """What an engine module implements.

    Class-level (no loading needed): ``name``, ``requires`` (the module that must be importable), ``rank`` (higher
    is tried first by ``"auto"``), `supports` (why it cannot decode a generator's current settings, or None)
    and `exact` (whether its outputs are the transformers outputs, so fingerprints and caches need not tell
    them apart). Instance-level: `decode` and `describe`; `load` builds the instance for one
    generator's weights.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[str | None] = None
    rank: ClassVar[int] = 0

    @classmethod
    def available(cls) -> bool:
        if cls.requires is None:
            return True
        from ..deps import is_available

        return is_available(cls.requires)

    @classmethod
    def supports(cls, generator: Any, options: dict[str, Any]) -> str | None:
        """Why this engine cannot decode ``generator`` with its current settings, or None when it can."""
        return None

    @classmethod
    def exact(cls, options: dict[str, Any]) -> bool:
        """Whether the outputs equal the transformers outputs with these options (float32 weights, same search)."""
        return False

    @classmethod
    def key(cls, options: dict[str, Any]) -> dict[str, Any]:
        """What the generator's fingerprint records of this engine when its outputs may differ."""
        return {"engine": cls.name, **options}

    @classmethod
    def load(cls, generator: Any, options: dict[str, Any]) -> Engine:
        return cls()

    @abc.abstractmethod
    def decode(self, generator: Any, rows: list[int], prompts: list[str], seeds: list[int] | None,
               outputs: list[list[str]], out_cut: list[list[bool]]) -> None:
        """Fill ``outputs[i]`` and ``out_cut[i]`` (one entry per returned sequence: the text, cut at a stop string,
        and whether it was cut by ``max_new_tokens``) for every ``i`` in ``rows``."""

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name}


def register_engine(cls: type[Engine]) -> type[Engine]:
    """Add an engine to the table (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name.")
    _ENGINES[cls.name] = cls
    return cls


def _load_builtins() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")


def engine_names() -> list[str]:
    """Every registered engine, installed or not, best first."""
    _load_builtins()
    return sorted(_ENGINES, key=lambda n: (-_ENGINES[n].rank, n))


def engine_class(name: str) -> type[Engine]:
    _load_builtins()
    if name not in _ENGINES:
        raise ValueError(f"backend must be {AUTO!r} or one of {engine_names()}, got {name!r}.")
    return _ENGINES[name]


def choose_engine(generator: Any, choice: str, options: dict[str, Any]) -> type[Engine]:
    """The engine that decodes ``generator``'s next call: the named one when it supports the current settings
    (else transformers, which supports all), or for ``"auto"`` the best installed one that supports them and
    reproduces the transformers outputs."""
    _load_builtins()
    fallback = _ENGINES["transformers"]
    if choice != AUTO:
        cls = engine_class(choice)
        return cls if cls.available() and cls.supports(generator, options) is None else fallback
    for name in engine_names():
        cls = _ENGINES[name]
        if cls.available() and cls.exact(options) and cls.supports(generator, options) is None:
            return cls
    return fallback
