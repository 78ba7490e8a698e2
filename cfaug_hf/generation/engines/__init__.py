"""Generation engines: what decodes a `Generator`'s prompts, chosen per call from a table.

Everything around decoding stays the generator's (prompt template, truncation, stop strings, per-row seeds,
constraints checked on the outputs, stats), so an augmenter never knows which engine ran. An engine is one module in
this package that defines an `Engine` subclass and registers it with `register_engine`; the table,
``use_backend(name)`` and the command line's ``--backend`` choices read it, so adding an engine is adding one file.
Its contract is narrow (`contract`): loaded for one `DecodeSource` (the model, its tokenizer and a few facts about
them), it answers a `DecodeRequest` (prompts, per-row seeds, settings) with a `DecodeResult` (texts, cut flags,
token counts), and never sees the generator.

``"auto"`` (the default) picks, for each call, the highest-ranked installed engine that supports the generator and
its decoding settings and reproduces the transformers outputs: CTranslate2 in float32 for beam search and greedy
decoding of causal LMs, transformers for everything else (sampling stays on transformers, where each row's
candidates depend on its own seed only).

Examples:
    >>> from cfaug_hf.generation.engines import engine_names
    >>> "transformers" in engine_names() and "ctranslate2" in engine_names()
    True
"""

from __future__ import annotations

import abc
import importlib
import pkgutil
from typing import Any, ClassVar

from .contract import DecodeRequest, DecodeResult, DecodeSettings, DecodeSource

__all__ = ["Engine", "register_engine", "engine_class", "engine_names", "choose_engine", "AUTO", "DecodeRequest",
           "DecodeResult", "DecodeSettings", "DecodeSource"]

#: The engine choice that picks the best installed engine for each call.
AUTO = "auto"

_ENGINES: dict[str, type[Engine]] = {}
_LOADED = False


class Engine(abc.ABC):
    """What an engine module implements.

    Class-level (no loading needed): ``name``, ``requires`` (the module that must be importable), ``rank`` (higher
    is tried first by ``"auto"``), `supports` (why it cannot decode a source with some settings, or None)
    and `exact` (whether its outputs are the transformers outputs, so fingerprints and caches need not tell
    them apart). `load` builds the instance for one `DecodeSource`; the instance answers `decode` and
    `describe`.

    Examples:
        >>> from cfaug_hf.generation.engines import DecodeResult, Engine
        >>> class Echo(Engine):  # register_engine(Echo) would add it to the table and to --backend
        ...     name = "echo"
        ...     def decode(self, request):
        ...         result = DecodeResult.empty(len(request.prompts))
        ...         for i, prompt in enumerate(request.prompts):
        ...             result.add(i, prompt.upper(), cut=False, tokens=0)
        ...         return result
        >>> Echo().decode(DecodeRequest(["a b"], None, DecodeSettings())).texts
        [['A B']]
    """

    name: ClassVar[str] = ""
    requires: ClassVar[str | None] = None
    rank: ClassVar[int] = 0

    @classmethod
    def available(cls) -> bool:
        if cls.requires is None:
            return True
        from ...deps import is_available

        return is_available(cls.requires)

    @classmethod
    def supports(cls, source: DecodeSource, settings: DecodeSettings, options: dict[str, Any]) -> str | None:
        """Why this engine cannot decode ``source`` with ``settings``, or None when it can."""
        return None

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """Refuse an option value this engine cannot take (ValueError naming the option and the values it takes);
        options it does not read are left for the engines that do."""

    @classmethod
    def exact(cls, options: dict[str, Any]) -> bool:
        """Whether the outputs equal the transformers outputs with these options (float32 weights, same search)."""
        return False

    @classmethod
    def key(cls, options: dict[str, Any]) -> dict[str, Any]:
        """What the generator's fingerprint records of this engine when its outputs may differ."""
        return {"engine": cls.name, **options}

    @classmethod
    def load(cls, source: DecodeSource, options: dict[str, Any], settings: DecodeSettings) -> Engine:
        """The engine for ``source``'s weights (converted or copied once where the engine needs its own), sized
        for ``settings`` where it must be (the requests may later carry other settings it supports)."""
        return cls()

    @abc.abstractmethod
    def decode(self, request: DecodeRequest) -> DecodeResult:
        """``num_return_sequences`` outputs for each prompt: the text (cut at the first stop string), whether
        ``max_new_tokens`` cut it, and its generated token count. A row's outputs depend on its prompt and seed
        only, never on the other prompts of the request."""

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


def choose_engine(source: DecodeSource, settings: DecodeSettings, choice: str, options: dict[str, Any]
                  ) -> type[Engine]:
    """The engine that decodes ``source`` with ``settings``: the named one when it supports them (else
    transformers, which supports all), or for ``"auto"`` the best installed one that supports them and reproduces
    the transformers outputs."""
    _load_builtins()
    fallback = _ENGINES["transformers"]
    if choice != AUTO:
        cls = engine_class(choice)
        return cls if cls.available() and cls.supports(source, settings, options) is None else fallback
    for name in engine_names():
        cls = _ENGINES[name]
        if cls.available() and cls.exact(options) and cls.supports(source, settings, options) is None:
            return cls
    return fallback
