"""Provenance columns and augmentation statistics: what every augmented row records about where it came from, and
the counts that can be recovered from those columns alone (after a cache hit, with ``num_proc``, after a shuffle).

See `cfaug_hf.augmenter` for the table of columns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fingerprint import digest_json
from .text.diff import word_diff
from .schema import SchemaError, TaskSchema

__all__ = ["PROVENANCE_COLUMNS", "TRACE_KIND", "provenance_features", "AugmentationStats", "refuse_augmented",
           "source_id"]

#: ``cf_kind`` of the rows `Augmenter.augment` maps only to carry an outcome, then removes.
TRACE_KIND = "trace"

PROVENANCE_COLUMNS = ("cf_is_counterfactual", "cf_method", "cf_kind", "cf_source_id", "cf_original_label", "cf_edit",
                      "cf_change", "cf_outcome")

#: Longest ``cf_change`` kept; a longer one ends in an ellipsis (the full edit is in ``cf_edit`` and the row).
CHANGE_CHARS = 300


def _words(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in _words(v)]
    return str(value).split() if value is not None else []


def describe_change(source: Mapping[str, Any], new: Mapping[str, Any], columns: Sequence[str]) -> str:
    """``cf_change``: the words a counterfactual changed, readable and searchable in a dataset viewer (``cf_edit``
    holds each method's own JSON, whose keys differ by method and so cannot be one Arrow struct).

    Examples:
        >>> describe_change({"claim": "He won in 1999 ."}, {"claim": "He lost in 2001 ."}, ["claim"])
        'claim: won → lost; 1999 → 2001'
        >>> describe_change({"text": "good film"}, {"text": "not a good film"}, ["text"])
        'text: + not a'
    """
    parts = []
    for column in columns:
        old, new_words = _words(source.get(column)), _words(new.get(column))
        if old == new_words:
            continue
        edits = []
        for op, i1, i2, j1, j2 in word_diff(old, new_words):
            before, after = _joined(old, i1, i2), _joined(new_words, j1, j2)
            if op == "replace":
                edits.append(f"{before} → {after}")
            elif op == "insert":
                edits.append(f"+ {after}")
            elif op == "delete":
                edits.append(f"- {before}")
            elif op == "long":
                edits.append(f"long edit: {i2 - i1} words → {j2 - j1} words, not compared word by word")
        parts.append(f"{column}: " + "; ".join(edits))
    text = " | ".join(parts)
    return text if len(text) <= CHANGE_CHARS else text[:CHANGE_CHARS - 1] + "…"


def _joined(words: list[str], i: int, j: int) -> str:
    # Only the start of a long span can show in cf_change (CHANGE_CHARS), so only the start is joined.
    return " ".join(words[i:min(j, i + CHANGE_CHARS)])


def provenance_features() -> dict[str, Any]:
    """The ``datasets`` feature types of the provenance columns."""
    from datasets import Value

    try:
        from datasets import List
        outcome = List(Value("string"))
    except ImportError:  # pragma: no cover
        from datasets import Sequence as List
        outcome = List(Value("string"))
    return {
        "cf_is_counterfactual": Value("bool"), "cf_method": Value("string"), "cf_kind": Value("string"),
        "cf_source_id": Value("string"), "cf_original_label": Value("string"), "cf_edit": Value("string"),
        "cf_change": Value("string"), "cf_outcome": outcome,
    }


@dataclass
class AugmentationStats:
    """Counts of what an augmentation did, by event.

    Events are strings such as ``produced:c'+e``, ``skipped:same_claim`` or ``no_evidence_edit:span_not_found``.
    ``rows_in`` counts input rows; ``rows_out`` output rows.

    Examples:
        >>> s = AugmentationStats()
        >>> s.add_row(["produced:c'+e", "no_evidence_edit:insertion"], n_out=2)
        >>> s.produced, s.by_prefix("no_evidence_edit")
        ({"c'+e": 1}, {'insertion': 1})
    """

    rows_in: int = 0
    rows_out: int = 0
    events: Counter = field(default_factory=Counter)

    def add_row(self, events: Sequence[str], n_out: int) -> None:
        self.rows_in += 1
        self.rows_out += n_out
        self.events.update(events)

    def merge(self, other: AugmentationStats) -> None:
        self.rows_in += other.rows_in
        self.rows_out += other.rows_out
        self.events.update(other.events)

    def by_prefix(self, prefix: str) -> dict[str, int]:
        p = prefix + ":"
        return {k[len(p):]: v for k, v in sorted(self.events.items()) if k.startswith(p)}

    @property
    def produced(self) -> dict[str, int]:
        return self.by_prefix("produced")

    @property
    def skipped(self) -> dict[str, int]:
        return self.by_prefix("skipped")

    @property
    def counterfactuals(self) -> int:
        return sum(self.produced.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows_in": self.rows_in, "rows_out": self.rows_out,
                               "counterfactuals": self.counterfactuals}
        groups: dict[str, dict[str, int]] = {}
        for key, n in sorted(self.events.items()):
            head, _, tail = key.partition(":")
            groups.setdefault(head, {})[tail or head] = n
        out.update(groups)
        return out

    @classmethod
    def from_dataset(cls, dataset: Any, rows_in: int | None = None) -> AugmentationStats:
        """Recover the statistics from an augmented dataset's provenance columns, whatever the order of its rows.

        Each input row leaves one non-counterfactual row (its original, or the trace row of
        `Augmenter.augment`) that carries its outcome, so counting those is exact after a shuffle, a
        ``select`` or with duplicate ids. Counterfactuals whose source left no such row (``keep_original=False`` in
        a plain ``map``) are grouped by source id and outcome (identical sources told apart by their number of rows);
        rows that left nothing at all are counted as
        ``skipped:untraced`` when the number of input rows ``rows_in`` is given. Use `Augmenter.augment` to
        get every reason.
        """
        needed = ("cf_is_counterfactual", "cf_kind", "cf_source_id", "cf_outcome")
        missing = [c for c in needed if c not in dataset.column_names]
        if missing:
            raise SchemaError(f"Columns {missing} are missing: this is not the output of a cfaug_hf augmenter.")
        stats = cls()
        traced: set[str] = set()
        orphans: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
        for batch in dataset.select_columns(list(needed)).iter(batch_size=1000):
            for is_cf, kind, sid, outcome in zip(batch["cf_is_counterfactual"], batch["cf_kind"],
                                                 batch["cf_source_id"], batch["cf_outcome"]):
                stats.rows_out += kind != TRACE_KIND
                if not is_cf:
                    stats.rows_in += 1
                    stats.events.update(outcome)
                    traced.add(sid)
                else:
                    orphans.setdefault((sid, tuple(outcome)), [list(outcome), 0])[1] += 1
        for (sid, _), (outcome, n_rows) in orphans.items():
            if sid not in traced:
                # Identical sources (same id, same outcome) are told apart by count: each emitted as many rows as
                # its outcome has ``produced:`` events.
                per_source = max(1, sum(e.startswith("produced:") for e in outcome))
                sources = -(-n_rows // per_source)
                stats.rows_in += sources
                for _ in range(sources):
                    stats.events.update(outcome)
        if rows_in is not None and rows_in > stats.rows_in:
            stats.events["skipped:untraced"] += rows_in - stats.rows_in
            stats.rows_in = rows_in
        return stats

    def summary_lines(self) -> list[str]:
        lines = [f"rows in: {self.rows_in}", f"rows out: {self.rows_out} "
                 f"({self.rows_out - self.counterfactuals} original, {self.counterfactuals} counterfactual)"]
        for kind, n in self.produced.items():
            lines.append(f"  counterfactual {kind}: {n}")
        for head in sorted({k.partition(":")[0] for k in self.events} - {"produced"}):
            for reason, n in self.by_prefix(head).items():
                lines.append(f"  {head} {reason}: {n}")
        return lines


def refuse_augmented(columns: Sequence[str]) -> None:
    present = [c for c in PROVENANCE_COLUMNS if c in columns]
    if present:
        raise SchemaError(
            f"Column {present[0]!r} is present: this dataset is already the output of an augmenter. Augmenting it "
            f"again would treat counterfactuals as originals and overwrite their provenance. Augment the original "
            f"data, or select the originals first: ds.filter(lambda cf: not cf, input_columns='cf_is_counterfactual')"
            f".remove_columns({list(PROVENANCE_COLUMNS)}).")


def source_id(row: Mapping[str, Any], schema: TaskSchema) -> str:
    """The ``cf_source_id`` an augmenter gives ``row``: its id column, else a digest of its texts and label."""
    if schema.id_column and row.get(schema.id_column) is not None:
        return str(row[schema.id_column])
    return digest_json([row[c] for c in schema.text_columns] + [schema.row_label(row[schema.label_column])])
