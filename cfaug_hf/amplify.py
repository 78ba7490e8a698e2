"""The amplification protocol: annotate a few rows with human counterfactuals, let an editor learned from them
write counterfactuals for the rest.

A practitioner's real budget is a few hundred human counterfactuals. `amplify` trains an
`Editor` on the pairs of the annotated rows (`edit_pairs`: sentence by
sentence for long texts, whole hypotheses with their premise for NLI), then runs it through
`COREAugmenter` (``mode="editor_only"``; the flip checker picks among its candidates and filters
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
from .pretrained import SMOLLM2
from .provenance import PROVENANCE_COLUMNS, describe_change, provenance_features, refuse_augmented, source_id
from .schema import SchemaError, TaskSchema

__all__ = ["amplify", "AmplifyReport"]


@dataclass
class AmplifyReport:
    """What `amplify` did: the annotated rows and the pairs the editor learned from, the rows it edited, and
    the augmenter's counts (produced, filtered by the checker, skipped, by reason)."""

    annotated_rows: int
    training_pairs: int
    rows_edited: int
    editor_counterfactuals: int
    human_counterfactuals: int
    stats: dict[str, Any] = field(default_factory=dict)
    editor: dict[str, Any] = field(default_factory=dict)
    folds: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def summary_lines(self) -> list[str]:
        filtered = sum(self.stats.get("filtered", {}).values())
        lines = [f"annotated rows: {self.annotated_rows} ({self.training_pairs} training pairs for the editor"
                 + (f"s of {len(self.folds)} folds" if self.folds else "") + ")",
                 f"rows edited: {self.rows_edited}; counterfactuals kept: {self.editor_counterfactuals} "
                 f"(rejected by filters: {filtered}); human counterfactuals kept: {self.human_counterfactuals}"]
        lines += [f"fold {f['fold']}: editor trained on {f['training_rows']} annotated rows "
                  f"({f['training_pairs']} pairs) wrote {f['counterfactuals']} for {f['rows_edited']} rows"
                  for f in self.folds]
        skipped = self.stats.get("skipped", {})
        if skipped:
            lines.append("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
        return lines


def amplify(dataset: Any, schema: TaskSchema | None = None, *, counterfactual_column: str = "counterfactual",
            target_column: str | None = None, editor: Any = SMOLLM2, checker: Any = DEFAULT_CHECKER,
            edit_sentences: int | None = None, limit: int | None = None, seed: int = 0,
            folds: int | None = None, include_human: bool = True,
            train_options: dict[str, Any] | None = None) -> tuple[Any, AmplifyReport]:
    """Train an editor on the rows that have a human counterfactual and write counterfactuals for the others.

    Two protocols. By default (``folds=None``) one editor learns from every annotated row and writes for the rows
    that are not annotated: annotate a quarter, get counterfactuals for the rest. With ``folds=K``
    (cross-fitting) the rows are split into K seeded folds, each holding its share of the annotated rows, and the
    editor of fold k, trained on the annotated rows of the other folds, writes for every row of fold k: every row,
    annotated or not, gets a machine counterfactual from an editor that never saw that row's human pair (with
    ``include_human=False``, the fully automatic data set whose quality the human pairs can then measure).

    Args:
        dataset: a ``datasets.Dataset`` with the schema's columns and ``counterfactual_column``: the human
            counterfactual of the row's edited text (the text; the hypothesis for NLI), or None / "" where the row
            was not annotated.
        schema: the task (default `TaskSchema.sentiment`); sentiment and other one-text tasks, and NLI.
        target_column: the label of each human counterfactual; optional when the task has two labels (it is the
            other one).
        editor: a causal LM id/folder to train the editor from (default SmolLM2-135M-Instruct, shipped on PyPI),
            or an `Editor` or its saved folder (trained further on the pairs unless
            ``train_options`` is ``{"max_steps": 0}``).
        checker: the flip checker (CORE's argument: ``"default"`` is the one shipped for the task, None is off);
            it picks among the editor's candidates and filters the counterfactuals.
        edit_sentences: one-text tasks: how many sentences of a row the editor rewrites (the ones that carry the
            label most, by the checker); default 3 with a checker, else 0 (the whole text as one). NLI always
            edits the hypothesis.
        limit: edit a seeded sample of this many rows (all by default): unannotated rows, or with ``folds`` any.
        folds: cross-fitting over this many folds (at least 2; K editors are trained); None: one editor.
        include_human: keep the annotators' counterfactuals in the output (``cf_method="human"``).
        train_options: keyword arguments of `train_editor` (e.g. ``num_train_epochs``,
            ``lora``, ``training_args``).

    Returns:
        The augmented dataset (every original row, then the human and the editor's counterfactuals, with the
        provenance columns; ``cf_method`` is ``human`` for the annotators' rows) and an `AmplifyReport`.

    Examples:
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
    from .methods.core import COREAugmenter
    from .provenance import AugmentationStats

    schema = schema or TaskSchema.sentiment()
    if folds is not None and (isinstance(folds, bool) or not isinstance(folds, int) or folds < 2):
        raise ValueError(f"amplify: folds must be an integer of at least 2 (cross-fitting) or None, got {folds!r}.")
    annotated, targets = _annotations(dataset, schema, counterfactual_column, target_column)
    if folds is not None and folds > len(annotated):  # checked before any fold is laid out or editor trained
        if len(annotated) < 2:
            raise SchemaError(f"amplify: folds={folds} leaves fold 0's editor no annotated row to learn from "
                              f"({len(annotated)} rows are annotated); cross-fitting needs at least 2.")
        raise ValueError(f"amplify: folds={folds} is more than the {len(annotated)} annotated rows; each fold holds "
                         f"its share of the annotations, so use at most {len(annotated)} folds (--folds).")
    nli = schema.task == "natural-language-inference"
    if edit_sentences is None:  # choosing sentences needs the checker's scores
        edit_sentences = 0 if nli or checker is None else 3
    level = "sentence" if edit_sentences and not nli else "text"
    target_of = dict(zip(annotated, targets))
    options = dict(train_options or {})
    task = "nli" if nli else "sentiment" if schema.task == "sentiment-analysis" else "text"
    jobs = _jobs(len(dataset), annotated, folds, limit, seed)
    data = dataset.remove_columns(counterfactual_column)
    written_parts, fold_reports, all_pairs, stats = [], [], 0, AugmentationStats()
    trained: Any = None
    for k, (train_rows, edit_rows) in enumerate(jobs):
        pairs = _pairs(dataset.select(train_rows), schema, counterfactual_column,
                       [target_of[i] for i in train_rows], level)
        if not len(pairs):
            raise SchemaError("amplify: the human counterfactuals change no sentence of their rows; nothing to "
                              "learn." if folds is None else f"amplify: the annotated rows outside fold {k} change "
                              f"no sentence; nothing to learn.")
        all_pairs += len(pairs)
        trained = _trained_editor(editor, pairs, task=task, seed=seed, options=options, copy=folds is not None)
        written = data.select([])
        if edit_rows:
            augmenter = COREAugmenter(trained, schema, mode="editor_only", checker=checker,
                                      edit_sentences=edit_sentences, keep_original=False, seed=seed)
            written = augmenter.augment(data.select(edit_rows))
            written_parts.append(written)
            stats.merge(augmenter.stats)
        fold_reports.append({"fold": k, "training_rows": len(train_rows), "training_pairs": len(pairs),
                             "rows_edited": len(edit_rows), "counterfactuals": len(written),
                             "editor_fingerprint": trained.fingerprint()})
    human = (dataset.select(annotated)[counterfactual_column], targets) if include_human else None
    out, written = _assemble(data, schema, annotated, human, written_parts)
    report = AmplifyReport(annotated_rows=len(annotated), training_pairs=all_pairs,
                           rows_edited=sum(len(e) for _, e in jobs), editor_counterfactuals=len(written),
                           human_counterfactuals=len(annotated) if include_human else 0, stats=stats.to_dict(),
                           editor={"base_model": trained.base_model, "fingerprint": trained.fingerprint(),
                                   **{k: v for k, v in trained.training_info.items() if k != "train_dataset"}},
                           folds=fold_reports if folds is not None else [])
    return out, report


def _pairs(rows: Any, schema: TaskSchema, counterfactual_column: str, targets: list[str], level: str) -> Any:
    """The editor's training pairs of annotated ``rows`` (NLI: the premise as context)."""
    from datasets import Dataset

    from .training import edit_pairs

    nli = schema.task == "natural-language-inference"
    human = Dataset.from_dict({"text": rows[schema.text_columns[-1]], "counterfactual": rows[counterfactual_column],
                               "target": targets, **({"context": rows[schema.text_columns[0]]} if nli else {})})
    return edit_pairs(human, context_column="context" if nli else None, level=level)


def _assemble(data: Any, schema: TaskSchema, annotated: list[int], human: tuple[list[str], list[str]] | None,
              written_parts: list[Any]) -> tuple[Any, Any]:
    """Every original row, then the annotators' counterfactuals (``human``: their texts and labels, or None to
    leave them out), then the editors'; returns that and the editors' rows alone."""
    from datasets import concatenate_datasets

    originals = _with_provenance(data, schema, range(len(data)), None)
    parts = [originals]
    if human is not None:
        parts.append(_with_provenance(data, schema, annotated, human).cast(originals.features))
    written = concatenate_datasets(written_parts) if written_parts else originals.select([])
    return concatenate_datasets([*parts, written.cast(originals.features)]), written


def _annotations(dataset: Any, schema: TaskSchema, counterfactual_column: str,
                 target_column: str | None) -> tuple[list[int], list[str]]:
    """The annotated rows (a non-empty human counterfactual) and the label of each counterfactual, after checking
    the columns and the task; errors name the column and the row."""
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
    annotated, targets = [], []
    for i, row in enumerate(dataset):
        new = row[counterfactual_column]
        if new is None or (isinstance(new, str) and not new.strip()):
            continue
        if not isinstance(new, str):
            raise SchemaError(f"amplify: row {i}, column {counterfactual_column!r}: expected a string or None, got "
                              f"{type(new).__name__}.")
        label = schema.row_label(row[schema.label_column], row=i)
        target = (schema.label_name(row[target_column], row=i) if target_column
                  else next(n for n in schema.label_names if n != label))
        if target == label:
            raise SchemaError(f"amplify: row {i}: the counterfactual's label {target!r} equals the row's label; a "
                              f"counterfactual must change it.")
        annotated.append(i)
        targets.append(target)
    if not annotated:
        raise SchemaError(f"amplify: no row has a human counterfactual in column {counterfactual_column!r}; annotate "
                          f"some rows (None or '' marks a row that is not annotated).")
    return annotated, targets


def _jobs(rows: int, annotated: list[int], folds: int | None, limit: int | None,
          seed: int) -> list[tuple[list[int], list[int]]]:
    """(the rows an editor learns from, the rows it writes for), one per editor: one editor for the rows that are not
    annotated, or with ``folds`` one per fold, trained on the other folds' annotated rows."""
    annotated_set = set(annotated)
    if folds is None:
        return [(list(annotated), _sample([i for i in range(rows) if i not in annotated_set], limit, seed))]
    # Annotated and other rows are dealt out separately, so every fold holds its share of the annotations.
    fold_of: dict[int, int] = {}
    for group in (list(annotated), [i for i in range(rows) if i not in annotated_set]):
        random.Random(seed).shuffle(group)
        fold_of.update((i, k % folds) for k, i in enumerate(group))
    chosen = set(_sample(range(rows), limit, seed))
    jobs = [([i for i in annotated if fold_of[i] != k], [i for i in sorted(chosen) if fold_of[i] == k])
            for k in range(folds)]
    empty = [k for k, (train_rows, _) in enumerate(jobs) if not train_rows]
    if empty:
        raise SchemaError(f"amplify: folds={folds} leaves fold {empty[0]}'s editor no annotated row to learn "
                          f"from ({len(annotated)} rows are annotated); use fewer folds or annotate more rows.")
    return jobs


def _sample(indices: Any, limit: int | None, seed: int) -> list[int]:
    indices = list(indices)
    if limit is not None and limit < len(indices):
        return sorted(random.Random(seed).sample(indices, limit))
    return indices


def _trained_editor(editor: Any, pairs: Any, *, task: str, seed: int, options: dict[str, Any], copy: bool) -> Any:
    """An editor trained on ``pairs`` from ``editor`` (a name, a saved folder or an Editor). With ``copy`` a given
    Editor object is trained as a copy, so each fold of a cross-fitting run starts from the same weights."""
    from pathlib import Path

    from .components.editor import Editor
    from .training import train_editor

    if not isinstance(editor, Editor):
        saved = Path(editor) / Editor.config_name
        editor = Editor.from_pretrained(editor) if saved.is_file() else Editor.from_base(editor)
    elif copy and options.get("max_steps") != 0:
        import copy as copying

        editor = copying.deepcopy(editor)
    if options.get("max_steps") == 0:
        return editor
    return train_editor(editor, pairs, task=task, seed=seed, **options)


def _with_provenance(base: Any, schema: TaskSchema, indices: Any, human: tuple[list[str], list[str]] | None) -> Any:
    """Rows of ``base`` as originals, or (``human`` = texts, labels) as the annotators' counterfactuals."""
    from datasets import Dataset, Features

    edit_column, label_column = schema.text_columns[-1], schema.label_column
    indices = [int(i) for i in indices]
    values = base.select(indices).to_dict()
    out: dict[str, list[Any]] = {c: [] for c in (*base.column_names, *PROVENANCE_COLUMNS)}
    for k, i in enumerate(indices):
        row = {c: values[c][k] for c in base.column_names}
        source = dict(row)
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
        out["cf_change"].append(describe_change(source, row, [edit_column]) if human is not None else "")
        out["cf_outcome"].append(["produced:human"] if human is not None else [])
    return Dataset.from_dict(out, features=Features({**base.features, **provenance_features()}))
