"""Saved augmenter folders: an augmenter written as ``cfaug_augmenter.json`` (config, schema, filters) with its
components copied into subfolders or referenced by Hub repo and commit, and read back through `build_augmenter`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import registry
from .._version import __version__
from ..sharing.credentials import scrub_json
from ..sharing.folders import FORMAT_VERSION, ComponentLoadError, read_versioned_json, write_folder
from ..sharing.hub import resolve_folder
from .build import build_augmenter

__all__ = ["AUGMENTER_CONFIG", "save_augmenter", "load_augmenter"]

#: File that marks a saved augmenter folder.
AUGMENTER_CONFIG = "cfaug_augmenter.json"


def save_augmenter(augmenter: Any, save_directory: str | os.PathLike, *, copy_components: bool = False,
                   references_only: bool = False, overwrite: bool = False) -> Path:
    """See `cfaug_hf.Augmenter.save_pretrained`."""

    with write_folder(save_directory, "augmenter", overwrite=overwrite) as tmp:
        refs: dict[str, Any] = {}
        for role, comp in sorted(augmenter.components().items()):
            if comp is None:
                refs[role] = None
                continue
            if isinstance(getattr(comp, "recipe_reference", None), str):  # a method's default, rebuilt by name
                refs[role] = comp.recipe_reference
                continue
            if getattr(comp, "component_type", None) not in registry.COMPONENTS:
                if references_only:
                    refs[role] = {"type": "callable", "name": getattr(comp, "__qualname__", type(comp).__name__)}
                    continue
                raise TypeError(f"Cannot save {type(augmenter).__name__}: its {role} is a {type(comp).__name__}, not "
                                f"a cfaug component (Generator, LabelChecker, ...), so it cannot be restored.")
            origin = comp.hub_origin
            if origin and not copy_components:
                refs[role] = {"type": comp.component_type, **origin}
            elif references_only:
                refs[role] = {"type": comp.component_type, "local": True,
                              "base_model": getattr(comp, "base_model", None)}
            else:
                comp.save_pretrained(tmp / role)
                refs[role] = {"type": comp.component_type, "path": role}
        data = {"component_type": "augmenter", "format_version": FORMAT_VERSION, "cfaug_hf_version": __version__,
                **augmenter.get_config_dict(), "components": refs, "citation": augmenter.citation}
        data["filters"] = [_save_filter(f, tmp, f"filters/{i}-{f.name}", copy_components, references_only)
                           for i, f in enumerate(getattr(augmenter, "user_filters", augmenter.filters))]
        (tmp / AUGMENTER_CONFIG).write_text(json.dumps(scrub_json(data, default=list), indent=2, ensure_ascii=False)
                                            + "\n")
    return Path(save_directory)



def load_augmenter(cls: Any, name_or_path: str | os.PathLike, *, revision: str | None = None,
                   token: str | None = None, repo_type: str = "model", subfolder: str | None = None,
                   **overrides: Any) -> Any:
    """See `cfaug_hf.Augmenter.from_pretrained`; ``cls`` is the class it was called on."""

    folder, _ = resolve_folder(name_or_path, "augmenter", revision=revision, token=token, repo_type=repo_type,
                               subfolder=subfolder)
    data = read_versioned_json(folder / AUGMENTER_CONFIG, "augmenter", "augmenter")
    for key in ("config", "schema"):  # a saved augmenter always has both; a recipe may leave them to defaults
        if not isinstance(data.get(key), dict):
            raise ComponentLoadError(f"{folder / AUGMENTER_CONFIG}: {key!r} is {data.get(key)!r}; expected an "
                                     f"object. The file is damaged: save the augmenter again.")
    return build_augmenter(cls, data, folder, folder / AUGMENTER_CONFIG, token=token, **overrides)


# ------------------------------------------------------------------------------------------------------- filters
def _save_filter(f: Any, tmp: Path, key: str, copy_components: bool, references_only: bool) -> dict[str, Any]:
    """A filter as ``{"filter": name, "args": {...}}``; one that holds something unsaveable keeps only its config."""
    args = f.init_args()
    if args is None:
        return {"filter": f.name, "saved": False, "config": f.get_config_dict(),
                "why": f"{type(f).__name__} holds a Python callable or a dataset, which is not saved"}
    return {"filter": f.name, "args": {k: _save_value(v, tmp, f"{key}/{k}", copy_components, references_only)
                                       for k, v in args.items()}}


def _save_value(value: Any, tmp: Path, key: str, copy_components: bool, references_only: bool) -> Any:
    if hasattr(value, "init_args") and hasattr(value, "keep"):
        return {"$filter": _save_filter(value, tmp, key, copy_components, references_only)}
    if isinstance(value, (list, tuple)):
        return [_save_value(v, tmp, f"{key}-{i}", copy_components, references_only) for i, v in enumerate(value)]
    kind = getattr(value, "component_type", None)
    if kind in registry.COMPONENTS:
        if value.hub_origin and not copy_components:
            return {"$component": {"type": kind, **value.hub_origin}}
        if references_only:
            return {"$component": {"type": kind, "local": True, "base_model": getattr(value, "base_model", None)}}
        value.save_pretrained(tmp / key)
        return {"$component": {"type": kind, "path": key}}
    return value
