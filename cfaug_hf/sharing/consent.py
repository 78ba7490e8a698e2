"""What a loaded file may reach: nothing on this machine or the network that the user did not give.

A saved or pulled augmenter, a recipe, a card or a component's config is *data*: someone else may have written it.
It may name its own subfolders, Hub repositories and endpoint addresses, but the library treats those names as
requests, not orders:

* **Endpoints.** An LLM endpoint read from data (``base_url`` in a saved ``cfaug_http_llm.json``, ``components.llm:
  http://...`` in a recipe) is contacted only once the user allows its address: ``--allow-endpoint URL`` on the
  command line, `allow_endpoints` in Python, or the ``CFAUG_ALLOW_ENDPOINTS`` variable (addresses separated by
  commas or spaces). Before that, the first request stops with `EndpointNotAllowedError`, which names the address
  and the key variable it would read; no request is made and no key is read. Which variable's key goes to an allowed
  address is the user's choice too (``--endpoint-key-env VAR``, ``allow_endpoints(..., key_env=VAR)``, an entry
  ``URL#key=VAR`` of ``CFAUG_ALLOW_ENDPOINTS``, or ``CFAUG_ENDPOINT_KEY_ENV``), never a loaded file's. An endpoint the
  user gave (an ``OpenAICompatibleLLM`` made in Python, ``--llm URL``) needs nothing.
* **Addresses are compared as addresses.** Every allow entry and every address read from data is put in one normal
  form (`parse_address`: scheme and host case, IDNA, IPv4 and IPv6 spellings, default ports, escapes, dot segments)
  before matching, and an entry covers only its own path and whole segments below it; the client then sends the
  normal form, so what was compared is what is contacted. Addresses with credentials, a backslash, an encoded slash
  or a control character have no safe normal form and are refused. Redirects are never followed.
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
import ipaddress
import os
import re
import socket
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = ["ENV", "KEY_ENV", "chosen_key_env", "granted", "Address", "AddressError", "EndpointNotAllowedError", "normal_url", "parse_address", "HubId", "allow_endpoints", "allowing", "allowed", "reading_data",
           "data_source", "check_endpoint", "endpoint_components", "is_address"]

#: Environment variable of allowed endpoint addresses (separated by commas or whitespace).
ENV = "CFAUG_ALLOW_ENDPOINTS"
#: Environment variable naming the variable whose key goes to the allowed endpoints ("none": no key).
KEY_ENV = "CFAUG_ENDPOINT_KEY_ENV"

#: Allowed entries, each with the key variable the user named for it (None: none named).
_ALLOWED: dict[str, str | None] = {}
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("cfaug_data_source", default=None)


class EndpointNotAllowedError(PermissionError):
    """An endpoint named by loaded data (not by the user) was about to be contacted, or loaded data chose which of
    the user's environment variables holds the key to send; nothing was sent."""


class HubId(str):
    """A name read from data that can only be a Hub repository id: never looked up as a folder on this machine
    (the embedded offline copies of known ids still serve it). ``field`` says where it was read (``filters[0].args.
    embedder in r.yaml``), for the message when it cannot be fetched.

    Examples:
        >>> HubId("org/model", field="components.checker in r.yaml").field
        'components.checker in r.yaml'
    """

    field: str | None = None

    def __new__(cls, value: str, field: str | None = None) -> HubId:
        name = super().__new__(cls, value)
        if field is not None:
            name.field = field
        return name

    def unavailable(self, why: object) -> str:
        """The message for a name that could not be fetched, in the library's words."""
        where = f"{self.field} is {str(self)!r}" if self.field else f"{str(self)!r} was read from a loaded file"
        return (f"{where}: a loaded file names models by Hub id (or as folders inside its own folder), never as "
                f"folders of this machine, and {str(self)!r} could not be fetched from the Hub ({why}). Download it "
                f"first (hf download {self}) or, to use a folder of yours, give it yourself: on the command line "
                f"the role's option, in Python the argument (filters=[...] for a filter's model).")


class AddressError(ValueError):
    """An address that cannot be compared safely (credentials in it, an encoded slash, a backslash ...): refused
    wherever it appears, as an allow-list entry or as the address of an endpoint."""


class Address(NamedTuple):
    """An ``http(s)`` address in the one normal form the allow-list compares and the client sends: scheme and host
    lower-cased, the host IDNA-encoded (an IPv4 address in dotted quads, an IPv6 one compressed), the default port
    filled in, and the path with its dot segments resolved, repeated slashes joined, escapes of unreserved
    characters decoded and the trailing slash removed (``""`` for the root). Query and fragment play no part."""

    scheme: str
    host: str
    port: int
    path: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == _DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"

    def covers(self, other: Address) -> bool:
        """Whether ``other`` is this address or lies below it: the same scheme, host and port, and this path
        followed by whole segments only (``/v1`` covers ``/v1/chat``, not ``/v10``)."""
        return self[:3] == other[:3] and (other.path == self.path or other.path.startswith(self.path + "/"))


_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: What a path may hold besides escapes (RFC 3986 pchar and "/"); anything else is escaped as UTF-8.
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")


def _path(raw: str) -> str:
    out = []
    for i, piece in enumerate(raw.split("%")):
        if i:
            code = piece[:2]
            if len(code) < 2 or not all(c in "0123456789abcdefABCDEF" for c in code):
                raise AddressError("holds a '%' that starts no escape")
            char = chr(int(code, 16))
            if char in "/\\" or int(code, 16) < 0x20 or int(code, 16) == 0x7F:
                # A server that decodes %2F or %5C before resolving dot segments would read a path the list never
                # saw; no endpoint needs one.
                raise AddressError(f"holds the escape %{code.upper()} (an encoded slash or control character)")
            out.append(char if char in _UNRESERVED else f"%{code.upper()}")
            piece = piece[2:]
        out.extend(c if c in _PATH_SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in piece)
    segments: list[str] = []
    for segment in "".join(out).split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment not in ("", "."):
            segments.append(segment)
    return "".join("/" + s for s in segments)


def _host(parts) -> str:
    netloc = parts.netloc.rpartition("@")[2]
    if netloc.startswith("["):
        try:
            address = ipaddress.IPv6Address(parts.hostname or "")
        except ValueError:
            raise AddressError("holds an IPv6 address that is not one (or has a zone id)") from None
        return address.compressed
    host = (parts.hostname or "").rstrip(".")
    if not host or "%" in host:
        raise AddressError("has no host name" if not host else "holds an escape in its host name")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise AddressError("holds a host name that is not a valid international domain name") from None
    labels = host.split(".")
    if all(re.fullmatch(r"0x[0-9a-f]*|[0-9]+", label) for label in labels):
        # 127.1, 0x7f.0.0.1 and 2130706433 all reach 127.0.0.1: compare them as that.
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            raise AddressError("holds a numeric host that is not an IPv4 address") from None
    if not all(re.fullmatch(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?", label) for label in labels):
        raise AddressError(f"holds the host name {host!r}, which is not one")
    return host


def parse_address(url: object) -> Address:
    """``url`` in its normal form (see `Address`); raises `AddressError` saying why an address cannot be compared
    safely: not ``http(s)``, no host, a user name or password, a backslash, whitespace or a control character, an
    encoded slash, a bad port.

    Examples:
        >>> str(parse_address("HTTP://LocalHost:80/v1/../v2/./chat/"))
        'http://localhost/v2/chat'
        >>> str(parse_address("http://[0:0::1]:8000/%7Euser"))
        'http://[::1]:8000/~user'
    """
    if not isinstance(url, str):
        raise AddressError(f"is a {type(url).__name__}, not a string")
    text = url.strip()
    if any(c in text for c in "\\ \t\r\n") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise AddressError("holds a backslash, a space or a control character")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as err:
        raise AddressError(f"cannot be read as an address ({err})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise AddressError("is not an http:// or https:// address")
    if "@" in parts.netloc:
        raise AddressError("holds a user name or password (user@ or user:password@ before the host)")
    if port == 0:
        raise AddressError("names port 0")
    return Address(scheme, _host(parts), port or _DEFAULT_PORTS[scheme], _path(parts.path))


def _normal(url: str) -> Address | None:
    try:
        return parse_address(url)
    except AddressError:
        return None


def normal_url(url: str) -> str:
    """``url`` in the normal form that is compared and sent, its query kept (the fragment is dropped); raises
    `AddressError` as `parse_address` does.

    Examples:
        >>> normal_url("http://h:8000/v1/../../x?api-version=2")
        'http://h:8000/x?api-version=2'
    """
    query = urlsplit(url.strip()).query if isinstance(url, str) else ""
    return str(parse_address(url)) + (f"?{query}" if query else "")


def is_address(url: object) -> bool:
    """Whether ``url`` is an ``http://`` or ``https://`` address with a host that can be compared safely (what an
    allow-list entry must be)."""
    return _normal(url) is not None  # type: ignore[arg-type]


def _key_env_name(key_env: str | None) -> str | None:
    """The user's key variable as stored: None (not named), "" (send no key) or a checked variable name."""
    if key_env is None:
        return None
    if key_env in ("", "none"):
        return ""
    from .credentials import check_env_name

    check_env_name(key_env, "key_env")
    return key_env


def allow_endpoints(urls: Iterable[str], *, key_env: str | None = None) -> None:
    """Allow the library to contact these addresses (and everything under them) for the rest of the process, when
    loaded data names them. Each is an ``http://`` or ``https://`` address. ``key_env`` names the environment
    variable whose key is sent to them (``""`` or ``"none"``: no key); a loaded file never chooses it, so without
    ``key_env`` an endpoint whose saved config names a key variable is refused before anything is sent.

    Examples:
        >>> allow_endpoints(["http://localhost:8000/v1"]); allowed("http://localhost:8000/v1/")
        True
    """
    if isinstance(urls, str):
        urls = [urls]
    key = _key_env_name(key_env)
    for url in urls:
        try:
            parse_address(url)
        except AddressError as err:
            raise AddressError(f"An allowed endpoint must be an http:// or https:// address with a host and no "
                               f"credentials; {url!r} {err}.") from None
        entry = url.strip()
        _ALLOWED[entry] = key if key is not None else _ALLOWED.get(entry)


@contextlib.contextmanager
def allowing(urls: Iterable[str], *, key_env: str | None = None) -> Iterator[None]:
    """Allow these addresses inside the ``with`` block only (as `allow_endpoints`, ``key_env`` included), in this
    process and in the processes started inside the block (map workers, Ray actors: they read
    ``CFAUG_ALLOW_ENDPOINTS``, each entry with its key variable as ``URL#key=VAR``)."""
    urls = [urls] if isinstance(urls, str) else list(urls)
    before, env = dict(_ALLOWED), os.environ.get(ENV)
    try:
        allow_endpoints(urls, key_env=key_env)
        if urls:
            tag = "" if key_env is None else f"#key={key_env or 'none'}"
            os.environ[ENV] = " ".join(filter(None, [env, *(u.strip() + tag for u in urls)]))
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


def granted() -> list[tuple[str, str | None]]:
    """Every allowed entry with the key variable the user named for it (None: none named), in this process and
    from the environment: what a process started elsewhere (a Ray actor on a running cluster, which does not
    inherit this process's environment) is handed so that it allows exactly what the user allowed here."""
    out = list(_ALLOWED.items())
    fallback = os.environ.get(KEY_ENV) or None
    for entry in re.split(r"[\s,]+", os.environ.get(ENV, "")):
        address, _, key = entry.partition("#key=")
        if address:
            out.append((address, key or fallback))
    return out


def chosen_key_env(url: str) -> str | None:
    """The key variable the user named for the allowed entry that covers ``url``: a name, ``""`` for no key, or
    None when the user named none (then a key variable named by loaded data is refused, not read)."""
    target = _normal(url)
    if target is None or not allowed(url):
        return None
    for entry, key in _ALLOWED.items():
        normal = _normal(entry)
        if key is not None and normal is not None and normal.covers(target):
            return key
    for entry in re.split(r"[\s,]+", os.environ.get(ENV, "")):
        address, _, key = entry.partition("#key=")
        normal = _normal(address) if key else None
        if normal is not None and normal.covers(target):
            return _key_env_name(key)
    return _key_env_name(os.environ.get(KEY_ENV) or None)


def allowed(url: str) -> bool:
    """Whether the user allowed ``url`` (through `allow_endpoints`, `allowing` or ``CFAUG_ALLOW_ENDPOINTS``): both
    sides are put in the normal form of `parse_address` first, so ``/v1/../x`` is ``/x`` and ``HOST:80`` is
    ``host``; an address that has no safe normal form is never allowed."""
    target = _normal(url)
    if target is None:
        return False
    return any(entry is not None and entry.covers(target) for entry in map(_normal, _entries()))


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


def check_endpoint(url: str, source: str | None, key_env: str | None, key_source: str | None = None) -> None:
    """Raise `EndpointNotAllowedError` when ``url`` came from data (``source``) and the user has not allowed it, or
    when the key variable ``key_env`` was chosen by data (``key_source``) and the user named none for ``url``."""
    if source is not None and not allowed(url):
        key = f" with the key in ${key_env}" if key_env else ""
        raise EndpointNotAllowedError(
            f"{source} names the LLM endpoint {url}, which you did not give: nothing was sent to it (no rows, no "
            f"key). A loaded augmenter or recipe is data, and would send your rows there{key}. If you trust it, "
            f"allow it with --allow-endpoint {url} (Python: cfaug_hf.allow_endpoints([{url!r}]); or {ENV}={url}); or "
            f"give your own endpoint (on the command line the role's option, e.g. --llm URL; in Python the role's "
            f"keyword argument).")
    if key_source is not None and key_env and source is None:  # the user's own address, the file's variable
        raise EndpointNotAllowedError(
            f"{key_source} names the environment variable {key_env} as the key to send to {url}: a loaded file does "
            f"not choose which of your secrets is sent, so nothing was sent and {key_env} was not read. Pass "
            f"api_key_env={key_env!r} with the address (api_key_env=None sends no key).")
    if key_source is not None and key_env and chosen_key_env(url) is None:
        raise EndpointNotAllowedError(
            f"{key_source} names the environment variable {key_env} as the key to send to {url}: a loaded file "
            f"does not choose which of your secrets is sent, so nothing was sent and {key_env} was not read. Name "
            f"the key variable yourself: --endpoint-key-env {key_env} (Python: cfaug_hf.allow_endpoints([{url!r}], "
            f"key_env={key_env!r}), or {KEY_ENV}={key_env}); --endpoint-key-env none sends no key.")


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
