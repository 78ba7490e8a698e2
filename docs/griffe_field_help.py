"""A griffe extension for the API reference: a config dataclass field's ``help`` metadata (the text ``--help``,
``AugmenterConfig.help()`` and the cards already show) becomes that attribute's docstring, so each field is
documented once, where it is declared."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from griffe import Docstring, Extension


class FieldHelp(Extension):
    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        self._walk(pkg)

    def _walk(self, obj: Any) -> None:
        for member in list(obj.members.values()):
            if member.is_alias:
                continue
            if member.is_class:
                self._document(member)
            if member.is_module or member.is_class:
                self._walk(member)

    def _document(self, cls: Any) -> None:
        try:
            runtime = getattr(importlib.import_module(cls.module.path), cls.name)
        except (ImportError, AttributeError):
            return
        if not dataclasses.is_dataclass(runtime):
            return
        for field in dataclasses.fields(runtime):
            help_text = field.metadata.get("help")
            attribute = cls.members.get(field.name)
            if help_text and attribute is not None and not attribute.is_alias and attribute.docstring is None:
                attribute.docstring = Docstring(help_text, parent=attribute)
