"""Recipe files: YAML or JSON with the fields of a saved ``cfaug_augmenter.json`` (``method``, ``config``,
``schema``, ``components``, ``filters``, optionally ``preset``), read with their size and sections checked before
anything in them is used."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..sharing.folders import ComponentLoadError

__all__ = ["read_recipe", "check_sections", "SECTIONS"]

#: Largest recipe file read, and most values it may hold once YAML aliases are expanded (a recipe has tens).
MAX_RECIPE_BYTES = 1 << 20
MAX_RECIPE_VALUES = 20_000
MAX_RECIPE_DEPTH = 64


def _check_yaml_size(root: Any, path: Any) -> None:
    """Refuse a YAML document whose aliases expand to more than `MAX_RECIPE_VALUES` values or nest deeper than
    `MAX_RECIPE_DEPTH` (a 615-byte "billion laughs" recipe expands to hundreds of megabytes), counted on the
    composed node graph, where an alias is one shared node, so nothing is expanded to count it."""
    import yaml

    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if depth > MAX_RECIPE_DEPTH:
            raise ComponentLoadError(f"{path}: the recipe nests deeper than {MAX_RECIPE_DEPTH} levels.")
        if id(node) in sizes:
            if sizes[id(node)] < 0:
                raise ComponentLoadError(f"{path}: the recipe refers to itself (a recursive YAML alias).")
            return sizes[id(node)]
        sizes[id(node)] = -1
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        sizes[id(node)] = total
        if total > MAX_RECIPE_VALUES:
            raise ComponentLoadError(f"{path}: the recipe expands to more than {MAX_RECIPE_VALUES} values (YAML "
                                     f"aliases repeat what they name); a recipe holds a method, its settings and "
                                     f"components.")
        return total

    if root is not None:
        size(root, 0)


def read_recipe(path: str | os.PathLike) -> dict[str, Any]:
    """A recipe file (YAML or JSON): the fields of a saved ``cfaug_augmenter.json`` (``method``, ``config``,
    ``schema``, ``components``, ``filters``); a pulled dataset's ``augmenter/cfaug_augmenter.json`` is one."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ComponentLoadError(f"{path}: no such recipe file.")
    if p.stat().st_size > MAX_RECIPE_BYTES:
        raise ComponentLoadError(f"{path}: {p.stat().st_size} bytes; a recipe is at most {MAX_RECIPE_BYTES} bytes.")
    try:
        text = p.read_text(encoding="utf-8")
        _check_yaml_size(yaml.compose(text, Loader=yaml.SafeLoader), path)  # before anything is expanded
        data = yaml.safe_load(text)  # YAML is a superset of JSON
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ComponentLoadError(f"{path}: not a YAML or JSON recipe ({type(err).__name__}: "
                                 f"{str(err)[:300]}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("method"), str):
        raise ComponentLoadError(f"{path}: a recipe is an object with at least a 'method'; got "
                                 f"{type(data).__name__}" + (f" with keys {sorted(map(str, data))}"
                                                             if isinstance(data, dict) else "") + ".")
    check_sections(data, path)
    return data


#: The sections of a recipe or saved augmenter and the JSON types each may have (null: the default).
SECTIONS = {"method": (str,), "config": (dict,), "schema": (dict,), "components": (dict,),
            "filters": (list,)}


def check_sections(data: dict[str, Any], where: Any) -> None:
    """Refuse a recipe section of the wrong type, naming the file and the section (``config: [1, 2]`` reached the
    code that merges configs and failed there as "'list' object is not a mapping")."""
    names = {dict: "an object", list: "a list", str: "a string"}
    for key, kinds in SECTIONS.items():
        value = data.get(key)
        if value is not None and not isinstance(value, kinds):
            raise ComponentLoadError(f"{where}: {key!r} is {type(value).__name__} {str(value)[:80]!r}; expected "
                                     f"{' or '.join(names[k] for k in kinds)} (or leave it out).")

