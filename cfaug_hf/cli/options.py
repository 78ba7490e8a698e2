"""Command-line options generated from a method: its config dataclass fields and its component roles.

``cfaug augment DATA --method NAME`` gets one typed option per field of the method's config class (help text from
the field's ``help`` metadata), and one option per component role it declares, so a method registered tomorrow
gets its options without a change here. (``transformers.HfArgumentParser`` was considered: it names options with
underscores, reads dict and list-of-dict fields as plain strings, and cannot rename an option that clashes with the
command's own, which these options need.)

Examples:
    >>> import argparse
    >>> from cfaug_hf.methods.crossaug import CrossAugConfig
    >>> parser = argparse.ArgumentParser()
    >>> fields = add_config_options(parser, CrossAugConfig, method="crossaug")
    >>> args = parser.parse_args(["--max-span-tokens", "2", "--no-reject-deletions"])
    >>> config_values(args, fields)
    {'max_span_tokens': 2, 'reject_deletions': False}
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from typing import Any

from ..assembly import load_component

__all__ = ["add_config_options", "config_values", "component_roles", "add_component_options", "endpoint_options",
           "load_component"]

def _unwrap_optional(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


def _json_value(text: str) -> Any:
    """A JSON value, or ``@file`` holding one (lexicons and demonstrations are too long for a shell line)."""
    try:
        if text.startswith("@"):
            with open(text[1:], encoding="utf-8") as f:
                return json.load(f)
        return json.loads(text)
    except (OSError, json.JSONDecodeError) as err:
        raise argparse.ArgumentTypeError(f"expected JSON or @file.json, got {text[:60]!r} ({err})") from None


def _text_value(text: str) -> str:
    """A text, or ``@file`` holding it (a prompt template), read byte for byte as UTF-8."""
    if not text.startswith("@"):
        return text
    try:
        with open(text[1:], encoding="utf-8", newline="") as f:
            return f.read()
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot read {text[1:]!r}: {err.strerror or err}") from None


def _none_or(convert: Any) -> Any:
    def parse(text: str) -> Any:
        return None if text.lower() == "none" else convert(text)

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def add_config_options(parser: argparse.ArgumentParser, config_class: type, *, method: str,
                       skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Add ``--field-name`` for each field of ``config_class`` to an argument group of ``parser``; returns
    ``{dest: field name}``. A field whose option would clash with one ``parser`` has is offered as
    ``--METHOD-field-name``. Options the user does not give stay unset (the config's default applies)."""
    group = parser.add_argument_group(f"{method} options", f"fields of {config_class.__name__} (defaults in "
                                                           f"brackets)")
    taken = {s for a in parser._actions for s in a.option_strings}
    hints = typing.get_type_hints(config_class)
    fields: dict[str, str] = {}
    for f in dataclasses.fields(config_class):
        if not f.init or f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        if flag in taken or "--no-" + flag[2:] in taken:
            flag = f"--{method}-{flag[2:]}"
        dest = f"cfg_{f.name}"
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        text = f.metadata.get("help", "").replace("%", "%%")
        hint, optional = _unwrap_optional(hints[f.name])
        origin = typing.get_origin(hint)
        kwargs: dict[str, Any] = {"dest": dest, "default": argparse.SUPPRESS}
        if f.metadata.get("text_file"):  # a long text (a prompt): on the line, or @FILE, read as it is
            kwargs["type"] = _none_or(_text_value) if optional else _text_value
            kwargs["metavar"] = "TEXT|@FILE"
            shown = "none" if default is None else "given"
        elif hint is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
            shown = default
        elif hint in (int, float, str):
            kwargs["type"] = _none_or(hint) if optional else hint
            kwargs["metavar"] = hint.__name__.upper()
            shown = default
        elif origin in (tuple, list) and all(a in (str, Ellipsis) for a in typing.get_args(hint)):
            kwargs["nargs"] = "*"
            kwargs["metavar"] = "TEXT"
            shown = " ".join(default) if default else "none"
        else:  # dicts, lists of dicts: JSON on the line or in a file
            kwargs["type"] = _none_or(_json_value) if optional else _json_value
            kwargs["metavar"] = "JSON|@FILE"
            shown = json.dumps(default) if default is not None else "none"
        group.add_argument(flag, help=f"{text} [{shown}]" + (" ('none' for None)" if optional and hint in
                                                                (int, float, str) else ""), **kwargs)
        fields[dest] = f.name
    return fields


def config_values(args: argparse.Namespace, fields: dict[str, str]) -> dict[str, Any]:
    """The config fields the user set on the command line."""
    return {name: getattr(args, dest) for dest, name in fields.items() if hasattr(args, dest)}


def component_roles(roles: dict[str, Any]) -> list[str]:
    """The component roles (a method's declared ``roles``) that the command line can fill."""
    return sorted(name for name, role in roles.items() if role.command_line)


def add_component_options(parser: argparse.ArgumentParser, declared: dict[str, Any], method: str) -> list[str]:
    """``--ROLE PATH_OR_HUB_ID`` for each component role a method declares (``default``: the method's shipped
    one; ``none``: none), with the endpoint options when a role takes a prompted LLM; returns the roles."""
    group = parser.add_argument_group(f"{method} components", "a folder written by save_pretrained or a Hub id; "
                                                              "'default' is the one the method ships with, 'none' "
                                                              "runs without")
    roles = component_roles(declared)
    for name in roles:
        role = declared[name]
        default = argparse.SUPPRESS if role.cli_default is None else role.cli_default
        shown = "" if role.cli_default is None else f" [{role.cli_default}]"
        group.add_argument("--" + name.replace("_", "-"), dest=name, default=default,
                           help=(role.help or f"the {name}").replace("%", "%%") + shown)
    if any("http_llm" in declared[name].types for name in roles):
        _add_endpoint_options(group)
    return roles


def _add_endpoint_options(group: Any) -> None:
    """Options of a prompted LLM given as 'local' or an endpoint URL (--llm, or CORE's --editor)."""
    group.add_argument("--llm-model", default="", help="model name the endpoint serves (with a URL)")
    group.add_argument("--llm-temperature", type=float, default=None,
                       help="sampling temperature of the endpoint or 'local' LLM (default 0.7; the LLM paper "
                            "preset: 0)")
    group.add_argument("--llm-api-key-env", default="OPENAI_API_KEY",
                       help="environment variable holding the endpoint's API key [OPENAI_API_KEY]")


def endpoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """What the endpoint options say, as ``Component.from_reference`` takes them (an unset temperature is left out:
    the component's own default applies)."""
    options = {"model": getattr(args, "llm_model", ""), "api_key_env": getattr(args, "llm_api_key_env",
                                                                               "OPENAI_API_KEY")}
    if getattr(args, "llm_temperature", None) is not None:
        options["temperature"] = args.llm_temperature
    return options


def given_components(args: argparse.Namespace, roles: list[str]) -> dict[str, str]:
    """The component options the user gave (``--llm`` always has a value, ``default`` unless given)."""
    return {r: getattr(args, r) for r in roles if getattr(args, r, None) is not None}
