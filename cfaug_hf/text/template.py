"""Prompt templates the user writes: a prompt used verbatim, with ``${name}`` where a row's value goes.

The prompts the papers print (CORE's Tables 10-11, Li et al.'s Tables 15-25) are not in this library; the
built-in prompts are its own wording. A user who wants a paper's prompt word for word copies it into a text file,
marks where the input goes, and passes the file's text as ``prompt_template`` (``--prompt-template @FILE`` on the
command line). Nothing else is added to it: the prompt the model receives is the template with the placeholders
filled, byte for byte.

``$``-placeholders (Python's `string.Template`) are used rather than ``{...}`` because the papers' prompts hold
JSON (``{"target_relation": ...}``); write ``$$`` for a literal ``$``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

__all__ = ["check_template", "fill_template"]


def check_template(template: str, allowed: Sequence[str], *, option: str = "prompt_template") -> None:
    """Raise ``ValueError`` when ``template`` is empty, uses a placeholder not in ``allowed``, or has a ``$`` that
    starts no placeholder.

    Examples:
        >>> check_template('Review: "${text}" Target: ${target}', ["text", "label", "target"])
        >>> check_template("Review: ${review}", ["text", "target"])
        Traceback (most recent call last):
        ...
        ValueError: prompt_template uses ${review}, which this task does not fill; its placeholders are ${text}, ${target}.
    """
    if not isinstance(template, str) or not template.strip():
        raise ValueError(f"{option} must be the template's text (non-empty); got {template!r}.")
    parsed = string.Template(template)
    if not parsed.is_valid():
        raise ValueError(f"{option} has a '$' that starts no placeholder; write $$ for a literal $, ${{name}} for a "
                         f"value.")
    unknown = [n for n in parsed.get_identifiers() if n not in allowed]
    if unknown:
        names = ", ".join("${" + n + "}" for n in unknown)
        raise ValueError(f"{option} uses {names}, which this task does not fill; its placeholders are "
                         f"{', '.join('${' + a + '}' for a in allowed)}.")


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``${name}`` replaced by ``values[name]``; nothing else changes.

    Examples:
        >>> fill_template('Given Sentence: "${text}"\\nCurrent: "${label}"', {"text": "A dull film.", "label": "negative"})
        'Given Sentence: "A dull film."\\nCurrent: "negative"'
    """
    return string.Template(template).substitute(values)
