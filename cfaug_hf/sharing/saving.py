"""Saving an augmenter to a folder and rebuilding it: its config, schema, filters and components (copied into
subfolders, or referenced by Hub repo and commit), checked field by field when read back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import registry
from .._version import __version__
from .configs import ConfigError
from .folders import FORMAT_VERSION, ComponentLoadError, folder_inside, leaves_folder, read_versioned_json, write_folder
from .consent import HubId, reading_data
from .credentials import scrub_json
from .hub import resolve_folder
from ..schema import SchemaError, TaskSchema

__all__ = ["AUGMENTER_CONFIG", "save_augmenter", "load_augmenter", "build_augmenter", "read_recipe",
           "local_reference"]

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


def build_augmenter(cls: Any, data: dict[str, Any], folder: Path, where: Any, *, token: str | None = None,
                    trusted: bool = False, **overrides: Any) -> Any:
    """An augmenter from a saved config or a recipe (``method``, ``config``, ``schema``, ``components``,
    ``filters``): component paths are read relative to ``folder``; ``where`` names the file in errors. A component
    given as ``"default"`` is left for the method to choose (its shipped default), as a constructor would.

    ``data`` is someone else's unless ``trusted`` (a dict the user's own code built, a preset, ``--method``): what
    it names is then read as `cfaug_hf.sharing.consent` says (endpoints wait for the user's consent, names are
    folders inside ``folder`` or Hub ids). Components and filters in ``overrides`` are the user's own.
    """
    if trusted:
        return _build_augmenter(cls, data, folder, where, token=token, **overrides)
    with reading_data(where):
        return _build_augmenter(cls, data, folder, where, token=token, **overrides)


def _build_augmenter(cls: Any, data: dict[str, Any], folder: Path, where: Any, *, token: str | None = None,
                     **overrides: Any) -> Any:
    check_sections(data, where)
    for role, ref in (data.get("components") or {}).items():
        if ref is not None and not isinstance(ref, (dict, str)):
            raise ComponentLoadError(f"{where}: components.{role} is {ref!r}; expected an object, a folder or Hub "
                                     f"id, \"default\" or null.")
    try:
        target = registry.augmenter_class(data.get("method", "")) if not cls.method else cls
    except KeyError as err:
        raise ComponentLoadError(f"{where} holds a {data.get('method')!r} augmenter: {err.args[0]}") from None
    if cls.method and data.get("method") != cls.method:
        raise ComponentLoadError(f"{where} holds a {data.get('method')!r} augmenter, not "
                                 f"{cls.method or 'a known method'!r}.")
    if "preset" in data:  # a published setting: its values first, the recipe's own over them
        from ..registry.presets import apply_preset

        try:
            data = apply_preset(target, data, overrides)
        except ValueError as err:
            raise ComponentLoadError(f"{where}: {err}") from None
    components: dict[str, Any] = {}
    for role, ref in (data.get("components") or {}).items():
        if role in overrides:
            components[role] = overrides.pop(role)
        elif ref == "default":
            components[role] = ref  # the constructors take "default" for the component their method ships
        elif ref is None:
            components[role] = None
        elif isinstance(ref, str):  # a recipe's short form: a folder (relative to the recipe), Hub id or keyword
            components[role] = load_component(target, role, local_reference(folder, ref, f"components.{role}", where))
        else:
            components[role] = _load_reference(folder, ref, token, f"components.{role}", where, role)
    components.update({k: overrides.pop(k) for k in list(overrides) if k in target.roles})
    filters = overrides.pop("filters") if "filters" in overrides else _load_filters(folder, data.get("filters"), token,
                                                                                      where)
    try:
        config = target.config_class.from_dict(data.get("config") or {}, f"{where} (config)")
    except ConfigError as err:
        raise ComponentLoadError(str(err)) from None
    try:
        schema = TaskSchema.from_dict(data["schema"]) if data.get("schema") is not None else None
    except (KeyError, TypeError, ValueError, SchemaError) as err:
        raise ComponentLoadError(f"{where}: the schema cannot be rebuilt ({type(err).__name__}: {err}).") from None
    if overrides:
        config = target.config_class.from_dict({**config.to_dict(), **overrides}, "from_pretrained() arguments")
    import inspect

    extra = {"filters": filters} if filters or "filters" in inspect.signature(target.__init__).parameters else {}
    try:
        return target(schema=schema, config=config, **extra, **components)
    except (TypeError, ValueError, SchemaError) as err:  # the constructor's own checks of what it was given
        hint = (" Name the component in the recipe's 'components' (on the command line: --ROLE PATH_OR_HUB_ID)."
                if "required positional" in str(err) else "")
        raise ComponentLoadError(f"{where}: {target.__name__} cannot be built: {err}{hint}") from None


def load_component(target: Any, role: str, value: str, **options: Any) -> Any:
    """The object ``value`` names for the ``role`` that the augmenter class ``target`` declares (see
    `cfaug_hf.registry.roles.Role.load`); ``options`` go to the component's ``from_reference``."""
    declared = target.roles.get(role)
    if declared is None:
        known = sorted(target.roles) or "none"
        raise ComponentLoadError(f"{target.__name__} has no component role {role!r}; its roles: {known}.")
    try:
        return declared.load(value, **options)
    except ValueError as err:
        raise ComponentLoadError(f"{role}: {err}") from None


#: Component values that are not folders or Hub ids.
_KEYWORDS = frozenset({"default", "none", "local", "spacy", "stanza"})


def local_reference(folder: Path, value: str, field: str, where: Any) -> str:
    """A component given as a string in a saved augmenter, a pulled one or a recipe, as `load_component`
    takes it: a keyword or an address as it is, a folder inside ``folder`` as its path, anything else as a Hub id.

    Every reference read from a file goes through here (or `cfaug_hf.sharing.folders.folder_inside` for the ``{"path":
    ...}`` form): a file is data, so it may name its own subfolders and Hub repositories but nothing else on this
    machine. A component elsewhere is given by the user: on the command line or as a keyword argument.
    """
    if value in _KEYWORDS or value.startswith(("http://", "https://")):
        return value
    if leaves_folder(value):
        raise ComponentLoadError(
            f"{where}: {field} is {value!r}, which points outside {folder}; refusing to load from there. A saved "
            f"augmenter or recipe names only folders inside its own folder, Hub ids and keywords; give a component "
            f"stored elsewhere on the command line (--ROLE PATH) or as a keyword argument (ROLE=PATH).")
    if (folder / value).exists():
        return str(folder_inside(folder, value, f"{field} in {where}"))
    return hub_id(value, f"{field} in {where}", folder)


def hub_id(value: Any, what: str, folder: Path) -> HubId:
    """``value`` as a `HubId` (never looked up on this machine), refusing anything that cannot be one."""
    from .hub import _is_repo_id

    if not isinstance(value, str) or not _is_repo_id(value) or leaves_folder(value):
        raise ComponentLoadError(
            f"{what} is {value!r}: neither a folder inside {folder} nor a Hub repository id ('namespace/name'). A "
            f"saved augmenter or recipe names only folders inside its own folder, Hub ids and keywords; give a "
            f"component stored elsewhere on the command line (--ROLE PATH) or as a keyword argument (ROLE=PATH).")
    return HubId(value)


def _load_reference(folder: Path, ref: Any, token: str | None, field: str, where: Any, role: str = "") -> Any:
    """A component from its saved reference: a subfolder (``path``), a component shipped in the package
    (``shipped``) or a Hub repository at a revision (``repo_id``, ``revision``)."""
    from ..data import DATA_DIR

    what = role or field
    if not isinstance(ref, dict) or ref.get("type") not in registry.available()["components"]:
        if isinstance(ref, dict) and ref.get("type") == "callable":
            raise ComponentLoadError(f"{where}: the {what} was a Python callable ({ref.get('name')}) and was not "
                                     f"saved; pass {role or 'it'}=... to from_pretrained (--{role} on the "
                                     f"command line).")
        raise ComponentLoadError(f"{where}: {field} names an unknown component {ref!r}; known types: "
                                 f"{registry.available()['components']}.")
    cls = registry.component_class(ref["type"])
    if ref.get("local"):
        raise ComponentLoadError(f"{where}: the {what} was a local {ref['type']} (base model {ref.get('base_model')}) "
                                 f"that was not shared; pass {role or 'it'}=... to from_pretrained (--{role} on "
                                 f"the command line).")
    if "path" in ref:
        return cls.from_pretrained(folder_inside(folder, ref["path"], f"{field}'s path in {where}"))
    if "shipped" in ref:
        return cls.from_pretrained(folder_inside(DATA_DIR, ref["shipped"], f"{field}'s shipped path in {where}"))
    if "repo_id" not in ref:
        raise ComponentLoadError(f"{where}: {field} is {ref!r}; expected a 'path', 'shipped' or 'repo_id' key.")
    return cls.from_pretrained(hub_id(ref["repo_id"], f"{where}: {field}'s repo_id", folder),
                               revision=ref.get("revision"), token=token)


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


def _load_filters(folder: Path, saved: Any, token: str | None, where: Any = None) -> list[Any]:
    where = where or folder / AUGMENTER_CONFIG
    if saved is None:
        return []
    if not isinstance(saved, list):
        raise ComponentLoadError(f"{where}: 'filters' is {saved!r}; expected a list.")
    return [_load_filter(folder, spec, token, f"filters[{i}]", where) for i, spec in enumerate(saved)]


def _load_filter(folder: Path, spec: Any, token: str | None, field: str, where: Any) -> Any:
    if not isinstance(spec, dict) or not isinstance(spec.get("filter"), str):
        raise ComponentLoadError(f"{where}: {field} is {spec!r}; expected {{'filter': name, 'args': {{...}}}}.")
    if "args" not in spec:  # saved without its arguments (a callable or a dataset), or by an older release
        raise ComponentLoadError(
            f"{where}: the augmenter was saved with the filter {spec['filter']!r}, which could not be saved "
            f"({spec.get('why', 'saved by an older release')}); pass filters=[...] to from_pretrained to give the "
            f"filters yourself (filters=[] to run without).")
    try:
        cls = registry.filter_class(spec["filter"])
    except KeyError as err:
        raise ComponentLoadError(f"{where}: {field}: {err.args[0]}") from None
    if not isinstance(spec["args"], dict):
        raise ComponentLoadError(f"{where}: {field}.args is {spec['args']!r}; expected an object.")
    args = {k: _load_value(folder, v, token, f"{field}.args.{k}", where) for k, v in spec["args"].items()}
    try:
        return cls(**args)
    except (TypeError, ValueError) as err:
        raise ComponentLoadError(f"{where}: {field} ({spec['filter']}) cannot be rebuilt: {err}") from None


def _load_value(folder: Path, value: Any, token: str | None, field: str, where: Any) -> Any:
    if isinstance(value, list):
        return [_load_value(folder, v, token, f"{field}[{i}]", where) for i, v in enumerate(value)]
    if isinstance(value, dict) and "$filter" in value:
        return _load_filter(folder, value["$filter"], token, field, where)
    if isinstance(value, dict) and "$component" in value:
        return _load_reference(folder, value["$component"], token, field, where)
    if isinstance(value, str) and leaves_folder(value):  # a filter's model by path (SemanticFidelityFilter's embedder)
        raise ComponentLoadError(f"{where}: {field} is {value!r}, which points outside {folder}; refusing to load "
                                 f"from there. Pass filters=[...] to give it yourself.")
    if isinstance(value, str) and value and (folder / value).is_dir():
        return str(folder_inside(folder, value, field))
    if isinstance(value, str) and "/" in value:  # a model named by a filter's argument: a Hub id, never a local path
        return hub_id(value, f"{where}: {field}", folder)
    return value
