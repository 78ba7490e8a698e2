"""Keeping credentials out of everything the library writes: errors, logs, configs, cards, caches and reprs.

One place decides what a secret looks like, so the HTTP LLM client, the Hub helpers and the cards scrub the same way.
Three rules:

* a key is never taken as an argument: only the *name* of the environment variable that holds it, and only a name
  that is one (`check_env_name` refuses anything shaped like a key, without repeating it);
* text leaving the process is scrubbed by the key's *value*, including any 6-character piece of it (an error body
  cut at N bytes may end with the first characters of a key), and by credential shapes (``Bearer ...``);
* a URL keeps no credential-bearing part: no ``user:password@``, no path parameters (``;api_key=``), no fragment,
  and no query parameter whose name or value is a credential.

Examples:
    >>> scrub("401: bad header 'Authorization: Bearer sk-abc123def456ghi789'", ["sk-abc123def456ghi789"])
    "401: bad header 'Authorization: Bearer ***'"
    >>> scrub("error: invalid key 0f3a9c2e...", ["0f3a9c2e7d1b4a5f8e6c0b9a2d4f6e8a"])
    'error: invalid key ***...'
    >>> split_url_credentials("https://bob:hunter2@llm.example/v1;api_key=XYZ?api-key=XYZ&api-version=2024#token=XYZ")
    ('https://llm.example/v1?api-version=2024', ['user:password', 'path parameters', 'api-key', 'fragment'])
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["scrub", "split_url_credentials", "looks_like_a_key", "is_secret_name", "check_env_name",
           "looks_like_a_key_value", "looks_like_a_key_in_text", "scrub_values", "scrub_text", "scrub_tree", "scrub_json", "live_secrets", "refuse_key",
           "ScrubbingFilter", "REDACTED", "WINDOW"]

REDACTED = "***"

#: Any run of this many characters of a known secret is scrubbed (a cut error body may hold a key's first few).
WINDOW = 6

#: Query parameter and header names whose values are credentials.
_SECRET_NAME = re.compile(r"(key|token|secret|passw|pwd|auth|sig|credential|session|code|bearer)", re.I)

#: Credential shapes that are scrubbed even when the exact value is not known (echoed headers, known key formats).
_PATTERNS = [
    re.compile(r"(?i)(authorization\W{0,4}(?:bearer|basic|token)?\s*)[^\s'\",}\]]+"),
    re.compile(r"(?i)(bearer\s+)[^\s'\",}\]]+"),
    re.compile(r"(?i)((?:api[-_]?key|x-api-key|access[-_]?token|token|password|secret)['\"]?\s*[:=]\s*['\"]?)"
               r"[^\s'\",}\]&]+"),
    re.compile(r"(://)[^/\s@:]+:[^/\s@]+(@)"),  # user:password@host
    re.compile(r"()\b(?:sk|hf|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}"),
    re.compile(r"()\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
]

#: Values shaped like keys: known prefixes, AWS ids, long hex (Azure's 32), JWTs, long mixed-case or base64 runs.
_KEY_SHAPES = [
    re.compile(r"(?i)^(sk|hf|pk|rk|ghp|gho|github_pat|xox[abp]|glpat|AIza)[-_]?[A-Za-z0-9_-]*\d"),
    re.compile(r"^(AKIA|ASIA)[0-9A-Z]{12,}$"),
    re.compile(r"^[0-9a-fA-F]{16,}$"),
    re.compile(r"^eyJ[A-Za-z0-9_-]{8,}\."),
    re.compile(r"^[A-Za-z0-9+/=_-]{32,}$"),
]


def is_secret_name(name: str) -> bool:
    """True for a header, field or query parameter name that holds a credential (``api-key``, ``token``, ...)."""
    return bool(_SECRET_NAME.search(name))


def looks_like_a_key(value: str) -> bool:
    """True for a string that is (or may be) a credential rather than the *name* of an environment variable.

    A name is letters, digits and underscores, made of words (``OPENAI_API_KEY``, ``AZURE_KEY_2``); a key is a long
    run without word breaks, a known prefix with digits, hex, an AWS id, or a JWT.
    """
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return True
    if any(shape.search(value) for shape in _KEY_SHAPES):
        return True
    for part in value.split("_"):  # a word of a name is short, or has no digits in it
        if len(part) > 12 and any(c.isdigit() for c in part):
            return True
        if len(part) >= 20:
            return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 16 and mixed


def looks_like_a_key_value(value: str) -> bool:
    """True for a URL query value (or any short string) shaped like a key: a known prefix, hex, an AWS id, a JWT, or
    a long run of letters and digits in both cases."""
    if any(shape.search(value) for shape in _KEY_SHAPES):
        return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 20 and mixed and " " not in value


def check_env_name(name: object, option: str = "api_key_env") -> None:
    """Raise ``ValueError`` unless ``name`` can only be the name of an environment variable (never echoing it).

    Refused: anything that is not letters, digits and underscores; anything shaped like a key; and a value that
    *is* the value of a variable in the environment (``api_key_env=os.environ["OPENAI_API_KEY"]``).
    """
    hint = (f"{option} must be the NAME of an environment variable holding the key (e.g. 'OPENAI_API_KEY'), or None; "
            f"the value given {{why}}, so it is neither sent nor saved (and not shown here). Set the key with: "
            f"export OPENAI_API_KEY=... and pass {option}='OPENAI_API_KEY'.")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(hint.format(why="is not a name (letters, digits and underscores)"))
    if name in os.environ:  # a variable of that name exists: it is a name, whatever it looks like
        return
    if looks_like_a_key(name):
        raise ValueError(hint.format(why="looks like a key itself"))
    if any(v == name for v in os.environ.values() if len(v) >= 8):
        raise ValueError(hint.format(why="is the value of an environment variable"))


def _windows(secret: str) -> set[str]:
    return {secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


def scrub(text: object, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret (and any run of `WINDOW` or more of its characters) and every
    credential-shaped substring replaced by ``***``."""
    out = scrub_values(text, secrets)
    for pattern in _PATTERNS:
        out = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + REDACTED
                          + (m.group(2) if (m.lastindex or 0) >= 2 else ""), out)
    return out


def scrub_values(text: object, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret, and every run of at least `WINDOW` of its characters, replaced by
    ``***``; nothing else is touched (for generated text, which may legitimately say "password: ...")."""
    out = str(text)
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < 4:
            continue
        out = out.replace(secret, REDACTED)
        if len(secret) < WINDOW:
            continue
        grams = _windows(secret)
        covered = [False] * len(out)
        for i in range(len(out) - WINDOW + 1):
            if out[i:i + WINDOW] in grams:
                covered[i:i + WINDOW] = [True] * WINDOW
        if any(covered):
            pieces, i = [], 0
            while i < len(out):
                if covered[i]:
                    while i < len(out) and covered[i]:
                        i += 1
                    pieces.append(REDACTED)
                else:
                    pieces.append(out[i])
                    i += 1
            out = "".join(pieces)
    return out


def split_url_credentials(url: str) -> tuple[str, list[str]]:
    """``url`` without its credential-bearing parts, and the names of what was removed (so the caller can warn
    without repeating a secret): ``user:password@``, path parameters (``;key=...`` in any segment), the fragment,
    and query parameters whose name or value is a credential."""
    parts = urlsplit(url)
    removed = []
    netloc = parts.netloc
    if "@" in netloc:
        netloc = netloc.rpartition("@")[2]
        removed.append("user:password")
    path = parts.path
    if ";" in path:
        path = "/".join(segment.split(";", 1)[0] for segment in path.split("/"))
        removed.append("path parameters")
    segments = path.split("/")
    kept_segments = [s for s in segments if not s or scrub_text(unquote(s)) == unquote(s)]
    if len(kept_segments) != len(segments):
        path = "/".join(kept_segments)
        removed.append("a path segment shaped like a key")
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in query if not is_secret_name(k) and not looks_like_a_key_value(v)]
    removed += [k if is_secret_name(k) else "a query value shaped like a key" for k, v in query if (k, v) not in kept]
    if parts.fragment:
        removed.append("fragment")
    return urlunsplit((parts.scheme, netloc, path, urlencode(kept), "")), removed


# ------------------------------------------------------------------------ every string that leaves the process
#: Keys recognised inside any text without knowing their value: a provider's prefix with at least 16 characters
#: after it, one a digit (``sk-proj-...``, ``hf_...``, ``ghp_...``), AWS ids, JWTs, and a value given to a parameter
#: named like a credential (``api-key=...``, ``"password": "..."``). Long hex and base64 runs are left alone here
#: (commit ids and digests share those shapes); a live key of that shape is still caught by its value.
_IN_TEXT = [
    re.compile(r"(?<![A-Za-z0-9])(?:sk|hf|pk|rk|ghp|gho|ghs|ghu|github_pat|xox[abpr]|glpat|AIza)[-_]"
               r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    re.compile(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
]
_NAMED = re.compile(r"(?i)((?:(?:api[-_]?key|x-api-key|access[-_]?token|auth[-_]?token|secret|password|passwd)"
                    r"['\"]?\s*[:=]\s*['\"]?)|bearer\s+)[^\s'\",}\]&;]{6,}")


def live_secrets() -> list[str]:
    """The values of this process's credential variables: those whose name says so (``*_KEY``, ``*TOKEN*``,
    ``*SECRET*``, ...), at least 8 characters without spaces, and not a path (``SSH_AUTH_SOCK`` holds one)."""
    return [v for k, v in os.environ.items()
            if len(v) >= 8 and is_secret_name(k) and not os.path.isabs(v) and not any(c.isspace() for c in v)]


def scrub_text(text: object, secrets: Iterable[str | None] = (), *, pieces: bool = False) -> str:
    """``text`` without the user's live keys, ``secrets``, and keys recognisable by shape: what every saved config,
    card, repr and log line of the library goes through. ``pieces``: any `WINDOW`-character piece of a known key
    too (for log lines, which may quote an error body cut inside a key; not for files, whose digests and commit
    ids could share six characters with a hex key).

    Examples:
        >>> scrub_text("model gpt-4o?api-key=abc123def456 by sk-proj-0123456789abcdefXYZ")
        'model gpt-4o?api-key=*** by ***'
        >>> scrub_text("revision 9b2f4c1e0d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c, model hf-internal-testing/tiny")
        'revision 9b2f4c1e0d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c, model hf-internal-testing/tiny'
    """
    known = [k for k in (*live_secrets(), *secrets) if isinstance(k, str) and len(k) >= 4]
    if pieces:
        out = scrub_values(text, known)
    else:
        out = str(text)
        for key in sorted(known, key=len, reverse=True):
            out = out.replace(key, REDACTED)
    for pattern in _IN_TEXT:
        out = pattern.sub(REDACTED, out)
    return _NAMED.sub(lambda m: m.group(1) + REDACTED, out)


def scrub_tree(value: object, secrets: Iterable[str | None] = ()) -> object:
    """`scrub_text` over every string (keys of mappings too) of a JSON-like value."""
    secrets = list(secrets)
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, dict):
        return {scrub_tree(k, secrets) if isinstance(k, str) else k: scrub_tree(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_tree(v, secrets) for v in value) if isinstance(value, list) else [
            scrub_tree(v, secrets) for v in value]
    return value


def scrub_json(value: object, default: Any = str) -> Any:
    """A JSON-like value as it is written to a file: made plain JSON first (``default`` converts what JSON cannot
    hold, as ``json.dumps`` would), then put through `scrub_tree`, so no string of it keeps a key."""
    import json

    return scrub_tree(json.loads(json.dumps(value, default=default, ensure_ascii=False)))


def looks_like_a_key_in_text(value: object) -> bool:
    """True for a string that holds a key anywhere: a recognisable shape (see `scrub_text`), or a word of it (split
    at anything but letters and digits) that is a long run mixing letters and digits, or long hex. Model names
    (``meta-llama/Llama-3.1-8B-Instruct``, ``gpt-4o-2024-08-06``) are made of short words and pass.

    Examples:
        >>> looks_like_a_key_in_text("meta-llama/Llama-3.1-8B-Instruct"), looks_like_a_key_in_text("0f3a9c2e7d1b4a5f")
        (False, True)
    """
    if not isinstance(value, str) or not value:
        return False
    if scrub_text(value) != value:
        return True
    for word in re.split(r"[^A-Za-z0-9]+", value):
        mixed = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
        if mixed and (len(word) >= 20 or (len(word) >= 16 and re.fullmatch(r"[0-9a-fA-F]+", word))):
            return True
    return False


def refuse_key(value: object, option: str) -> None:
    """Raise ``ValueError`` (without repeating the value) when a setting that is not a credential holds one: a key
    pasted as a model name, a path segment or a template."""
    if isinstance(value, str) and value and scrub_text(value) != value:
        raise ValueError(f"{option} holds what looks like an API key or password, so it is neither used nor saved "
                         f"(and not shown here). Keys belong in an environment variable, named with api_key_env.")


class ScrubbingFilter(logging.Filter):
    """A logging filter that puts every record of the library's loggers through `scrub_text` (message and
    arguments), so no log line carries a key."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left for logging to report
            return True
        clean = scrub_text(message, pieces=True)
        if clean != message:
            record.msg, record.args = clean, None
        return True
