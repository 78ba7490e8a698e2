"""What every component shares: a JSON config with a format version, atomic saving, and a cheap fingerprint."""

from __future__ import annotations

import abc
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from ..fingerprint import digest_json, digest_module, register_cheap_hash

__all__ = ["Component", "ComponentLoadError", "atomic_directory", "FORMAT_VERSION", "read_versioned_json"]

#: Version of the on-disk layout of saved components. Loading a folder written with a newer version is refused.
FORMAT_VERSION = 1


class ComponentLoadError(OSError):
    """A folder or repository is not a saved component of the expected kind, or was saved by a newer version."""


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Write into a temporary sibling folder and move it into place only if the block succeeds.

    An existing ``target`` is replaced as a whole; if anything fails, ``target`` is left as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, old / "x")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_versioned_json(path: Path, expected_type: str, what: str) -> dict[str, Any]:
    """Read a saved config, refusing a missing file, another kind of object or a newer format version."""
    folder = path.parent
    if not path.is_file():
        raise ComponentLoadError(f"{folder} is not a saved {what}: {path.name} is missing.")
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ComponentLoadError(f"{path} is not valid JSON: {err}.") from None
    if config.get("component_type") != expected_type:
        raise ComponentLoadError(f"{folder} holds a {config.get('component_type')!r}, not a {expected_type!r}.")
    version = config.get("format_version", 0)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ComponentLoadError(
            f"{folder} was saved with format_version {version} (cfaug_hf {config.get('cfaug_hf_version')}); "
            f"this cfaug_hf reads format_version <= {FORMAT_VERSION}. Upgrade cfaug-hf to load it.")
    return config


class Component(abc.ABC):
    """Base of generators, checkers and the other learned parts.

    Subclasses define ``config_name`` (the JSON file that marks a saved folder), ``component_type`` and implement
    ``_save(folder)`` / ``_load(folder, config, **kwargs)``; this class handles versions, atomic writes and
    fingerprints.
    """

    config_name: ClassVar[str] = ""
    component_type: ClassVar[str] = ""
    #: Hub pipeline tag of the model card.
    pipeline_tag: ClassVar[str | None] = None
    #: What the component does in this library, for its model card.
    card_summary: ClassVar[str] = ""
    #: ``{"repo_id", "revision"}`` once pushed to or pulled from the Hub; cards of augmented data link to it.
    hub_origin: dict[str, str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_cheap_hash([cls])

    # --- to implement
    @abc.abstractmethod
    def get_config_dict(self) -> dict[str, Any]:
        """The JSON-serialisable settings saved beside the weights."""

    def _modules(self) -> list[Any]:
        """The torch modules whose weights define this component (for fingerprints)."""
        return []

    @abc.abstractmethod
    def _save(self, folder: Path) -> None:
        """Write weights and tokenizer files into ``folder`` (the config JSON is written by the caller)."""

    @classmethod
    @abc.abstractmethod
    def _load(cls, folder: Path, config: dict[str, Any], **kwargs: Any) -> Component:
        """Build the component from a folder written by :meth:`_save` and its config."""

    # --- cards (subclasses may refine)
    def card_tags(self) -> list[str]:
        return []

    def card_usage(self) -> str:
        return ""

    def card_citation(self) -> str:
        """The citation of the method this component was trained for, when recorded in ``training_info``."""
        method = (getattr(self, "training_info", None) or {}).get("for_method")
        if not method:
            return ""
        from ..methods import METHODS

        return getattr(METHODS.get(method), "citation", "")

    # --- shared
    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None,
                    commit_message: str | None = None, revision: str | None = None) -> str:
        """Push weights, config and a model card to ``repo_id`` in one commit; returns the commit id.

        Pushing again updates the card's generated section and metadata and keeps any text added to the card.
        """
        from hub_cards.push import push_component

        return push_component(self, repo_id, private=private, token=token, commit_message=commit_message,
                              revision=revision)

    def fingerprint(self) -> str:
        return digest_json({"type": type(self).__qualname__, "config": self.get_config_dict(),
                            "weights": [digest_module(m) for m in self._modules()]})

    def save_pretrained(self, save_directory: str | os.PathLike) -> Path:
        """Save weights (safetensors) and config (JSON) to ``save_directory``, replacing it atomically."""
        from .. import __version__

        with atomic_directory(save_directory) as tmp:
            self._save(tmp)
            config = {"component_type": self.component_type, "format_version": FORMAT_VERSION,
                      "cfaug_hf_version": __version__, **self.get_config_dict()}
            (tmp / self.config_name).write_text(json.dumps(config, indent=2, sort_keys=True, default=str) + "\n")
        return Path(save_directory)

    @classmethod
    def read_config(cls, folder: str | os.PathLike) -> dict[str, Any]:
        return read_versioned_json(Path(folder) / cls.config_name, cls.component_type, cls.__name__)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, *, revision: str | None = None,
                        token: str | bool | None = None, **kwargs: Any) -> Any:
        """Load from a local folder or a Hub repository (downloaded with ``snapshot_download``)."""
        folder = Path(name_or_path)
        origin = None
        if not folder.is_dir():
            from hub_cards.push import download_folder

            repo_id = os.fspath(name_or_path)
            folder, sha = download_folder(repo_id, revision=revision, token=token)
            origin = {"repo_id": repo_id, "revision": sha}
        config = cls.read_config(folder)
        for key in ("component_type", "format_version", "cfaug_hf_version"):
            config.pop(key, None)
        component = cls._load(folder, config, **kwargs)
        component.hub_origin = origin
        return component
