"""Where augmenter and component classes register themselves, so the core can rebuild saved objects by name.

The core never imports a method or a component by hand: a class registers when it is defined (``Augmenter`` and
``Component`` do it in ``__init_subclass__``), and a saved folder names its class by ``method`` or
``component_type``. The built-in ones are imported on first lookup from the table below (by module name, so the
core has no import edge up to them); a third-party method registers simply by being imported.

Examples:
    >>> from cfaug_hf.registry import augmenter_class, component_class
    >>> augmenter_class("crossaug").__name__, component_class("generator").__name__
    ('CrossAugAugmenter', 'Generator')
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["AUGMENTERS", "COMPONENTS", "FILTERS", "register_augmenter", "register_component", "register_filter",
           "augmenter_class", "component_class", "filter_class", "available"]

#: ``method`` -> augmenter class.
AUGMENTERS: dict[str, type] = {}
#: ``component_type`` -> component class.
COMPONENTS: dict[str, type] = {}
#: filter ``name`` -> filter class.
FILTERS: dict[str, type] = {}

# Built-in classes, imported on first lookup.
_BUILTIN_AUGMENTERS = {"crossaug": "cfaug_hf.methods.crossaug", "icda": "cfaug_hf.methods.icda",
                       "core": "cfaug_hf.methods.core", "llm": "cfaug_hf.methods.llm",
                       "cfgen": "cfaug_hf.methods.cfgen", "race": "cfaug_hf.methods.race"}
_BUILTIN_COMPONENTS = {"generator": "cfaug_hf.components.generator", "checker": "cfaug_hf.components.checker",
                       "rationale_selector": "cfaug_hf.components.rationale",
                       "bi_encoder": "cfaug_hf.components.retriever", "corpus_index": "cfaug_hf.components.retriever",
                       "http_llm": "cfaug_hf.components.llm", "ner": "cfaug_hf.components.ner",
                       "editor": "cfaug_hf.components.editor"}


def register_augmenter(cls: type) -> type:
    """Add an augmenter class under its ``method`` name (also usable as a class decorator).

    Only a class that names its own ``method`` registers: a subclass that inherits ``method = "crossaug"`` (to tweak
    one step) does not replace CrossAug for everyone who loads a saved CrossAug augmenter. A class defined again
    under the same name (a re-run notebook cell) replaces the earlier one.
    """
    method = vars(cls).get("method", "")
    if method:
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


def _lookup(table: dict[str, type], builtin: dict[str, str], name: str, what: str) -> Any:
    if name not in table and name in builtin:
        importlib.import_module(builtin[name])
    if name not in table:
        known = sorted(set(table) | set(builtin))
        raise KeyError(f"No {what} named {name!r} is registered; known: {known}. Import the module that defines it "
                       f"before loading.")
    return table[name]


def augmenter_class(method: str) -> Any:
    """The augmenter class registered for ``method`` (built-in methods are imported on demand)."""
    return _lookup(AUGMENTERS, _BUILTIN_AUGMENTERS, method, "augmenter method")


def component_class(component_type: str) -> Any:
    """The component class registered for ``component_type``."""
    return _lookup(COMPONENTS, _BUILTIN_COMPONENTS, component_type, "component type")


def filter_class(name: str) -> Any:
    """The filter class registered under ``name`` (the built-in filters are imported on demand)."""
    if name not in FILTERS:
        importlib.import_module("cfaug_hf.filters")
    return _lookup(FILTERS, {}, name, "filter")


def available() -> dict[str, list[str]]:
    """Every registered or built-in augmenter method, component type and filter."""
    if not FILTERS:
        importlib.import_module("cfaug_hf.filters")
    return {"augmenters": sorted(set(AUGMENTERS) | set(_BUILTIN_AUGMENTERS)),
            "components": sorted(set(COMPONENTS) | set(_BUILTIN_COMPONENTS)), "filters": sorted(FILTERS)}
