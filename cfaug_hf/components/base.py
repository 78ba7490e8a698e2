"""What every component shares: a JSON config with a format version, atomic saving, and a cheap fingerprint."""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import json
import logging
import os
import sys
import types
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..fingerprint import digest_json, digest_module, register_cheap_hash, weights_state
from .. import registry
from ..sharing.configs import ConfigError, config_from_dict
from ..sharing.credentials import scrub_json
from ..sharing.folders import (FORMAT_VERSION, ComponentLoadError, check_json_files, check_weight_files,
                               read_versioned_json, write_folder)
from ..sharing.hub import HubError, resolve_folder
from ..verbosity import get_logger

__all__ = ["Component", "PretrainedComponent", "ComponentLoadError", "atomic_directory", "FORMAT_VERSION",
           "read_versioned_json", "load_weights"]

logger = get_logger(__name__)

def atomic_directory(target: str | os.PathLike, kind: str = "folder") -> Any:
    """Deprecated alias of `cfaug_hf.sharing.folders.write_folder` (``overwrite=True``), kept for earlier code; it no
    longer deletes files the library did not write."""
    import warnings

    warnings.warn("atomic_directory is deprecated; use cfaug_hf.sharing.folders.write_folder(target, kind).", DeprecationWarning,
                  stacklevel=2)
    return write_folder(target, kind, overwrite=True)


def load_weights(model_class: Any, folder: Path, what: str, **kwargs: Any) -> Any:
    """``model_class.from_pretrained(folder)`` from safetensors only, refusing weights that do not fit the model.

    transformers fills any parameter it cannot find with random values and only logs it; a component that loads
    with random weights would generate garbage without a word, so a missing, unexpected or mismatched key is a
    `ComponentLoadError` naming the weights file.
    """
    model, info = model_class.from_pretrained(folder, use_safetensors=True, output_loading_info=True, **kwargs)
    bad = {kind: sorted(info.get(kind) or ()) for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    bad = {kind: keys for kind, keys in bad.items() if keys}
    if bad:
        files = sorted(folder.glob("*.safetensors"))
        where = files[0] if len(files) == 1 else folder
        detail = "; ".join(f"{len(keys)} {kind.replace('_', ' ')} (e.g. {keys[0]!r})" for kind, keys in bad.items())
        raise ComponentLoadError(f"The weights in {where} do not fit the {what}'s model: {detail}. The file belongs "
                                 f"to another model or is damaged.")
    return model


#: Key of the saved config that records the weights' digest and their files' digests (see _fingerprint_from_files).
_WEIGHTS_RECORD = "weights_record"
#: The saved config's key for what the card declares of this very component (licence, languages).
_CARD = "card"


@contextlib.contextmanager
def new_head_load() -> Iterator[None]:
    """Load a base model whose task head is missing from its checkpoint by design (a new head to be trained, or
    one an adapter brings) without transformers' load report, which lists the head's weights as MISSING and tells
    the user to train it. Only that logger's warnings are hidden, and only for the load."""
    from ..verbosity import hiding_records

    with hiding_records("transformers.modeling_utils", lambda record: record.levelno >= logging.ERROR):
        yield


@dataclasses.dataclass
class ComponentCardData:
    """Everything a component's model card says, in one typed object (`Component.card_data` builds it; the card
    is rendered from it by `cfaug_hf.sharing.cards.component_card`). A new card field is a field here and a line
    of the card template.

    Examples:
        >>> card = ComponentCardData(summary="A recogniser.", base_model="dslim/bert-base-NER")
        >>> card.tags, card.license
        ([], None)
    """

    summary: str = dataclasses.field(metadata={"help": "What the component does in this library."})
    base_model: str | None = dataclasses.field(default=None, metadata={
        "help": "The model it was built on (Hub ids joined by '+'), or None."})
    training: dict[str, Any] = dataclasses.field(default_factory=dict, metadata={
        "help": "What it was trained on and how (eval_* keys are shown as evaluation figures)."})
    tags: list[str] = dataclasses.field(default_factory=list, metadata={"help": "Hub tags beyond the library's."})
    usage: str = dataclasses.field(default="", metadata={"help": "Markdown shown under 'How to load it'."})
    citation: str = dataclasses.field(default="", metadata={"help": "BibTeX of the method it serves."})
    pipeline_tag: str | None = dataclasses.field(default=None, metadata={"help": "The Hub pipeline tag."})
    license: str | None = dataclasses.field(default=None, metadata={
        "help": "The licence of the weights (a Hub licence id, e.g. 'apache-2.0'), when known."})
    language: list[str] | None = dataclasses.field(default=None, metadata={
        "help": "Languages of the text it handles (ISO 639-1), when known."})
    import_from: str = dataclasses.field(default="cfaug_hf", metadata={
        "help": "The module the card's loading snippet imports the class from."})


class Component(abc.ABC):
    """Base of every part an augmenter uses: generators, checkers, and parts without weights (an NER pipeline, an
    HTTP LLM client, a search index).

    Subclasses define ``config_name`` (the JSON file that marks a saved folder), ``component_type`` and implement
    ``get_config_dict``, ``_save(folder)`` (any files) and ``_load(folder, config, **kwargs)``; this class handles
    versions, manifests, atomic writes, Hub loading and fingerprints, and registers the class by its
    ``component_type``. Parts built on a transformers model subclass `PretrainedComponent`.
    """

    config_name: ClassVar[str] = ""
    component_type: ClassVar[str] = ""
    #: Hub pipeline tag of the model card.
    pipeline_tag: ClassVar[str | None] = None
    #: What the component does in this library, for its model card.
    card_summary: ClassVar[str] = ""
    #: Files a saved folder must hold even when it predates manifests (a tokenizer, for model components).
    required_files: ClassVar[tuple[str, ...]] = ()
    #: ``{"repo_id", "revision"}`` once pushed to or pulled from the Hub; cards of augmented data link to it.
    hub_origin: dict[str, str] | None = None
    #: The model it was built on, when it has one (set by components with weights).
    base_model: str | None = None
    #: What it was trained on and how (set by trained components; read-only empty by default).
    training_info: Mapping[str, Any] = types.MappingProxyType({})
    #: The licence and languages its card declares, when known: a class default, settable per component
    #: (``checker.card_license = "mit"``) and saved with it.
    card_license: str | None = None
    card_language: list[str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_cheap_hash([cls])
        registry.register_component(cls)

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
        """Build the component from a folder written by `_save` and its config."""

    # --- cards (subclasses may refine)
    def card_tags(self) -> list[str]:
        return []

    def card_usage(self) -> str:
        return ""

    def card_citation(self) -> str:
        """The citation of the method this component was trained for, when recorded in ``training_info``."""
        method = self.training_info.get("for_method")
        if not method:
            return ""
        try:
            return getattr(registry.augmenter_class(method), "citation", "")
        except KeyError:
            return ""

    def card_data(self) -> ComponentCardData:
        """What this component's model card says (subclasses refine the hooks above or this)."""
        cls = type(self)
        public = cls.__name__ in getattr(sys.modules.get("cfaug_hf"), "__all__", ())  # imported before any module
        return ComponentCardData(summary=self.card_summary, base_model=self.base_model,
                                 training=dict(self.training_info), tags=self.card_tags(), usage=self.card_usage(),
                                 citation=self.card_citation(), pipeline_tag=self.pipeline_tag,
                                 license=self.card_license, language=self.card_language,
                                 import_from="cfaug_hf" if public else cls.__module__)

    # --- shared
    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None,
                    commit_message: str | None = None, revision: str | None = None) -> str:
        """Push weights, config and a model card to ``repo_id`` in one commit; returns the commit id.

        Pushing again updates the card's generated section and metadata and keeps any text added to the card.
        """
        from ..sharing.push import push_component

        return push_component(self, repo_id, private=private, token=token, commit_message=commit_message,
                              revision=revision)

    def fingerprint(self) -> str:
        """A digest of the class, the config and the weights; remembered until the config or a weight changes.

        Hashing the weights reads every byte once (about 0.3 s for a 135M-parameter model); ``datasets`` asks for
        the fingerprint at every ``map``, so the answer is kept and reused while the config and the weights' version
        counters are unchanged (torch bumps them on every in-place write, e.g. an optimiser step; writes through
        ``tensor.data`` bypass them, so call `forget_fingerprint` after such surgery).
        """
        return digest_json({"type": type(self).__qualname__, "config": digest_json(self.get_config_dict()),
                            "weights": self._weights_digests()})

    def weights_fingerprint(self) -> str:
        """A digest of the weight tensors: unlike `fingerprint`, unchanged by settings and by the card's metadata
        (``training_info``), so a measurement can name the weights it was made on and be matched to them after the
        card is edited. It reads the tensors (about 0.3 s for 135M parameters): the digest `fingerprint` keeps is
        the one recorded when the folder was saved, which for a half-precision adapter describes the
        half-precision copy, not the tensors loaded from it. A change of representation that keeps the function
        (a LoRA adapter merged into its base for generation, and unmerged again) keeps this digest too, so a
        figure measured after generating names the weights a fresh load has."""
        kept = self._memo_box().get("tensors")
        if kept is not None and kept[0] == self._weights_key():
            return kept[1]
        return digest_json([digest_module(m) for m in self._modules()])

    def _weights_digests(self) -> list[str]:
        # Kept apart from the config, so a change of settings (or a twin from sharing_weights) rehashes nothing.
        key = self._weights_key()
        box = self._memo_box()
        if box.get("memo") is None or box["memo"][0] != key:
            box["memo"] = (key, [digest_module(m) for m in self._modules()])
        return box["memo"][1]

    def _memo_box(self) -> dict[str, Any]:
        # One box for every twin of sharing_weights(): they share the weights, so a change of representation one
        # of them records (a LoRA merge before generating) holds for all, and their fingerprints stay equal.
        return self.__dict__.setdefault("_weights_memo_box", {})

    def forget_fingerprint(self) -> None:
        """Drop the remembered fingerprint (after changing weights in a way torch does not track)."""
        self._memo_box().pop("memo", None)

    def _weights_key(self) -> tuple[Any, ...]:
        return tuple(weights_state(m) for m in self._modules())

    def _keep_fingerprint(self, digests: list[str], tensors: str | None = None) -> None:
        """Keep the weights' ``digests`` (from `_weights_digests`) for the current weights: for changes of
        representation that keep the function (merging a LoRA adapter into its base), so caches keyed on the
        fingerprint stay valid; ``tensors``, the `weights_fingerprint` from before the change, is kept likewise."""
        box = self._memo_box()
        box["memo"] = (self._weights_key(), digests)
        if tensors is not None:
            box["tensors"] = (box["memo"][0], tensors)

    def _write_card(self, folder: Path) -> None:
        """Our model card in every saved folder, adapter or whole model (peft writes a blank template naming the base
        by its local path, which this replaces); text a user added to the destination's card is kept."""
        from huggingface_hub import ModelCard

        from ..sharing.cards import component_card, merge_card

        target = getattr(self, "_saving_to", None)
        card = component_card(self, target.name if target else folder.name)
        existing = target / "README.md" if target else None
        if existing is not None and existing.is_file():
            card = merge_card(ModelCard(existing.read_text(encoding="utf-8")), card)
        (folder / "README.md").write_text(str(card), encoding="utf-8")

    def _weights_record(self, folder: Path) -> dict[str, Any] | None:
        """What a save records about the weights' files (components with weights; see PretrainedComponent)."""
        return None

    def save_pretrained(self, save_directory: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Save weights (safetensors) and config (JSON) to ``save_directory`` in one atomic rename.

        The folder may be new, empty, or a saved component of the same type (replaced; files you added are kept). A
        non-empty folder holding anything else is refused unless ``overwrite=True``, and even then no file of yours
        is deleted (see `cfaug_hf.sharing.folders.write_folder`).
        """
        from .._version import __version__

        with write_folder(save_directory, self.component_type, overwrite=overwrite) as tmp:
            self._saving_to = Path(save_directory)  # a card written by _save is named after it and merged into its own
            self._save(tmp)
            config = {"component_type": self.component_type, "format_version": FORMAT_VERSION,
                      "cfaug_hf_version": __version__, **self.get_config_dict()}
            card = {k: v for k, v in (("license", self.card_license), ("language", self.card_language)) if v}
            if card:
                config[_CARD] = card
            record = self._weights_record(tmp)
            if record:
                config[_WEIGHTS_RECORD] = record
            (tmp / self.config_name).write_text(json.dumps(scrub_json(config), indent=2, sort_keys=True) + "\n")
        return Path(save_directory)

    @classmethod
    def read_config(cls, folder: str | os.PathLike) -> dict[str, Any]:
        return read_versioned_json(Path(folder) / cls.config_name, cls.component_type, cls.__name__)

    @classmethod
    def _config_section(cls, folder: Path, config: dict[str, Any], key: str, config_class: type) -> Any:
        """The ``key`` section of a saved config as a ``config_class``, every field's type checked."""
        return config_from_dict(config_class, config.get(key, {}), f"{folder / cls.config_name} (section {key!r})")

    @classmethod
    def from_reference(cls, value: str, **options: Any) -> Component | None:
        """The component a short reference names (a keyword such as ``"local"`` or ``"spacy"``, an endpoint URL),
        or None when ``value`` is not one this class knows: folders and Hub ids go through `from_pretrained`.
        ``options`` are settings the command line gives with the reference; a class ignores those it has none of.
        This base class knows no short references."""
        return None

    @classmethod
    def holds(cls, name_or_path: str | os.PathLike) -> bool:
        """Whether the saved folder or Hub repository ``name_or_path`` holds a component of this class (its config
        file is there): how a role that several types can fill tells which one a folder is."""
        folder, _ = resolve_folder(name_or_path, "component")
        return (folder / cls.config_name).is_file()

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, *, revision: str | None = None,
                        token: str | bool | None = None, **kwargs: Any) -> Any:
        """Load from a local folder or a Hub repository (downloaded with ``snapshot_download``)."""
        folder, origin = resolve_folder(name_or_path, cls.__name__, revision=revision, token=token)
        config = cls.read_config(folder)
        for name in cls.required_files:
            if not (folder / name).is_file():
                raise ComponentLoadError(f"{folder} is an incomplete saved {cls.__name__}: {name!r} is missing.")
        check_weight_files(folder, cls.__name__)
        check_json_files(folder, cls.__name__)
        for key in ("component_type", "format_version", "cfaug_hf_version"):
            config.pop(key, None)
        record = config.pop(_WEIGHTS_RECORD, None)
        card = config.pop(_CARD, None) or {}
        if not (isinstance(card, dict) and isinstance(card.get("license", ""), str) and (
                isinstance(card.get("language", []), list) and all(isinstance(x, str) for x in card.get("language", [])))):
            raise ComponentLoadError(f"{folder / cls.config_name}: 'card' must be {{\"license\": a licence id, "
                                     f"\"language\": a list of language codes}}, got {str(card)[:100]}.")
        try:
            component = cls._load(folder, config, **kwargs)
        except ConfigError as err:
            raise ComponentLoadError(f"Cannot load the {cls.__name__}: {err}") from None
        except (ComponentLoadError, HubError, MemoryError):
            raise
        except Exception as err:  # a loader's own error on a damaged file (tokenizers, transformers, faiss, ...)
            raise ComponentLoadError(
                f"Cannot load the {cls.__name__} from {folder}: {type(err).__name__}: {str(err)[:300]}. A file of the "
                f"folder is damaged or belongs to another model; save or download it again.") from err
        component.hub_origin = origin
        component.card_license = card.get("license") or cls.card_license
        component.card_language = card.get("language") or cls.card_language
        if isinstance(component, PretrainedComponent):
            component._fingerprint_from_files(folder, config, record)
        return component


def _base_weight_files(name: Any) -> list[Path] | None:
    """The weight files a base model named in a saved config was loaded from, when they are on this machine (a
    folder, or the embedded copy of a known Hub id); None otherwise."""
    from ..pretrained import local_copy, resolve_model

    if not isinstance(name, str) or not name:
        return None
    try:
        ref = local_copy(resolve_model(name))
    except (OSError, ValueError):
        return None
    path = Path(ref.path)
    if ref.kwargs.get("gguf_file"):
        return [path / ref.kwargs["gguf_file"]]
    return sorted(path.glob("*.safetensors")) or None if path.is_dir() else None


class PretrainedComponent(Component):
    """A component around a transformers model and its tokenizer: device placement, the base model's name, what it
    was trained on, counters, weights in safetensors and the tokenizer beside them.

    Subclasses call `_setup` from ``__init__`` and load with `load_weights` in ``_load``.
    """

    required_files = ("tokenizer_config.json",)
    #: The dataclass of the component's settings (``None``: it has none beyond the model).
    config_class: ClassVar[type | None] = None

    def _setup(self, model: Any, tokenizer: Any, *, config: Any = None, overrides: dict[str, Any] | None = None,
               device: str | None = None, base_model: str | None = None,
               training_info: dict[str, Any] | None = None) -> None:
        import dataclasses

        import torch

        if self.config_class is not None:
            config = config or self.config_class()
            self.config = dataclasses.replace(config, **overrides) if overrides else config
        self.model, self.tokenizer = model, tokenizer
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device)
        self.base_model = base_model or getattr(getattr(model, "config", None), "_name_or_path", None) or None
        self.training_info = dict(training_info or {})
        self.stats: Counter = Counter()
        self._warned_truncation = False

    def _weight_files(self, folder: Path, adapter: bool, base_model: Any) -> dict[str, str] | None:
        """``{name: xxhash}`` of the files a single-model component's weights are in: the base model's (for an
        adapter) and the folder's safetensors; None when they cannot all be found on this machine."""
        from ..pretrained import file_content_digest

        files = sorted(folder.glob("*.safetensors"))
        if adapter:
            base = _base_weight_files(base_model)
            if base is None:
                return None
            files = base + files
        if not files or len(self._modules()) != 1:
            return None
        return {f"{i}:{f.name}": file_content_digest(f) for i, f in enumerate(files)}

    def _weights_record(self, folder: Path) -> dict[str, Any] | None:
        """What a save records so that loading can fingerprint the weights from their files: the weights' digest
        (the same as this object's) and the digests of the files it is in."""
        files = self._weight_files(folder, self._saves_adapter(), self.base_model)
        return None if files is None else {"digests": self._weights_digests(), "files": files}

    def _fingerprint_from_files(self, folder: Path, config: dict[str, Any], record: Any) -> None:
        """Take the weights' digest from the files they were just loaded from (xxhash, remembered per file)
        instead of hashing the tensors: hashing reads every weight, which makes all of them resident in memory even
        when another engine (CTranslate2) does the decoding. When the files are the ones a save recorded, the
        recorded digest is kept, so a loaded component fingerprints as the object that was saved; otherwise (a
        folder saved by an earlier release) the files' digests stand for the weights. Either stays valid until a
        weight changes (training), like the tensors' own."""
        base = config.get("base_model")
        adapter = bool(config.get("adapter"))
        files = self._weight_files(folder, adapter, base_reference(folder, base) if adapter and base else base)
        if files is None:
            return
        if isinstance(record, dict) and record.get("files") == files and isinstance(record.get("digests"), list):
            self._keep_fingerprint(list(record["digests"]))
            return
        from ..fingerprint import digest_json

        self._keep_fingerprint([digest_json({"weight_files": sorted(files.items())})])

    def _count_truncated(self, n: int, option: str, limit: int) -> None:
        """Count inputs cut to ``option=limit`` tokens; warn the first time only."""
        if not n:
            return
        self.stats["input_truncated"] += n
        if not self._warned_truncation:
            logger.warning("%d input(s) longer than %s=%d tokens were truncated (counted in stats['input_truncated']; "
                           "this warning is shown once).", n, option, limit)
            self._warned_truncation = True

    def _modules(self) -> list[Any]:
        return [self.model]

    def _is_peft(self) -> bool:
        return is_peft_model(self.model)

    def sharing_weights(self) -> Any:
        """A copy with its own settings, counters and training record that shares the model and tokenizer: what
        the shipped defaults hand out, so changing one user's decoding settings never changes another's."""
        import copy
        import dataclasses
        from collections import Counter

        self._memo_box()  # created before the copy, so the twin shares it
        twin = copy.copy(self)
        if getattr(self, "config", None) is not None and dataclasses.is_dataclass(self.config):
            twin.config = dataclasses.replace(self.config)
        twin.training_info = copy.deepcopy(self.training_info)
        twin.stats = Counter()
        return twin

    def halve_adapter(self) -> None:
        """Keep the LoRA adapter and the modules trained whole in float16, halving the saved adapter (peft casts
        them back to the base's dtype when it loads them); the shipped checkers and editors are saved this way."""
        if not self._is_peft():
            raise ValueError(f"{type(self).__name__}.halve_adapter: the model has no LoRA adapter.")
        halve_lora(self.model)
        self.forget_fingerprint()

    def _saves_adapter(self) -> bool:
        """Whether `save_pretrained` writes only a LoRA adapter: it has one and its base has a name to be
        loaded from again (an in-memory base is saved whole, adapter merged in)."""
        return self._is_peft() and bool(self.base_model)

    def _save(self, folder: Path) -> None:
        # A LoRA model saves only its adapter (a few MB); the base is named in the config and reloaded from it.
        save_model(self.model, folder, adapter_only=self._saves_adapter(), base_model=self.base_model)
        self.tokenizer.save_pretrained(folder)
        self._write_card(folder)

    @classmethod
    def _load_adapter(cls, auto: Any, folder: Path, config: dict[str, Any], **model_kwargs: Any) -> Any:
        """The base model named in ``config`` (Hub id, folder or embedded copy) with the LoRA adapter in
        ``folder`` on top."""
        return load_lora_adapter(auto, folder, config, cls.__name__, **model_kwargs)


def is_peft_model(model: Any) -> bool:
    """Whether ``model`` carries a peft adapter (False without peft installed)."""
    from ..deps import is_peft_available

    if not is_peft_available():
        return False
    from peft import PeftModel

    return isinstance(model, PeftModel)


def halve_lora(model: Any) -> None:
    """Cast a peft model's LoRA layers and wholly trained modules to float16 in place (peft casts them back to the
    base's dtype when it loads them)."""
    for name, param in model.named_parameters():
        if "lora_" in name or "modules_to_save" in name:
            param.data = param.data.half()


def save_model(model: Any, folder: Path, *, adapter_only: bool, base_model: str | None = None) -> None:
    """``model.save_pretrained(folder)``; a LoRA model saves only its adapter when ``adapter_only`` (its base is
    named in the component's config, ``base_model``, and reloaded from it), else its adapter merged into a whole
    copy."""
    # LoRA here targets linear layers, never the embeddings, so peft need not look the base model up (which fails
    # offline with a warning) to decide whether to save them.
    if is_peft_model(model) and adapter_only:
        _dedupe_modules_to_save(model)
        model.save_pretrained(folder, save_embedding_layers=False)
        _tidy_adapter_config(folder / "adapter_config.json", base_model)
    elif is_peft_model(model):
        import copy

        copy.deepcopy(model).merge_and_unload().save_pretrained(folder)
    else:
        model.save_pretrained(folder)


def data_origin(folder: Path) -> str | None:
    """How a saved folder being loaded is someone else's data ("downloaded from the Hub", "read as part of
    r.yaml"), or None when the user loads a folder of their own."""
    from ..sharing.consent import data_source
    from ..sharing.folders import is_pulled

    if is_pulled(folder):
        return "downloaded from the Hub"
    return f"read as part of {data_source()}" if data_source() else None


def base_reference(folder: Path, base: str, field: str = "base_model") -> str:
    """The ``base_model`` a saved config names, by the one rule for names in loaded data: in a folder that is
    someone else's (pulled from the Hub, or read as part of a loaded augmenter or recipe) it is a `HubId`, never a
    folder on this machine; in the user's own folder it is what it says."""
    from ..sharing.consent import HubId

    source = data_origin(folder)
    if source is None:
        return base
    if os.path.isabs(base) or base.startswith(("~", ".")) or "\\" in base or os.path.isdir(base):
        raise ComponentLoadError(f"{folder}: {field} is {base!r}, a local path, in a folder {source}; refusing "
                                 f"to load a model from this machine on its say-so. A shared component names its "
                                 f"models by Hub id.")
    return HubId(base, field=f"{field} in {folder}")


def load_lora_adapter(auto: Any, folder: Path, config: dict[str, Any], what: str, **model_kwargs: Any) -> Any:
    """The base model named in ``config["base_model"]`` (Hub id, folder or embedded copy) loaded with ``auto``,
    with the LoRA adapter saved in ``folder`` on top; ``what`` names the component in errors."""
    from ..deps import require
    from ..pretrained import load_model, quiet_dependency_warnings

    PeftModel = require("peft", f"Loading the LoRA {what} in {folder}").PeftModel
    base = config.get("base_model")
    if not isinstance(base, str) or not base:
        raise ComponentLoadError(f"{folder} holds an adapter but its config names no base_model.")
    base = base_reference(folder, base)
    with new_head_load():  # the adapter holds the trained head
        model = load_model(auto, base, **model_kwargs)
    dtype = next(model.parameters()).dtype
    with quiet_dependency_warnings():
        # The adapter's layers are created empty (on the meta device) and take the file's tensors as they are,
        # instead of being initialised at random and then overwritten.
        peft_model = PeftModel.from_pretrained(model, folder, low_cpu_mem_usage=True)
    _dedupe_modules_to_save(peft_model)
    for param in peft_model.parameters():
        if param.dtype != dtype and param.is_floating_point():  # an adapter saved in half precision
            param.data = param.data.to(dtype)
    return peft_model


def _tidy_adapter_config(config_file: Path, base_model: str | None) -> None:
    """Write the adapter's ``target_modules`` in sorted order and name its base as the component's config does.
    peft keeps the modules as a set and writes them in the set's iteration order, which changes with Python's string
    hashing from one process to the next, so saving the same adapter twice gave two different adapter_config.json
    files (and manifest digests); and it records the base by the path it was loaded from (a folder in this
    machine's cache or site-packages), which a shared folder must not publish."""
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if isinstance(config.get("target_modules"), list):
        config["target_modules"] = sorted(config["target_modules"])
    if base_model:
        config["base_model_name_or_path"] = base_model
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")


def _dedupe_modules_to_save(peft_model: Any) -> None:
    """Drop repeated names from each adapter's ``modules_to_save``, first occurrence kept. A sequence-classification
    PeftModel appends its task heads ("classifier", "score") to that list whenever it is built, including when it is
    loaded from a folder that already lists them, so every load and save of a checker lengthened adapter_config.json."""
    for cfg in getattr(peft_model, "peft_config", {}).values():
        names = getattr(cfg, "modules_to_save", None)
        if names:
            cfg.modules_to_save = list(dict.fromkeys(names))
