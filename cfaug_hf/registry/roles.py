"""Component roles: the slots an augmenter class declares for its learned or external parts.

An augmenter class names its roles once, in ``roles``; its ``components()``, saving and loading, recipes and the
command line (one ``--ROLE`` option each) all read that declaration, so a new method or a new role needs no table
elsewhere. A role says which component types can fill it; each type turns its own short references (``"local"``,
an endpoint URL, ``"spacy"``) into an object through ``Component.from_reference``, and saved folders and Hub ids
are told apart by the config file the folder holds.

Examples:
    >>> from cfaug_hf.registry.roles import Role
    >>> role = Role(("checker",), help="the label checker")
    >>> role.load("none") is None, role.load("default")
    (True, 'default')
    >>> Role(text=True).load("sentence-transformers/all-MiniLM-L6-v2")
    'sentence-transformers/all-MiniLM-L6-v2'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import registry

__all__ = ["Role"]


@dataclass(frozen=True)
class Role:
    """One component slot of an augmenter (the constructor keyword of the same name).

    Args:
        types: the component types (``component_type`` of a registered class) that fill the role from a saved
            folder, a Hub id or a short reference, tried in order. Empty: the role takes a Python object only (a
            callable), so the command line offers no option for it and a saved augmenter records its name only.
        text: the role takes a model name or folder as text (a sentence encoder), passed through unchanged.
        help: what the role is, for ``--ROLE``'s help on the command line.
        cli_default: the value ``--ROLE`` has when not given (None: the option is unset, the method's default
            applies).

    Examples:
        >>> Role(("editor", "generator", "http_llm")).command_line
        True
    """

    types: tuple[str, ...] = ()
    text: bool = False
    help: str = ""
    cli_default: str | None = None

    @property
    def command_line(self) -> bool:
        """Whether ``cfaug augment`` offers a ``--ROLE`` option for it."""
        return bool(self.types) or self.text

    def load(self, value: str | os.PathLike, **options: Any) -> Any:
        """The object a reference names: ``"none"`` is None, ``"default"`` stays for the constructor (the method's
        shipped component), a text role's value passes through; otherwise the first of ``types`` that claims the
        value as a short reference, else the saved folder or Hub repository of whichever type its config file
        names (a folder naming none is read as the last type, whose error then says what is missing). ``options`` go to ``from_reference`` (an endpoint's ``model``, ``api_key_env``, ``temperature``)."""
        value = os.fspath(value)
        if value == "none":
            return None
        if value == "default" or self.text:
            return value
        if not self.types:
            raise ValueError(f"This role takes a Python object (a callable), not a reference; got {value!r}.")
        classes = [registry.component_class(kind) for kind in self.types]
        for cls in classes:
            found = cls.from_reference(value, **options)
            if found is not None:
                return found
        if len(classes) > 1:  # which type a folder holds is written in it: its config file
            for cls in classes:
                if cls.holds(value):
                    return cls.from_pretrained(value)
        return classes[-1].from_pretrained(value)
