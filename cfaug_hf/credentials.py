"""Keeping credentials out of everything the library writes: errors, logs, configs, cards and reprs.

One place decides what a secret looks like, so the HTTP LLM client, the Hub helpers and the cards scrub the same way.

>>> scrub("401: bad header 'Authorization: Bearer sk-abc123def456ghi789'", ["sk-abc123def456ghi789"])
"401: bad header 'Authorization: Bearer ***'"
>>> split_url_credentials("https://bob:hunter2@llm.example/v1?api-key=XYZ&api-version=2024")
('https://llm.example/v1?api-version=2024', ['user:password', 'api-key'])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["scrub", "split_url_credentials", "looks_like_a_key", "is_secret_name", "REDACTED"]

REDACTED = "***"

#: Query parameter and header names whose values are credentials.
_SECRET_NAME = re.compile(r"(key|token|secret|passw|pwd|auth|sig|credential|session)", re.I)

#: Credential shapes that are scrubbed even when the exact value is not known (echoed headers, known key formats).
_PATTERNS = [
    re.compile(r"(?i)(authorization\W{0,4}(?:bearer|basic|token)?\s*)[^\s'\",}\]]+"),
    re.compile(r"(?i)(bearer\s+)[^\s'\",}\]]+"),
    re.compile(r"(?i)((?:api[-_]?key|x-api-key|access[-_]?token|token|password|secret)['\"]?\s*[:=]\s*['\"]?)"
               r"[^\s'\",}\]&]+"),
    re.compile(r"(://)[^/\s@:]+:[^/\s@]+(@)"),  # user:password@host
    re.compile(r"()\b(?:sk|hf|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}"),
]


def is_secret_name(name: str) -> bool:
    """True for a header, field or query parameter name that holds a credential (``api-key``, ``token``, ...)."""
    return bool(_SECRET_NAME.search(name))


def scrub(text: object, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret and every credential-shaped substring replaced by ``***``."""
    out = str(text)
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            out = out.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        out = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + REDACTED
                          + (m.group(2) if (m.lastindex or 0) >= 2 else ""), out)
    return out


def split_url_credentials(url: str) -> tuple[str, list[str]]:
    """``url`` without ``user:password@`` and without query parameters that carry credentials, and the names of
    what was removed (so the caller can warn without repeating a secret)."""
    parts = urlsplit(url)
    removed = []
    netloc = parts.netloc
    if "@" in netloc:
        netloc = netloc.rpartition("@")[2]
        removed.append("user:password")
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in query if not is_secret_name(k)]
    removed += [k for k, _ in query if is_secret_name(k)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(kept), "")), removed


def looks_like_a_key(value: str) -> bool:
    """True for a string that is a credential rather than the *name* of an environment variable: environment
    variable names are letters, digits and underscores, and keys are long mixed strings or have a known prefix."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return True
    if re.match(r"(?i)(sk|hf|pk|rk|ghp|gho)_", value) and any(c.isdigit() for c in value):
        return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 24 and mixed
