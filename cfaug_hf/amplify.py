"""The amplification protocol: annotate a few rows with human counterfactuals, let an editor learned from them
write counterfactuals for the rest.

A practitioner's real budget is a few hundred human counterfactuals. :func:`amplify` trains an
:class:`~cfaug_hf.Editor` on the pairs of the annotated rows (:func:`~cfaug_hf.training.edit_pairs`: sentence by
sentence for long texts, whole hypotheses with their premise for NLI), then runs it through
:class:`~cfaug_hf.COREAugmenter` (``mode="editor_only"``; the flip checker picks among its candidates and filters
what it writes) over the other rows, and returns the original rows, the human counterfactuals and the editor's, all
with provenance columns, plus a report of what it did.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field
from typing import Any

from .components.checker import DEFAULT_CHECKER
from .models import SMOLLM2
from .provenance import PROVENANCE_COLUMNS, provenance_features, refuse_augmented, source_id
from .schema import SchemaError, TaskSchema

__all__ = ["amplify", "AmplifyReport"]


@dataclass
class AmplifyReport:
    """What :func:`amplify` did: the annotated rows and the pairs the editor learned from, the rows it edited, and
    the augmenter's counts (produced, filtered by the checker, skipped, by reason)."""

    annotated_rows: int
    training_pairs: int
    rows_edited: int
    editor_counterfactuals: int
    human_counterfactuals: int
    stats: dict[str, Any] = field(default_factory=dict)
    editor: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def summary_lines(self) -> list[str]:
        filtered = sum(self.stats.get("filtered", {}).values())
        lines = [f"annotated rows: {self.annotated_rows} ({self.training_pairs} training pairs for the editor)",
                 f"rows edited: {self.rows_edited}; counterfactuals kept: {self.editor_counterfactuals} "
                 f"(rejected by filters: {filtered})"]
        skipped = self.stats.get("skipped", {})
        if skipped:
            lines.append("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
        return lines


def amplify(dataset: Any, schema: TaskSchema | None = None, *, counterfactual_column: str = "counterfactual",
            target_column: str | None = None, editor: Any = SMOLLM2, checker: Any = DEFAULT_CHECKER,
            edit_sentences: int | None = None, limit: int | None = None, seed: int = 0,
            train_options: dict[str, Any] | None = None) -> tuple[Any, AmplifyReport]:
    """Train an editor on the rows that have a human counterfactual and write counterfactuals for the others.

    Args:
        dataset: a ``datasets.Dataset`` with the schema's columns and ``counterfactual_column``: the human
            counterfactual of the row's edited text (the text; the hypothesis for NLI), or None / "" where the row
            was not annotated.
        schema: the task (default :meth:`TaskSchema.sentiment`); sentiment and other one-text tasks, and NLI.
        target_column: the label of each human counterfactual; optional when the task has two labels (it is the
            other one).
        editor: a causal LM id/folder to train the editor from (default SmolLM2-135M-Instruct, shipped on PyPI),
            or an :class:`~cfaug_hf.Editor` or its saved folder (trained further on the pairs unless
            ``train_options`` is ``{"max_steps": 0}``).
        checker: the flip checker (CORE's argument: ``"default"`` is the one shipped for the task, None is off);
            it picks among the editor's candidates and filters the counterfactuals.
        edit_sentences: one-text tasks: how many sentences of a row the editor rewrites (the ones that carry the
            label most, by the checker); default 3 with a checker, else 0 (the whole text as one). NLI always
            edits the hypothesis.
        limit: edit a seeded sample of this many unannotated rows (all by default).
        train_options: keyword arguments of :func:`~cfaug_hf.training.train_editor` (e.g. ``num_train_epochs``,
            ``lora``, ``training_args``).

    Returns:
        The augmented dataset (every original row, then the human and the editor's counterfactuals, with the
        provenance columns; ``cf_method`` is ``human`` for the annotators' rows) and an :class:`AmplifyReport`.

    Example:
        >>> from datasets import Dataset
        >>> from cfaug_hf import Editor
        >>> from cfaug_hf.testing import tiny_causal_lm
        >>> data = Dataset.from_dict({"text": ["It was dull.", "It was fine.", "A bad plot."],
        ...                           "label": ["negative", "positive", "negative"],
        ...                           "counterfactual": ["It was gripping.", None, None]})
        >>> out, report = amplify(data, editor=Editor(*tiny_causal_lm()), checker=None, edit_sentences=0,
        ...                       train_options={"max_steps": 1, "lora": False,
        ...                                      "training_args": {"disable_tqdm": True, "logging_strategy": "no"}})
        {'train_runtime': ...}
        >>> report.annotated_rows, report.rows_edited
        (1, 2)
    """
    from datasets import Dataset, concatenate_datasets

    from .components.editor import Editor
    from .methods.core import COREAugmenter
    from .training import edit_pairs, train_editor

    schema = schema or TaskSchema.sentiment()
    refuse_augmented(dataset.column_names)
    for col in (*schema.text_columns, schema.label_column, counterfactual_column,
                *([target_column] if target_column else [])):
        if col not in dataset.column_names:
            raise SchemaError(f"amplify: column {col!r} is missing; the dataset has {dataset.column_names}.")
    nli = schema.task == "natural-language-inference"
    if schema.is_token_level or len(schema.text_columns) != (2 if nli else 1):
        raise SchemaError(f"amplify edits one text column, or the hypothesis of (premise, hypothesis) for NLI; "
                          f"got task {schema.task!r} with text columns {list(schema.text_columns)}.")
    if target_column is None and len(schema.label_names) != 2:
        raise SchemaError(f"amplify: the task has {len(schema.label_names)} labels, so the label of each human "
                          f"counterfactual must be given: pass target_column=.")
    edit_column = schema.text_columns[-1]
    annotated, targets = [], []
    for i, row in enumerate(dataset):
        new = row[counterfactual_column]
        if new is None or (isinstance(new, str) and not new.strip()):
            continue
        if not isinstance(new, str):
            raise SchemaError(f"amplify: row {i}, column {counterfactual_column!r}: expected a string or None, got "
                              f"{type(new).__name__}.")
        label = schema.row_label(row[schema.label_column], row=i)
        if target_column:
            target = schema.label_name(row[target_column], row=i)
        else:
            target = next(n for n in schema.label_names if n != label)
        if target == label:
            raise SchemaError(f"amplify: row {i}: the counterfactual's label {target!r} equals the row's label; a "
                              f"counterfactual must change it.")
        annotated.append(i)
        targets.append(target)
    if not annotated:
        raise SchemaError(f"amplify: no row has a human counterfactual in column {counterfactual_column!r}; annotate "
                          f"some rows (None or '' marks a row that is not annotated).")
    rows = dataset.select(annotated)
    if edit_sentences is None:  # choosing sentences needs the checker's scores
        edit_sentences = 0 if nli or checker is None else 3
    level = "sentence" if edit_sentences and not nli else "text"
    human = Dataset.from_dict({"text": rows[edit_column], "counterfactual": rows[counterfactual_column],
                               "target": targets, **({"context": rows[schema.text_columns[0]]} if nli else {})})
    pairs = edit_pairs(human, context_column="context" if nli else None, level=level)
    if not len(pairs):
        raise SchemaError("amplify: the human counterfactuals change no sentence of their rows; nothing to learn.")
    options = dict(train_options or {})
    if not isinstance(editor, Editor):
        from pathlib import Path

        saved = Path(editor) / Editor.config_name
        editor = Editor.from_pretrained(editor) if saved.is_file() else Editor.from_base(editor)
    task = "nli" if nli else "sentiment" if schema.task == "sentiment-analysis" else "text"
    if options.get("max_steps") != 0:
        editor = train_editor(editor, pairs, task=task, seed=seed, **options)
    augmenter = COREAugmenter(editor, schema, mode="editor_only", checker=checker, edit_sentences=edit_sentences,
                              keep_original=False, seed=seed)
    rest = [i for i in range(len(dataset)) if i not in set(annotated)]
    if limit is not None and limit < len(rest):
        rest = sorted(random.Random(seed).sample(rest, limit))
    written = augmenter.augment(dataset.select(rest).remove_columns(counterfactual_column))
    base = dataset.remove_columns(counterfactual_column)
    originals = _with_provenance(base, schema, range(len(base)), None)
    humans = _with_provenance(base, schema, annotated, (rows[counterfactual_column], targets))
    out = concatenate_datasets([originals, humans.cast(originals.features), written.cast(originals.features)])
    stats = augmenter.stats.to_dict()
    report = AmplifyReport(annotated_rows=len(annotated), training_pairs=len(pairs), rows_edited=len(rest),
                           editor_counterfactuals=len(written), human_counterfactuals=len(annotated), stats=stats,
                           editor={"base_model": editor.base_model, "fingerprint": editor.fingerprint(),
                                   **{k: v for k, v in editor.training_info.items() if k != "train_dataset"}})
    return out, report


def _with_provenance(base: Any, schema: TaskSchema, indices: Any, human: tuple[list[str], list[str]] | None) -> Any:
    """Rows of ``base`` as originals, or (``human`` = texts, labels) as the annotators' counterfactuals."""
    from datasets import Dataset, Features

    edit_column, label_column = schema.text_columns[-1], schema.label_column
    indices = [int(i) for i in indices]
    values = base.select(indices).to_dict()
    out: dict[str, list[Any]] = {c: [] for c in (*base.column_names, *PROVENANCE_COLUMNS)}
    for k, i in enumerate(indices):
        row = {c: values[c][k] for c in base.column_names}
        label = schema.row_label(row[label_column], row=i)
        sid = source_id(row, schema)
        if human is not None:
            row[edit_column] = human[0][k]
            row[label_column] = schema.encode_label_like(human[1][k], row[label_column])
        for c in base.column_names:
            out[c].append(row[c])
        out["cf_is_counterfactual"].append(human is not None)
        out["cf_method"].append("human" if human is not None else "")
        out["cf_kind"].append("human" if human is not None else "original")
        out["cf_source_id"].append(sid)
        out["cf_original_label"].append(label)
        out["cf_edit"].append(json.dumps({"target": human[1][k]}) if human is not None else "")
        out["cf_outcome"].append(["produced:human"] if human is not None else [])
    return Dataset.from_dict(out, features=Features({**base.features, **provenance_features()}))
