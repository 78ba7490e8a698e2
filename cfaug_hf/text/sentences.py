"""Sentence splitting and a table of unique sentences that documents point into.

ICDA works on sentences: a document is a list of sentence ids, a counterfactual is the same list with one id
replaced. Keeping sentences in one table means a swap never copies text, and (with a frozen encoder) each unique
sentence is embedded once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

__all__ = ["split_sentences", "SentenceTable", "SENTENCE_SPLITTERS", "SelectionResult"]

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace and an upper-case
# letter, digit or opening quote; common abbreviations do not end sentences.
_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "no", "inc", "ltd", "co",
           "mt", "u.s", "approx"}
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")

SENTENCE_SPLITTERS = ("builtin", "spacy", "stanza")
_PIPELINES: dict[str, Any] = {}


def _builtin(text: str) -> list[str]:
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        piece = text[start:m.start()].strip()
        last = piece.rsplit(None, 1)[-1].rstrip(".!?\"')]").lower() if piece else ""
        if last in _ABBREV or (len(last) == 1 and last.isalpha()):
            continue  # "Dr. Smith", "J. Smith": not a boundary
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def split_sentences(text: str, splitter: str = "builtin") -> list[str]:
    """Split ``text`` into sentences with the built-in rules, spaCy (``en_core_web_sm``) or stanza.

    Examples:
        >>> split_sentences("Great location. Dr. Who stayed here! The room was 5 min. from the station.")
        ['Great location.', 'Dr. Who stayed here!', 'The room was 5 min. from the station.']
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences takes a string, got {type(text).__name__}.")
    if splitter == "builtin":
        return _builtin(text)
    if splitter == "spacy":
        if "spacy" not in _PIPELINES:
            from ..deps import require

            spacy = require("spacy", "splitter='spacy'")
            _PIPELINES["spacy"] = spacy.load("en_core_web_sm", disable=["ner", "lemmatizer"])
        return [s.text.strip() for s in _PIPELINES["spacy"](text).sents if s.text.strip()]
    if splitter == "stanza":
        if "stanza" not in _PIPELINES:
            from ..deps import require

            stanza = require("stanza", "splitter='stanza'")
            try:
                _PIPELINES["stanza"] = stanza.Pipeline("en", processors="tokenize", verbose=False,
                                                       download_method=None)
            except Exception as err:  # stanza raises its own error types when the model is not downloaded
                raise OSError("splitter='stanza' needs the English stanza model on disk "
                              "(stanza.download('en', processors='tokenize')).") from err
        return [s.text.strip() for s in _PIPELINES["stanza"](text).sentences if s.text.strip()]
    raise ValueError(f"Unknown sentence splitter {splitter!r}; expected one of {SENTENCE_SPLITTERS}.")


class SentenceTable:
    """Unique sentences, each with an integer id; documents are lists of ids.

    Examples:
        >>> table = SentenceTable()
        >>> table.add_document(["Nice room.", "Bad food."]), table.add_document(["Bad food.", "Loud street."])
        ([0, 1], [1, 2])
        >>> table.texts([2, 0])
        ['Loud street.', 'Nice room.']
    """

    def __init__(self) -> None:
        self.sentences: list[str] = []
        self._ids: dict[str, int] = {}
        #: ``(len(sentences), hidden)`` tensor once `embed` has run (the frozen-encoder fast path).
        self.embeddings: Any = None

    def __len__(self) -> int:
        return len(self.sentences)

    def add(self, sentence: str) -> int:
        sid = self._ids.get(sentence)
        if sid is None:
            sid = self._ids[sentence] = len(self.sentences)
            self.sentences.append(sentence)  # embed() later covers sentences added after it ran
        return sid

    def add_document(self, sentences: Sequence[str]) -> list[int]:
        return [self.add(s) for s in sentences]

    def texts(self, ids: Sequence[int]) -> list[str]:
        return [self.sentences[i] for i in ids]

    def embed(self, encode: Any, batch_size: int = 256) -> Any:
        """Embed every sentence not yet embedded with ``encode(list[str]) -> tensor``; returns the matrix."""
        import torch

        done = 0 if self.embeddings is None else len(self.embeddings)
        parts = [] if self.embeddings is None else [self.embeddings]
        for start in range(done, len(self.sentences), batch_size):
            parts.append(encode(self.sentences[start:start + batch_size]).detach().cpu())
        if parts:
            self.embeddings = torch.cat(parts)
        return self.embeddings


@dataclass
class SelectionResult:
    """What a selector said about each document: selected sentence indices, predicted label, error."""

    selected: list[list[int]]
    predicted: list[int]
    #: 1 − p(true label); ``None`` when no labels were given.
    error: list[float] | None = None

    @classmethod
    def from_probs(cls, selected: list[list[int]], predicted: list[int], probs: list[list[float]],
                   labels: Sequence[int] | None) -> SelectionResult:
        error = None if labels is None else [1.0 - p[int(y)] for p, y in zip(probs, labels)]
        return cls(selected, predicted, error)

    def subset(self, indices: Sequence[int]) -> SelectionResult:
        """The selection of the documents at ``indices``, in that order."""
        return SelectionResult([self.selected[i] for i in indices], [self.predicted[i] for i in indices],
                               None if self.error is None else [self.error[i] for i in indices])

    def rationale_set(self) -> set[tuple[int, int]]:
        """A = {(document, selected sentence)}."""
        return {(d, s) for d, sel in enumerate(self.selected) for s in sel}
