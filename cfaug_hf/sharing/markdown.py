"""Putting user text (label names, training notes, dataset ids, configs) into Markdown cards and reports safely.

A label name with ``|`` or a newline breaks a table; HTML in a card renders on the Hub; a card's own marker comment
inside a config would make the next push merge the wrong block. Every value that did not come from this library goes
through one of these.

Examples:
    >>> cell("a|b\\n<i>c</i>")
    'a\\\\|b &lt;i&gt;c&lt;/i&gt;'
    >>> print(fenced('{"note": "<!-- cfaug:end -->"}', "json"))
    ```json
    {"note": "\\u003c!-- cfaug:end --\\u003e"}
    ```
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["cell", "code", "inline", "fenced", "json_text"]


def inline(value: Any) -> str:
    """One line of running text: HTML escaped (so no tag or comment is rendered or read as a card marker) and
    line breaks turned into spaces."""
    text = html.escape(str(value), quote=False)
    return re.sub(r"\s*[\r\n\u2028\u2029]+\s*", " ", text).strip()


def cell(value: Any) -> str:
    """A Markdown table cell: `inline`, with ``|`` escaped so the row keeps its columns."""
    return inline(value).replace("|", "\\|")


def code(value: Any) -> str:
    """An inline code span outside tables: one line, no backtick inside to close it early.

    Examples:
        >>> code("a`b\\nc")
        "`a'b c`"
    """
    return "`" + re.sub(r"[\r\n]+", " ", str(value)).replace("`", "'") + "`"


def json_text(text: str) -> str:
    """JSON text that can sit in a card: ``<`` and ``>`` written as JSON escapes (the value is the same JSON), so
    nothing in it reads as HTML or as the card's marker comments."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def fenced(text: str, lang: str = "") -> str:
    """``text`` in a code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = json_text(text) if lang == "json" else text.replace("<!--", "<\\!--")
    return f"{fence}{lang}\n{body}\n{fence}"
