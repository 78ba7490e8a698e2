"""Building an augmenter from a dict: a recipe, a preset, a saved folder's config and the user's own ``--ROLE``
or keyword components all end here (`build_augmenter`); what a method declares (its config, roles and presets) is
read from `cfaug_hf.registry`, where each method states it once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import registry
from ..schema import SchemaError, TaskSchema
from ..sharing.configs import ConfigError
from ..sharing.consent import HubId, reading_data
from ..sharing.folders import ComponentLoadError, folder_inside, leaves_folder
from .recipes import check_sections

__all__ = ["build_augmenter", "load_component", "local_reference", "hub_id", "data_name"]


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
    from ..sharing.hub import _is_repo_id

    if not isinstance(value, str) or not _is_repo_id(value) or leaves_folder(value):
        raise ComponentLoadError(
            f"{what} is {value!r}: neither a folder inside {folder} nor a Hub repository id ('namespace/name'). A "
            f"saved augmenter or recipe names only folders inside its own folder, Hub ids and keywords; give a "
            f"component stored elsewhere on the command line (--ROLE PATH) or as a keyword argument (ROLE=PATH).")
    return HubId(value, field=what)


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




def _load_filters(folder: Path, saved: Any, token: str | None, where: Any) -> list[Any]:
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
    if isinstance(value, str):
        return data_name(folder, value, field, where)
    return value


def data_name(folder: Path, value: str, field: str, where: Any) -> str:
    """A string read from a loaded file where a name may stand (a filter's argument, a component's saved config),
    by the one rule of `cfaug_hf.sharing.consent`: a folder inside ``folder`` as its path, a path leaving it refused,
    and anything else a `HubId` remembering ``field``, which no loader looks up in the working directory (a
    plain word such as a label stays usable as the string it is)."""
    if leaves_folder(value):
        raise ComponentLoadError(f"{where}: {field} is {value!r}, which points outside {folder}; refusing to load "
                                 f"from there. Pass filters=[...] (or the component) to give it yourself.")
    if value and (folder / value).is_dir():
        return str(folder_inside(folder, value, f"{field} in {where}"))
    return HubId(value, field=f"{field} in {where}")
