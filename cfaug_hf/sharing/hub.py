"""Hub I/O for everything the library loads and shares: resolving a name to a local folder (a folder, a copy shipped
in the package, or a Hub repository downloaded with ``snapshot_download``) and errors that say what to do.

This module is the core's only door to the Hub; `cfaug_hf.sharing.push` builds cards and pushes on top of it, and
`cfaug_hf.sharing.folders` owns what is written on disk.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .folders import ComponentLoadError, recover_folder

__all__ = ["HubError", "hub_errors", "download_folder", "resolve_folder"]


class HubError(RuntimeError):
    """A push to or pull from the Hub failed; the message says what, where and what to try."""



# ---------------------------------------------------------------------------------------------------------- Hub
def _scrub(text: str, token: Any) -> str:
    from .credentials import scrub

    return scrub(text, [token] if isinstance(token, str) else [])


@contextlib.contextmanager
def hub_errors(action: str, repo_id: str, token: Any = None) -> Iterator[None]:
    """Translate huggingface_hub and connection errors into a `HubError` naming ``action`` and ``repo_id``."""
    import httpx2 as httpx  # huggingface_hub's HTTP client
    from huggingface_hub import constants
    from huggingface_hub.errors import (EntryNotFoundError, HFValidationError, HfHubHTTPError,
                                        LocalEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError)

    try:
        yield
    except HubError:
        raise
    except HFValidationError as err:
        raise HubError(f"{action} failed: {repo_id!r} is not a valid Hub repository id "
                       f"({str(err).splitlines()[0]}); expected 'namespace/name'.") from None
    except RepositoryNotFoundError:
        raise HubError(f"{action} failed: repository {repo_id!r} was not found on {constants.ENDPOINT}, or it is "
                       f"private and the token does not give access to it.") from None
    except RevisionNotFoundError:
        raise HubError(f"{action} failed: the revision asked for does not exist in {repo_id!r}.") from None
    except LocalEntryNotFoundError:
        # Raised when the Hub could not be reached (5xx, timeouts) and nothing usable is in the local cache.
        if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE"):
            raise HubError(f"{action} failed for {repo_id!r}: HF_HUB_OFFLINE is set and no complete copy is in the "
                           f"local cache.") from None
        raise HubError(f"{action} failed for {repo_id!r}: {constants.ENDPOINT} could not be reached or kept "
                       f"answering with errors, and no complete copy is in the local cache. Retry later, or set "
                       f"HF_HUB_OFFLINE=1 to use only cached files.") from None
    except EntryNotFoundError as err:
        raise HubError(f"{action} failed: a file is missing from {repo_id!r} "
                       f"({_scrub(str(err).splitlines()[-1], token)}).") from None
    except HfHubHTTPError as err:
        status = err.response.status_code if err.response is not None else None
        if status == 401:
            hint = "the token is missing or invalid: pass token=... or log in with `hf auth login`"
        elif status == 403:
            hint = "the token has no write access to this namespace"
        elif status and status >= 500:
            hint = (f"the Hub answered {status}; nothing was committed (a push is a single commit), so it is safe "
                    f"to retry")
        else:
            hint = _scrub(str(err).splitlines()[0], token)
        raise HubError(f"{action} failed for {repo_id!r}: {hint}.") from None
    except (httpx.TransportError, ConnectionError, OSError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise HubError(f"{action} failed for {repo_id!r}: the connection to {constants.ENDPOINT} failed "
                       f"({type(err).__name__}); nothing was committed, so it is safe to retry.") from None


def download_folder(repo_id: str, *, repo_type: str = "model", revision: str | None = None, token: Any = None,
                    subfolder: str | None = None) -> tuple[Path, str]:
    """Download a repository snapshot (to the Hub cache) and return ``(folder, commit sha)``."""
    from huggingface_hub import snapshot_download

    with hub_errors(f"Downloading {repo_type} {repo_id!r}", repo_id, token):
        path = Path(snapshot_download(repo_id, repo_type=repo_type, revision=revision, token=token,
                                      allow_patterns=[f"{subfolder.strip('/')}/*"] if subfolder else None))
    folder = path / subfolder if subfolder else path
    if subfolder and not folder.is_dir():
        raise HubError(f"Downloading {repo_type} {repo_id!r} failed: it has no folder {subfolder!r}.")
    return folder, path.name


def _is_repo_id(name: str) -> bool:
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def _shipped_origin(folder: Path) -> dict[str, str] | None:
    """``{"shipped": path}`` for a folder shipped inside the package (the default checkers and editors), so a
    saved augmenter or recipe names it instead of copying it; None for any other local folder."""
    from .._version import __version__
    from ..data import DATA_DIR

    try:
        rel = folder.resolve().relative_to(DATA_DIR)
    except ValueError:
        return None
    return {"shipped": rel.as_posix(), "cfaug_hf_version": __version__}


def resolve_folder(name_or_path: str | os.PathLike, what: str, *, revision: str | None = None, token: Any = None,
                   repo_type: str = "model", subfolder: str | None = None) -> tuple[Path, dict[str, str] | None]:
    """A local folder, or a Hub repository downloaded to the cache: ``(folder, {"repo_id", "revision"} or None)``.

    A name that cannot be a repo id (an absolute path, ``./x``, ``a/b/c``) is only looked for on disk, so a typo in
    a path says the folder does not exist instead of blaming the Hub.
    """
    from .consent import HubId

    name = os.fspath(name_or_path)
    path = Path(name)
    if isinstance(name_or_path, HubId):  # named by loaded data: a Hub repository, never a folder here
        if not _is_repo_id(name):
            raise ComponentLoadError(f"Cannot load the {what}: {name!r} was read from a saved file as a Hub "
                                     f"repository id, and it is not one ('namespace/name').")
        try:
            return _download(name, what, "", repo_type, revision, token, subfolder)
        except HubError as err:
            raise HubError(f"Cannot load the {what}: {name_or_path.unavailable(err)}") from None
    if path.is_dir():
        if revision is not None and _shipped_origin(path) is None:
            raise ComponentLoadError(f"Cannot load the {what}: revision={revision!r} was given, but {name} is a local "
                                     f"folder, which has no revisions (they are for Hub repositories). Drop the "
                                     f"revision, or check out that version of the folder yourself.")
        for unfinished in (path, path.parent):  # a save of it, or of the run folder around it, that was cut off
            recover_folder(unfinished)
        folder = path / subfolder if subfolder else path
        if not folder.is_dir():
            raise ComponentLoadError(f"{path} has no subfolder {subfolder!r}.")
        return folder, _shipped_origin(folder)
    if path.exists():
        raise ComponentLoadError(f"{name} is a file; expected a folder written by save_pretrained (or a Hub "
                                 f"repository id) for the {what}.")
    where = f"no local folder {name!r} (looked in {path.absolute()})"
    if not _is_repo_id(name) or path.is_absolute() or name.startswith((".", "~")):
        raise ComponentLoadError(f"Cannot load the {what}: {where}, and {name!r} is not a Hub repository id "
                                 f"('namespace/name'). Check the path; if it is written by a script (e.g. the demo), "
                                 f"run that first.")
    return _download(name, what, f"{where}, and ", repo_type, revision, token, subfolder)


def _download(name: str, what: str, where: str, repo_type: str, revision: str | None, token: Any,
              subfolder: str | None) -> tuple[Path, dict[str, str]]:
    try:
        folder, sha = download_folder(str(name), repo_type=repo_type, revision=revision, token=token,
                                      subfolder=subfolder)
    except HubError as err:
        raise HubError(f"Cannot load the {what}: {where}the Hub lookup failed: {err}") from None
    return folder, {"repo_id": str(name), "revision": sha}
