"""Which columns of a dataset an augmenter reads, edits and labels.

A `TaskSchema` is the one place that knows the shape of a task: the text columns, which of them a method may
edit, the label column and the label names. Augmenters, checkers and metrics take a schema instead of hard-coding
``"claim"`` or ``"label"``, and every bad-input error in the library is raised from here, so each names the column,
the row and what was expected.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["TaskSchema", "SchemaError", "CONLL2003_TAGS", "SEMEVAL2010_RELATIONS"]

#: CoNLL-2003's IOB2 tag set (the order of the Hub's ``conll2003`` ``ner_tags`` ClassLabel).
CONLL2003_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")
#: SemEval-2010 Task 8's 19 relation labels: nine relations in both directions, and Other.
SEMEVAL2010_RELATIONS = tuple(
    f"{rel}({a},{b})" for rel in ("Cause-Effect", "Component-Whole", "Content-Container", "Entity-Destination",
                                  "Entity-Origin", "Instrument-Agency", "Member-Collection", "Message-Topic",
                                  "Product-Producer") for a, b in (("e1", "e2"), ("e2", "e1"))) + ("Other",)


class SchemaError(ValueError):
    """A dataset or a batch does not match the `TaskSchema` an augmenter was built with."""


def _mixed_types(feature: Any) -> bool:
    """Whether ``datasets`` typed a column as ``Json`` (it does so when a file's rows give a column values of different
    types: a string in one row, a list in another; a label as a name in one row and an id in another). Such a column
    is checked cell by cell instead, each cell against what the column may hold."""
    return type(feature).__name__ == "Json"


def _lone_surrogate(value: Any) -> str | None:
    """Where a text (or list of texts) holds a lone surrogate, as ``'\\ud800' at character 13``; None if none."""
    for text in ([value] if isinstance(value, str) else value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            return f"{text[err.start]!r} at character {err.start}"
    return None


def _did_you_mean(name: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def _row_ref(row: int | None) -> str:
    return "" if row is None else f" at row {row}"


@dataclass(frozen=True)
class TaskSchema:
    """Names the columns of a classification task over one or more texts, or of a token-classification task
    (``task="token-classification"``: one list-of-tokens column and a label column holding one tag per token).

    Args:
        text_columns: input text columns, in the order a pair classifier reads them (e.g. claim, then evidence).
        edit_columns: the subset of ``text_columns`` an augmenter may rewrite.
        label_column: the label column; its values may be label names (str) or integer ids (int or ClassLabel);
            for token classification, a list of them per row (one per token).
        label_names: the label names, in id order (the tag set, for token classification).
        list_columns: text columns that may hold a list of strings instead of one string (multi-piece evidence).
        id_column: optional column with a stable row id, used as ``cf_source_id``; without it a content digest is used.
        task: a short task name used in cards and messages.

    Examples:
        >>> schema = TaskSchema.fact_verification()
        >>> schema.label_id("SUPPORTS"), schema.label_name(1)
        (0, 'REFUTES')
        >>> TaskSchema.nli().text_columns
        ('premise', 'hypothesis')
    """

    text_columns: tuple[str, ...]
    edit_columns: tuple[str, ...]
    label_column: str
    label_names: tuple[str, ...]
    list_columns: tuple[str, ...] = ()
    id_column: str | None = None
    task: str = "text-classification"
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False, hash=False)
    _spelled: dict[tuple[str, str], str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("text_columns", "edit_columns", "label_names", "list_columns"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value))
        if not self.text_columns:
            raise SchemaError("TaskSchema needs at least one text column.")
        if len(set(self.label_names)) != len(self.label_names) or len(self.label_names) < 2:
            raise SchemaError(f"label_names must be two or more distinct names, got {list(self.label_names)}.")
        bad = [n for n in self.label_names if not isinstance(n, str) or not n.strip()]
        if bad:
            raise SchemaError(f"label_names must be non-empty strings; got {bad[0]!r} in {list(self.label_names)}.")
        seen: dict[str, str] = {}
        for name in self.label_names:  # labels are matched case-insensitively, so these would read as one another
            key = name.strip().casefold()
            if key in seen:
                raise SchemaError(f"label_names {seen[key]!r} and {name!r} differ only in case or spaces; labels are "
                                  f"matched case-insensitively, so a row labelled one would be read as the other. "
                                  f"Give every label a distinct name.")
            seen[key] = name
        for col in self.edit_columns + self.list_columns:
            if col not in self.text_columns:
                raise SchemaError(f"Column {col!r} is edited or list-valued but is not one of text_columns "
                                  f"{list(self.text_columns)}.")
        if self.label_column in self.text_columns:
            raise SchemaError(f"label_column {self.label_column!r} is also a text column.")
        index = {name: i for i, name in enumerate(self.label_names)}
        index.update({name.casefold(): i for i, name in enumerate(self.label_names)})
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_spelled", {})

    # ----------------------------------------------------------------------------------------------------- presets
    @classmethod
    def fact_verification(cls, *, claim: str = "claim", evidence: str = "evidence", label: str = "label",
                          nei: bool = False, id_column: str | None = None) -> TaskSchema:
        """Claim + evidence (one string or a list of strings), SUPPORTS/REFUTES and optionally NOT ENOUGH INFO."""
        names = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO") if nei else ("SUPPORTS", "REFUTES")
        return cls(text_columns=(claim, evidence), edit_columns=(claim, evidence), label_column=label,
                   label_names=names, list_columns=(evidence,), id_column=id_column, task="fact-verification")

    @classmethod
    def nli(cls, *, premise: str = "premise", hypothesis: str = "hypothesis", label: str = "label",
            label_names: Sequence[str] = ("entailment", "neutral", "contradiction"),
            id_column: str | None = None) -> TaskSchema:
        """Premise + hypothesis with the SNLI/MNLI label order (entailment, neutral, contradiction)."""
        return cls(text_columns=(premise, hypothesis), edit_columns=(premise, hypothesis), label_column=label,
                   label_names=tuple(label_names), id_column=id_column, task="natural-language-inference")

    @classmethod
    def sentiment(cls, *, text: str = "text", label: str = "label",
                  label_names: Sequence[str] = ("negative", "positive"), id_column: str | None = None) -> TaskSchema:
        """One text column, negative/positive."""
        return cls(text_columns=(text,), edit_columns=(text,), label_column=label, label_names=tuple(label_names),
                   id_column=id_column, task="sentiment-analysis")

    @classmethod
    def token_classification(cls, *, tokens: str = "tokens", tags: str = "ner_tags",
                             tag_names: Sequence[str] = CONLL2003_TAGS, id_column: str | None = None) -> TaskSchema:
        """Named-entity recognition: a list of tokens and one IOB2 tag per token (default: CoNLL-2003's tags)."""
        return cls(text_columns=(tokens,), edit_columns=(tokens,), label_column=tags, label_names=tuple(tag_names),
                   list_columns=(tokens,), id_column=id_column, task="token-classification")

    @classmethod
    def relation_extraction(cls, *, text: str = "text", label: str = "label",
                            label_names: Sequence[str] = SEMEVAL2010_RELATIONS,
                            id_column: str | None = None) -> TaskSchema:
        """Relation classification over a sentence whose head and tail are marked up (SemEval-2010 Task 8:
        ``<e1>head</e1>``, ``<e2>tail</e2>``, labels such as ``Cause-Effect(e1,e2)``)."""
        return cls(text_columns=(text,), edit_columns=(text,), label_column=label, label_names=tuple(label_names),
                   id_column=id_column, task="relation-extraction")

    @property
    def is_token_level(self) -> bool:
        """Whether labels are per token (token classification) rather than per row."""
        return self.task == "token-classification"

    @property
    def bias_columns(self) -> tuple[str, ...]:
        """The field whose shortcuts the bias diagnostics look at: the claim, the hypothesis, or the edit columns."""
        if self.task == "fact-verification":
            return self.text_columns[:1]
        if self.task == "natural-language-inference":
            return self.text_columns[1:2]
        return self.edit_columns

    # ------------------------------------------------------------------------------------------------------ labels
    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    def label_id(self, value: Any, *, row: int | None = None) -> int:
        """The integer id of a label given as a name (any case) or an id."""
        if isinstance(value, bool) or value is None:  # True is an int to Python, but never a label
            ident = None
        elif isinstance(value, int) or (hasattr(value, "__index__") and not isinstance(value, str)):
            ident = int(value)
            if 0 <= ident < len(self.label_names):
                return ident
        elif isinstance(value, str):
            ident = self._index.get(value, self._index.get(value.casefold()))
            if ident is not None:
                return ident
            if value.isascii() and value.isdigit() and int(value) < len(self.label_names):
                # An id written as text (a CSV column mixing ids and names reads them all as text): the same id a
                # JSON or Parquet cell holding the number gives.
                return int(value)
        raise SchemaError(
            f"Column {self.label_column!r}{_row_ref(row)}: unknown label {value!r}; expected one of "
            f"{list(self.label_names)} or an id in 0..{len(self.label_names) - 1}."
        )

    def label_name(self, value: Any, *, row: int | None = None) -> str:
        """The canonical name of a label given as a name (any case) or an id."""
        return self.label_names[self.label_id(value, row=row)]

    def row_label(self, value: Any, *, row: int | None = None) -> str:
        """A row's label as one string: its canonical name, or for token classification the tag names joined by
        spaces (what ``cf_original_label`` holds).

        Examples:
            >>> TaskSchema.token_classification().row_label([1, 2, 0])
            'B-PER I-PER O'
        """
        if self.is_token_level:
            return " ".join(self.label_name(v, row=row) for v in value)
        return self.label_name(value, row=row)

    def encode_label_like(self, name: str, like: Any) -> Any:
        """``name`` in the representation ``like`` uses: an id when the dataset stores ids, else the name spelled
        in ``like``'s case (``refutes`` next to ``supports``), so an output never mixes two spellings of a label.

        For token classification ``name`` is a row label (tag names joined by spaces) and ``like`` the row's list.

        Examples:
            >>> s = TaskSchema.fact_verification(nei=True)
            >>> s.encode_label_like("REFUTES", "supports"), s.encode_label_like("REFUTES", 0), s.encode_label_like(
            ...     "NOT ENOUGH INFO", "Supports")
            ('refutes', 1, 'Not enough info')
        """
        if self.is_token_level and not isinstance(like, (str, int)):
            first = like[0] if len(like) else "O"
            return [self.encode_label_like(tag, first) for tag in name.split()]
        if isinstance(like, int) and not isinstance(like, bool):
            return self.label_id(name)
        if not isinstance(like, str):
            return self.label_names[self.label_id(name)]
        key = (name, like)
        spelled = self._spelled.get(key)
        if spelled is None:  # a handful of (label, spelling) pairs per dataset: work each out once
            target = self.label_names[self.label_id(name)]
            canonical = self.label_names[self.label_id(like)]
            spelled = target
            if like != canonical:
                for style in (str.lower, str.upper, str.capitalize, str.title):
                    if like == style(canonical):
                        spelled = style(target)
                        break
            self._spelled[key] = spelled
        return spelled

    # ------------------------------------------------------------------------------------------------------- texts
    def pieces(self, value: str | Sequence[str]) -> list[str]:
        """A text cell as a list of pieces (a plain string is one piece)."""
        return [value] if isinstance(value, str) else list(value)

    def joined(self, value: str | Sequence[str], sep: str = " ") -> str:
        """A text cell as one string; list cells are joined with ``sep``."""
        return value if isinstance(value, str) else sep.join(value)

    # -------------------------------------------------------------------------------------------------- validation
    def validate_features(self, features: Mapping[str, Any]) -> None:
        """Check the column names and types of a dataset (``dataset.features``) before any row is read."""
        from datasets import ClassLabel, Sequence as HFSequence, Value

        try:  # datasets >= 3 spells lists as List/LargeList; older versions as Sequence
            from datasets import LargeList, List
            list_types: tuple[type, ...] = (HFSequence, List, LargeList)
        except ImportError:  # pragma: no cover
            list_types = (HFSequence,)

        columns = list(features)
        if self.id_column and self.id_column not in features:
            raise SchemaError(f"Column {self.id_column!r} (id_column) is missing; the dataset has columns {columns}."
                              f"{_did_you_mean(self.id_column, columns)} Pass id_column=None to identify rows by "
                              f"their content.")
        for col in (*self.text_columns, self.label_column):
            if col not in features:
                raise SchemaError(f"Column {col!r} is missing; the dataset has columns {columns}."
                                  f"{_did_you_mean(col, columns)} Pass a TaskSchema with the right names.")
        for col in self.text_columns:
            feat = features[col]
            if _mixed_types(feat):
                continue  # `validate_batch` checks every cell
            is_string = isinstance(feat, Value) and feat.dtype in ("string", "large_string")
            inner = getattr(feat, "feature", None)
            is_list = isinstance(feat, list_types) and isinstance(inner, Value) and inner.dtype in ("string",
                                                                                                   "large_string")
            if is_list and col not in self.list_columns:
                raise SchemaError(f"Column {col!r} holds lists of strings but the schema expects one string per row; "
                                  f"add it to list_columns if a list of pieces is meant.")
            if not (is_string or is_list):
                raise SchemaError(f"Column {col!r} has type {feat}; expected string"
                                  f"{' or a list of strings' if col in self.list_columns else ''}.")
        label = features[self.label_column]
        if _mixed_types(label):
            return
        if self.is_token_level:
            inner = getattr(label, "feature", None)
            if not isinstance(label, list_types) or inner is None:
                raise SchemaError(f"Column {self.label_column!r} has type {label}; token classification expects a list "
                                  f"of tags per row (tag names, ids, or a list of ClassLabel).")
            label = inner
            if not isinstance(features[self.text_columns[0]], list_types) and not _mixed_types(
                    features[self.text_columns[0]]):
                raise SchemaError(f"Column {self.text_columns[0]!r} has type {features[self.text_columns[0]]}; token "
                                  f"classification expects a list of tokens per row.")
        if _mixed_types(label):  # a token-level list whose tags mix names and ids
            return
        if isinstance(label, ClassLabel):
            theirs = [n.casefold() for n in label.names]
            ours = [n.casefold() for n in self.label_names]
            if theirs != ours:
                raise SchemaError(f"Column {self.label_column!r} is a ClassLabel with names {label.names}, but the "
                                  f"schema's label_names are {list(self.label_names)} (same order expected).")
        elif not (isinstance(label, Value) and (label.dtype.startswith("int") or "string" in label.dtype)):
            raise SchemaError(f"Column {self.label_column!r} has type {label}; expected label names (string), "
                              f"integer ids or a ClassLabel.")

    def validate_batch(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int] | None = None) -> list[Any]:
        """Check every cell an augmenter reads in a ``map`` batch; raise on the first bad one. Returns the rows'
        label ids (for token classification, each row's list of tag ids; tags must be valid IOB2).

        ``indices`` are the rows' positions in the dataset (``map(..., with_indices=True)``); without them errors
        give the position in the batch.
        """
        columns = list(batch)
        for col in (*self.text_columns, self.label_column):
            if col not in batch:
                raise SchemaError(f"Column {col!r} is missing; the batch has columns {columns}."
                                  f"{_did_you_mean(col, columns)} Pass a TaskSchema with the right names.")

        def where(i: int) -> str:
            return f"row {indices[i]}" if indices is not None else f"row {i} of the batch"

        for col in self.text_columns:
            may_be_list = col in self.list_columns
            expected = "a non-empty string" + (" or a non-empty list of non-empty strings" if may_be_list else "")
            for i, value in enumerate(batch[col]):
                if isinstance(value, str):
                    ok = bool(value.strip())
                elif may_be_list and isinstance(value, (list, tuple)):
                    ok = bool(value) and all(isinstance(p, str) and p.strip() for p in value)
                else:
                    ok = False
                if not ok:
                    shown = repr(value) if len(repr(value)) < 80 else repr(value)[:77] + "..."
                    raise SchemaError(f"Column {col!r} at {where(i)}: got {shown}; expected {expected}.")
                surrogate = _lone_surrogate(value)
                if surrogate is not None:
                    raise SchemaError(f"Column {col!r} at {where(i)}: holds a lone surrogate ({surrogate}), which is "
                                      f"not a character and cannot be stored as UTF-8 (a text decoded with "
                                      f"errors='surrogateescape' or cut inside a UTF-16 pair); expected valid text.")
        if self.is_token_level:
            return self._validate_tags(batch, where)
        ids = []
        for i, value in enumerate(batch[self.label_column]):
            try:
                ids.append(self.label_id(value))
            except SchemaError:
                raise SchemaError(f"Column {self.label_column!r} at {where(i)}: unknown label {value!r}; expected one "
                                  f"of {list(self.label_names)} or an id in 0..{len(self.label_names) - 1}."
                                  ) from None
        return ids

    def _validate_tags(self, batch: Mapping[str, Sequence[Any]], where: Any) -> list[list[int]]:
        from .text.entities import iob2_problem

        tokens_col = self.text_columns[0]
        out = []
        for i, (tokens, tags) in enumerate(zip(batch[tokens_col], batch[self.label_column])):
            if isinstance(tokens, str):
                raise SchemaError(f"Column {tokens_col!r} at {where(i)}: got a string; token classification expects "
                                  f"a list of tokens.")
            if not isinstance(tags, (list, tuple)) or len(tags) != len(tokens):
                got = f"{len(tags)} tags" if isinstance(tags, (list, tuple)) else repr(tags)
                raise SchemaError(f"Column {self.label_column!r} at {where(i)}: got {got} for {len(tokens)} tokens; "
                                  f"expected one tag per token.")
            try:
                ids = [self.label_id(t) for t in tags]
            except SchemaError as err:
                raise SchemaError(f"Column {self.label_column!r} at {where(i)}: {str(err).split(': ', 1)[1]}"
                                  ) from None
            problem = iob2_problem([self.label_names[t] for t in ids])
            if problem:
                raise SchemaError(f"Column {self.label_column!r} at {where(i)}: not valid IOB2: {problem}.")
            out.append(ids)
        return out

    def batch_labels(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int] | None = None) -> list[str]:
        """`validate_batch`, then each row's label as `row_label` spells it."""
        ids = self.validate_batch(batch, indices)
        if self.is_token_level:
            return [" ".join(self.label_names[t] for t in row) for row in ids]
        return [self.label_names[i] for i in ids]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text_columns": list(self.text_columns), "edit_columns": list(self.edit_columns),
            "label_column": self.label_column, "label_names": list(self.label_names),
            "list_columns": list(self.list_columns), "id_column": self.id_column, "task": self.task,
        }

    #: Preset names (the ``task`` values and short forms) -> factory method.
    PRESETS: ClassVar[dict[str, str]] = {
        "fact-verification": "fact_verification", "nli": "nli", "natural-language-inference": "nli",
        "sentiment": "sentiment", "sentiment-analysis": "sentiment", "token-classification": "token_classification",
        "ner": "token_classification", "relation-extraction": "relation_extraction"}

    @classmethod
    def preset(cls, name: str, **columns: Any) -> TaskSchema:
        """The schema of a task preset by name, with the factory's keyword arguments (column names, labels).

        Examples:
            >>> TaskSchema.preset("nli", hypothesis="h").text_columns
            ('premise', 'h')
        """
        factory = cls.PRESETS.get(name)
        if factory is None:
            raise SchemaError(f"Unknown task preset {name!r}; known: {sorted(cls.PRESETS)}.")
        try:
            return getattr(cls, factory)(**columns)
        except TypeError as err:
            import inspect

            options = [p for p in inspect.signature(getattr(cls, factory)).parameters]
            raise SchemaError(f"Task preset {name!r} takes {options}; got {sorted(columns)} ({err}).") from None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSchema:
        """Rebuild a schema from `to_dict`, or from ``{"preset": name, **factory_arguments}`` (a recipe's
        short form, e.g. ``{"preset": "sentiment", "text": "review"}``)."""
        if "preset" in data:
            rest = {k: v for k, v in data.items() if k != "preset"}
            return cls.preset(data["preset"], **rest)
        known = {"text_columns", "edit_columns", "label_column", "label_names", "list_columns", "id_column", "task"}
        unknown = set(data) - known
        if unknown:
            raise SchemaError(f"Unknown TaskSchema fields {sorted(unknown)}; expected a subset of {sorted(known)}.")
        return cls(**data)
