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

__all__ = ["Component", "ComponentLoadError", "atomic_directory", "FORMAT_VERSION"]

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


class Component(abc.ABC):
    """Base of generators, checkers and the other learned parts.

    Subclasses define ``config_name`` (the JSON file that marks a saved folder), ``component_type`` and implement
    ``_save(folder)`` / ``_load(folder, config, **kwargs)``; this class handles versions, atomic writes and
    fingerprints.
    """

    config_name: ClassVar[str] = ""
    component_type: ClassVar[str] = ""

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

    # --- shared
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
        path = Path(folder) / cls.config_name
        if not path.is_file():
            raise ComponentLoadError(f"{folder} is not a saved {cls.__name__}: {cls.config_name} is missing.")
        try:
            config = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ComponentLoadError(f"{path} is not valid JSON: {err}.") from None
        if config.get("component_type") != cls.component_type:
            raise ComponentLoadError(f"{folder} holds a {config.get('component_type')!r}, not a "
                                     f"{cls.component_type!r}.")
        version = config.get("format_version", 0)
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ComponentLoadError(
                f"{folder} was saved with format_version {version} (cfaug_hf {config.get('cfaug_hf_version')}); "
                f"this cfaug_hf reads format_version <= {FORMAT_VERSION}. Upgrade cfaug-hf to load it.")
        return config

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, *, revision: str | None = None,
                        token: str | bool | None = None, **kwargs: Any) -> Any:
        """Load from a local folder or a Hub repository (downloaded with ``snapshot_download``)."""
        folder = Path(name_or_path)
        if not folder.is_dir():
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(os.fspath(name_or_path), revision=revision, token=token))
        config = cls.read_config(folder)
        for key in ("component_type", "format_version", "cfaug_hf_version"):
            config.pop(key, None)
        return cls._load(folder, config, **kwargs)
