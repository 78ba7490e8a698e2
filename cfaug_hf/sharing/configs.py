"""Config dataclasses read back from saved JSON, checked field by field.

A saved config is data that anybody may have edited (or pulled from the Hub): a field of the wrong type must fail at
load time naming the file and the field, not deep inside a model call with "this looks like a bug".

Examples:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class C:
    ...     beams: int = 4
    ...     stop: tuple[str, ...] = ()
    >>> config_from_dict(C, {"beams": 5, "stop": ["\\n"]}, "cfaug_generator.json")
    C(beams=5, stop=('\\n',))
    >>> config_from_dict(C, {"beams": "five"}, "cfaug_generator.json")
    Traceback (most recent call last):
    ...
    cfaug_hf.sharing.configs.ConfigError: cfaug_generator.json: field 'beams' is 'five' (str); expected int.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from typing import Any

__all__ = ["ConfigError", "TypedConfig", "config_from_dict", "check_value", "check_fields", "count_arg"]


class ConfigError(TypeError):
    """A config (saved or given) has an unknown field or a value of the wrong type; the message names both."""


def _matches(value: Any, hint: Any) -> tuple[bool, Any]:
    """Whether ``value`` fits the annotation ``hint``, and the value to store (JSON lists become tuples)."""
    if hint is Any or hint is object:
        return True, value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            ok, converted = _matches(value, arg)
            if ok:
                return True, converted
        return False, value
    if hint is type(None):
        return value is None, value
    if origin is typing.Literal:
        return value in typing.get_args(hint), value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if hint is str:
        return isinstance(value, str), value
    if origin in (tuple, list, typing.Sequence) or hint in (tuple, list):
        if not isinstance(value, (list, tuple)):
            return False, value
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        item = args[0] if len(args) == 1 else Any
        converted = []
        for v in value:
            ok, c = _matches(v, item)
            if not ok:
                return False, value
            converted.append(c)
        return True, (tuple(converted) if (origin or hint) is tuple else converted)
    if origin in (dict, Mapping) or hint is dict:
        return isinstance(value, dict), value
    if isinstance(hint, type):
        return isinstance(value, hint), value
    return True, value  # an annotation this checker does not know: leave it to the dataclass


def _describe(hint: Any) -> str:
    text = str(hint).replace("typing.", "")
    return text[8:-2] if text.startswith("<class '") else text


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_value(cls: type, name: str, value: Any, where: str) -> Any:
    """``value`` checked against the type of ``cls``'s field ``name`` (converted where JSON cannot say it: a list
    for a tuple, an int for a float); raises `ConfigError` naming ``where`` and the field."""
    hints = _hints(cls)
    ok, converted = _matches(value, hints.get(name, Any))
    if isinstance(converted, float) and not math.isfinite(converted) and not ok:
        ok = False
    if not ok:
        raise ConfigError(f"{where}: field {name!r} is {value!r} ({type(value).__name__}); expected "
                          f"{_describe(hints.get(name))}.")
    return converted


def check_fields(config: Any) -> None:
    """Check (and convert, as `check_value` does) every init field of the dataclass instance ``config``."""
    cls = type(config)
    for f in dataclasses.fields(cls):
        if f.init:
            value = getattr(config, f.name)
            converted = check_value(cls, f.name, value, cls.__name__)
            if converted is not value:
                object.__setattr__(config, f.name, converted)


class TypedConfig:
    """Base of the library's config dataclasses: every field is checked against its annotation when a config is
    made, from Python as from a recipe or a saved file, before the config's own range checks, so a string where a
    number belongs fails where it enters, naming the field (``max_edits='6'`` met a comparison deep in a loop).

    Examples:
        >>> @dataclasses.dataclass
        ... class Beams(TypedConfig):
        ...     beams: int = 4
        >>> Beams(beams="6")
        Traceback (most recent call last):
        ...
        cfaug_hf.sharing.configs.ConfigError: Beams: field 'beams' is '6' (str); expected int.
    """

    def __post_init__(self) -> None:
        check_fields(self)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is None or getattr(own, "_checks_types", False):
            return

        def __post_init__(self: Any) -> None:
            check_fields(self)
            own(self)

        __post_init__._checks_types = True  # type: ignore[attr-defined]
        __post_init__.__doc__ = own.__doc__
        cls.__post_init__ = __post_init__  # type: ignore[method-assign]


def config_from_dict(cls: type, data: Any, where: str) -> Any:
    """Build the dataclass ``cls`` from ``data``, refusing a non-dict, unknown fields and values of the wrong type,
    each with ``where`` (the file, or the argument) and the field's name in the message."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected an object of {cls.__name__} fields, got {type(data).__name__}.")
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ConfigError(f"{where}: {cls.__name__} has no field(s) {unknown}; known fields: {sorted(names)}.")
    values = {k: check_value(cls, k, v, where) for k, v in data.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:  # the dataclass's own checks (ranges, combinations)
        raise ConfigError(f"{where}: {err}") from None


def count_arg(name: str, value: Any, *, minimum: int = 0, allow_none: bool = False) -> Any:
    """``value`` as a whole number ``>= minimum`` (or None where allowed); anything else is a ``ValueError`` naming
    the argument, so a negative size or budget fails when it is given instead of silently dropping rows.

    Examples:
        >>> count_arg("budget", 3), count_arg("size", None, allow_none=True)
        (3, None)
        >>> count_arg("budget", -1)
        Traceback (most recent call last):
        ...
        ValueError: budget must be a whole number >= 0, got -1.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        if isinstance(value, float) and value.is_integer() and value >= minimum:
            return int(value)
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a whole number >= {minimum}{extra}, got {value!r}.")
    return value
