"""What a loaded file may reach: nothing on this machine or the network that the user did not give.

A saved or pulled augmenter, a recipe, a card or a component's config is *data*: someone else may have written it.
It may name its own subfolders, Hub repositories and endpoint addresses, but the library treats those names as
requests, not orders:

* **Endpoints.** An LLM endpoint read from data (``base_url`` in a saved ``cfaug_http_llm.json``, ``components.llm:
  http://...`` in a recipe) is contacted only once the user allows its address: ``--allow-endpoint URL`` on the
  command line, `allow_endpoints` in Python, or the ``CFAUG_ALLOW_ENDPOINTS`` variable (addresses separated by
  commas or spaces). Before that, the first request stops with `EndpointNotAllowedError`, which names the address
  and the key variable it would read; no request is made and no key is read. An endpoint the user gave (an
  ``OpenAICompatibleLLM`` made in Python, ``--llm URL``) needs nothing.
* **Paths.** A name read from data is either a folder inside the folder that holds the file (resolved there, never
  relative to the working directory) or a Hub id, which `HubId` marks so that `cfaug_hf.sharing.hub.resolve_folder`
  and `cfaug_hf.pretrained.resolve_model` never look for it on disk.

Examples:
    >>> allowed("http://collector.example/v1")
    False
    >>> with allowing(["http://collector.example"]):
    ...     allowed("http://collector.example/v1"), allowed("http://collector.example.net/v1")
    (True, False)
    >>> HubId("org/model"), isinstance(HubId("org/model"), str)
    ('org/model', True)
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

__all__ = ["ENV", "EndpointNotAllowedError", "HubId", "allow_endpoints", "allowing", "allowed", "reading_data",
           "data_source", "check_endpoint", "endpoint_components", "is_address"]

#: Environment variable of allowed endpoint addresses (separated by commas or whitespace).
ENV = "CFAUG_ALLOW_ENDPOINTS"

_ALLOWED: set[str] = set()
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("cfaug_data_source", default=None)


class EndpointNotAllowedError(PermissionError):
    """An endpoint named by loaded data (not by the user) was about to be contacted; nothing was sent."""


class HubId(str):
    """A name read from data that can only be a Hub repository id: never looked up as a folder on this machine
    (the embedded offline copies of known ids still serve it)."""

    __slots__ = ()


def _normal(url: str) -> tuple[str, str, int | None, str] | None:
    """``(scheme, host, port, path)`` of an http(s) address, lower-cased where case does not matter; None for
    anything else. Credentials, query and fragment play no part in what is allowed."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    default = 80 if parts.scheme.lower() == "http" else 443
    return parts.scheme.lower(), parts.hostname.lower(), port or default, parts.path.rstrip("/")


def _covers(entry: tuple[str, str, int | None, str], url: tuple[str, str, int | None, str]) -> bool:
    # The same scheme, host and port, and the allowed path or a path below it (whole segments only).
    return entry[:3] == url[:3] and (url[3] == entry[3] or url[3].startswith(entry[3] + "/"))


def is_address(url: object) -> bool:
    """Whether ``url`` is an ``http://`` or ``https://`` address with a host (what an allow-list entry must be)."""
    return isinstance(url, str) and _normal(url) is not None


def allow_endpoints(urls: Iterable[str]) -> None:
    """Allow the library to contact these addresses (and everything under them) for the rest of the process, when
    loaded data names them. Each is an ``http://`` or ``https://`` address.

    Examples:
        >>> allow_endpoints(["http://localhost:8000/v1"]); allowed("http://localhost:8000/v1/")
        True
    """
    if isinstance(urls, str):
        urls = [urls]
    for url in urls:
        if not is_address(url):
            raise ValueError(f"An allowed endpoint must be an http:// or https:// address with a host; got {url!r}.")
        _ALLOWED.add(url.strip())


@contextlib.contextmanager
def allowing(urls: Iterable[str]) -> Iterator[None]:
    """Allow these addresses inside the ``with`` block only (as `allow_endpoints`), in this process and in the
    processes started inside the block (map workers, Ray actors: they read ``CFAUG_ALLOW_ENDPOINTS``)."""
    urls = [urls] if isinstance(urls, str) else list(urls)
    before, env = set(_ALLOWED), os.environ.get(ENV)
    try:
        allow_endpoints(urls)
        if urls:
            os.environ[ENV] = " ".join(filter(None, [env, *urls]))
        yield
    finally:
        _ALLOWED.clear()
        _ALLOWED.update(before)
        if env is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = env


def _entries() -> list[str]:
    return [*_ALLOWED, *(u for u in re.split(r"[\s,]+", os.environ.get(ENV, "")) if u)]


def allowed(url: str) -> bool:
    """Whether the user allowed ``url`` (through `allow_endpoints`, `allowing` or ``CFAUG_ALLOW_ENDPOINTS``)."""
    target = _normal(url)
    if target is None:
        return False
    return any(entry is not None and _covers(entry, target) for entry in map(_normal, _entries()))


@contextlib.contextmanager
def reading_data(where: object) -> Iterator[None]:
    """Mark what is built inside the block as coming from the data at ``where`` (a file or folder), not from the
    user. Nested blocks keep the outermost source."""
    token = _SOURCE.set(_SOURCE.get() or str(where))
    try:
        yield
    finally:
        _SOURCE.reset(token)


def data_source() -> str | None:
    """The file or folder whose data is being read, or None when the user's own code or command line is building."""
    return _SOURCE.get()


def check_endpoint(url: str, source: str | None, key_env: str | None) -> None:
    """Raise `EndpointNotAllowedError` when ``url`` came from data (``source``) and the user has not allowed it."""
    if source is None or allowed(url):
        return
    key = f" with the key in ${key_env}" if key_env else ""
    raise EndpointNotAllowedError(
        f"{source} names the LLM endpoint {url}, which you did not give: nothing was sent to it (no rows, no key). "
        f"A loaded augmenter or recipe is data, and would send your rows there{key}. If you trust it, allow it with "
        f"--allow-endpoint {url} (Python: cfaug_hf.allow_endpoints([{url!r}]); or {ENV}={url}); or give your own "
        f"endpoint (on the command line the role's option, e.g. --llm URL; in Python the role's keyword argument).")


def endpoint_components(augmenter: object) -> list[object]:
    """The components of an augmenter (its roles, and those its filters hold, at any depth) that contact an
    endpoint: the objects with a ``check_endpoint`` method."""
    found: list[object] = []
    seen: set[int] = set()

    def visit(obj: object) -> None:
        if obj is None or id(obj) in seen:
            return
        seen.add(id(obj))
        if callable(getattr(obj, "check_endpoint", None)):
            found.append(obj)
        parts = obj.components() if callable(getattr(obj, "components", None)) else {}
        for child in [*(parts or {}).values(), *(getattr(obj, "filters", None) or ())]:
            visit(child)

    visit(augmenter)
    return found
