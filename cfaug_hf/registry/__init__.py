"""Where methods, augmenter and component classes register themselves, so saved objects are rebuilt by name.

Two kinds of entry:

* **A method declares itself** with one `register_method` call in its package's ``__init__``: its name, the task it
  runs on by default, its config class, its component roles and where its augmenter class lives. The declaration is
  cheap to import (no torch), so the command line can build a method's options and check a dataset's columns
  before the method's models load; the augmenter class is imported on first use.
* **A class registers when it is defined** (``Augmenter``, ``Component`` and ``Filter`` do it in
  ``__init_subclass__``), so a method or component of your own registers simply by being imported.

The registry names no module: the package (``cfaug_hf/__init__.py``) adds, with `add_source`, the loaders of its
built-in methods, components and filters, which run on the first lookup that misses.

Examples:
    >>> from cfaug_hf.registry import augmenter_class, component_class, method_entry
    >>> augmenter_class("crossaug").__name__, component_class("generator").__name__
    ('CrossAugAugmenter', 'Generator')
    >>> method_entry("icda").task
    'sentiment-analysis'
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AUGMENTERS", "COMPONENTS", "FILTERS", "METHODS", "MethodEntry", "register_method", "declared_attributes", "register_augmenter",
           "register_component", "register_filter", "add_source", "augmenter_class", "component_class",
           "filter_class", "method_entry", "method_names", "available", "lazy_exports"]

#: ``method`` -> augmenter class (classes imported so far).
AUGMENTERS: dict[str, type] = {}
#: ``component_type`` -> component class.
COMPONENTS: dict[str, type] = {}
#: filter ``name`` -> filter class.
FILTERS: dict[str, type] = {}


@dataclass(frozen=True)
class MethodEntry:
    """What a method declares about itself (see `register_method`).

    Args:
        name: the ``method`` name (``cfaug augment --method NAME``).
        task: the `cfaug_hf.schema.TaskSchema` preset its augmenter uses when given no schema ("" if none).
        config: its config dataclass.
        roles: its component roles by constructor keyword (`cfaug_hf.registry.roles.Role`).
        augmenter: ``"module:Class"``, imported on first use, or the class itself.
    """

    name: str
    task: str
    config: type
    roles: dict[str, Any] = field(default_factory=dict)
    augmenter: str | type = ""

    def augmenter_class(self) -> type:
        """The augmenter class (its module imported now if it was not)."""
        if isinstance(self.augmenter, type):
            return self.augmenter
        module, _, name = self.augmenter.partition(":")
        return getattr(importlib.import_module(module), name)


#: ``method`` -> its declaration.
METHODS: dict[str, MethodEntry] = {}

_SOURCES: dict[str, list[Callable[[], Any]]] = {"augmenter": [], "component": [], "filter": []}
_LOADED: set[str] = set()


#: What a method name may be: it is a ``--method`` value, a recipe's ``method:`` and a key in saved configs.
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def register_method(name: str, *, task: str, config: type, roles: dict[str, Any] | None = None,
                    augmenter: str) -> MethodEntry:
    """Declare a method: call it once in the method package's ``__init__`` (see `MethodEntry` for the fields).

    The declaration is the one place a method states its name, task, config and roles: its augmenter class takes
    them from here (`declared_attributes`). A second declaration of a name is refused unless it is the same one (a
    module imported again), so a method of your own cannot silently replace a built-in one.

    Examples:
        >>> from cfaug_hf.registry import register_method
        >>> from cfaug_hf.methods.race.config import RACEConfig
        >>> register_method("race", task="sentiment-analysis", config=RACEConfig, augmenter="my.module:Mine")
        Traceback (most recent call last):
        ...
        ValueError: A method named 'race' is already declared (cfaug_hf.methods.race.augmenter:RACEAugmenter, task 'fact-verification'); choose another name for yours.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"register_method: the method name must be lower-case letters, digits, '-' or '_', starting "
                         f"with a letter (it is a --method value); got {name!r}.")
    if not isinstance(config, type):
        raise TypeError(f"register_method({name!r}): config must be the method's config dataclass, got "
                        f"{type(config).__name__}.")
    _check_flip_option(f"register_method({name!r})", config, roles)
    entry = MethodEntry(name, task, config, dict(roles or {}), augmenter)
    known = METHODS.get(name)
    if known is not None and (known.augmenter, known.task, known.config.__qualname__, sorted(known.roles)) != (
            entry.augmenter, entry.task, entry.config.__qualname__, sorted(entry.roles)):
        where = known.augmenter if isinstance(known.augmenter, str) else known.augmenter.__qualname__
        raise ValueError(f"A method named {name!r} is already declared ({where}, task {known.task!r}); choose "
                         f"another name for yours.")
    METHODS[name] = entry
    return entry


#: augmenter class attribute -> the `MethodEntry` field it is taken from.
_DECLARED = {"default_task": "task", "config_class": "config", "roles": "roles"}


def declared_attributes(cls: type) -> None:
    """Give an augmenter class of a declared method the task, config class and roles of its declaration, so they
    are stated once; a class that states one of them itself must agree with the declaration (TypeError if not).
    ``Augmenter`` calls it for every subclass that names its own ``method``."""
    entry = METHODS.get(vars(cls).get("method", ""))
    if entry is None:
        return
    for attribute, field_name in _DECLARED.items():
        declared = getattr(entry, field_name)
        if attribute in vars(cls) and vars(cls)[attribute] != declared:
            raise TypeError(f"{cls.__qualname__}.{attribute} is {vars(cls)[attribute]!r} but the method "
                            f"{entry.name!r} is declared with {field_name}={declared!r}; state it once, in "
                            f"register_method.")
        setattr(cls, attribute, declared)


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) that import each of ``exports`` (name -> submodule,
    relative to ``package``) on first use, as a method package does with its augmenter so that its declaration
    stays cheap to import."""
    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name], package), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(exports))

    return __getattr__, __dir__


def add_source(kind: str, load: Callable[[], Any]) -> None:
    """Run ``load`` (which imports modules that register ``kind`` classes: "augmenter", "component" or "filter")
    before the first lookup of that kind that misses."""
    _SOURCES[kind].append(load)


def _load_sources(kind: str) -> None:
    if kind not in _LOADED:
        _LOADED.add(kind)
        for load in _SOURCES[kind]:
            load()


def _check_flip_option(who: str, config: Any, roles: Any) -> None:
    """A method with a role that takes a checker has the flip decision's one option (``checker_threshold``, from
    ``cfaug_hf.augmenter.FlipCheckedConfig``), so it is set the same way, on the command line too, in every method."""
    checking = [role for role, r in (roles or {}).items() if "checker" in getattr(r, "types", ())]
    if checking and dataclasses.is_dataclass(config) and "checker_threshold" not in {
            f.name for f in dataclasses.fields(config)}:
        raise TypeError(f"{who}: the role {checking[0]!r} takes a checker, so the config must derive from "
                        f"FlipCheckedConfig (in the augmenter module: the flip decision's one option, "
                        f"checker_threshold); {config.__name__} does not.")


def register_augmenter(cls: type) -> type:
    """Add an augmenter class under its ``method`` name (also usable as a class decorator).

    Only a class that names its own ``method`` registers: a subclass that inherits ``method = "crossaug"`` (to tweak
    one step) does not replace CrossAug for everyone who loads a saved CrossAug augmenter. A class defined again
    under the same name (a re-run notebook cell) replaces the earlier one.
    """
    method = vars(cls).get("method", "")
    if method:
        _check_flip_option(cls.__name__, getattr(cls, "config_class", None), getattr(cls, "roles", None))
        AUGMENTERS[method] = cls
    return cls


def register_filter(cls: type) -> type:
    """Add a filter class under its own ``name`` (also usable as a class decorator)."""
    name = vars(cls).get("name", "")
    if name:
        FILTERS[name] = cls
    return cls


def register_component(cls: type) -> type:
    """Add a component class under its own ``component_type`` (also usable as a class decorator)."""
    kind = vars(cls).get("component_type", "")
    if kind:
        COMPONENTS[kind] = cls
    return cls


def _missing(what: str, name: str, known: set[str]) -> KeyError:
    return KeyError(f"No {what} named {name!r} is registered; known: {sorted(known)}. Import the module that "
                    f"defines it before loading.")


def method_entry(method: str) -> MethodEntry:
    """The declaration of ``method``; a class registered without one (a method of your own) is described from its
    class attributes (``default_task``, ``config_class``, ``roles``)."""
    if method not in METHODS and method not in AUGMENTERS:
        _load_sources("augmenter")
    if method in METHODS:
        return METHODS[method]
    if method in AUGMENTERS:
        cls = AUGMENTERS[method]
        return MethodEntry(method, getattr(cls, "default_task", ""), cls.config_class, dict(cls.roles), cls)
    raise _missing("augmenter method", method, set(METHODS) | set(AUGMENTERS))


def augmenter_class(method: str) -> Any:
    """The augmenter class registered for ``method`` (a declared method's class is imported on demand)."""
    if method in AUGMENTERS:
        return AUGMENTERS[method]
    cls = method_entry(method).augmenter_class()
    return AUGMENTERS.get(method, cls)


def _lookup(table: dict[str, Any], kind: str, name: str, what: str) -> Any:
    if name not in table:
        _load_sources(kind)
    if name not in table:
        raise _missing(what, name, set(table))
    return table[name]


def component_class(component_type: str) -> Any:
    """The component class registered for ``component_type``."""
    return _lookup(COMPONENTS, "component", component_type, "component type")


def filter_class(name: str) -> Any:
    """The filter class registered under ``name``."""
    return _lookup(FILTERS, "filter", name, "filter")


def method_names() -> list[str]:
    """Every declared or registered method (cheap: no method's models or augmenter module are imported)."""
    _load_sources("augmenter")
    return sorted(set(AUGMENTERS) | set(METHODS))


def available() -> dict[str, list[str]]:
    """Every declared or registered augmenter method, component type and filter."""
    for kind in _SOURCES:
        _load_sources(kind)
    return {"augmenters": sorted(set(AUGMENTERS) | set(METHODS)), "components": sorted(COMPONENTS),
            "filters": sorted(FILTERS)}
