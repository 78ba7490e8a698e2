"""NLI editor rows toward every other label, neutral included, like the human counterfactuals they are compared with.

The ``editor+checker`` rows go through CORE, which, as its paper does, edits between entailment and contradiction
only and passes neutral rows through; CAD-SNLI's annotators rewrote each hypothesis toward both other labels. Here
the quarter-0 editor does the same (`LLMCounterfactualAugmenter` around it, ``targets="all"``, the shipped flip
checker choosing among its candidates and filtering), on the rows ``editor+checker`` rewrites, with and without the
editor's neutral candidates by addition (`Editor.neutral_candidates`), so both the missing targets and the additions
are measured against the human counterfactuals of the same rows.
"""

from __future__ import annotations

from typing import Any

from .. import settings
from ..augmented import (archived_run, cached_augment, component_digests, record_equivalence,
                         reused_counterfactuals)
from ..configs import CONFIGS, schema_of
from ..registry import archive_check, reusable, row
from .editors import annotated_rows, editor_of, editor_order_key, human_rows, quarters_tag, written_by

#: Row name -> the quarter-0 editor's neutral_additions in it.
ADDITIONS = {"editor+checker (all targets)": 4, "editor+checker (all targets, no additions)": 0}


def all_target_counterfactuals(train: Any, task: str, note: str, quarters: tuple[int, ...] = (0,)) -> Any:
    """The counterfactuals toward every other label that the editor of annotation ``quarters`` writes for its rows
    (`written_by`: the quarter-0 editor, the rows outside the annotated quarter; the quarter-1 editor, that quarter),
    cached by data and augmenter fingerprints, in parts, like the other editor rows."""
    from cfaug_hf import AugmentationStats
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    cfs, components = all_target_rows(train, task, note, quarters)
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    settings.NOTES[note] = {"rows_edited": len(written_by(train, task, quarters)[0]), "counterfactuals": len(cfs),
                            "components": components, "skipped": stats.get("skipped", {}),
                            "filtered": stats.get("filtered", {}),
                            "by_target": {t: sum(1 for x in cfs["label"] if x == t) for t in sorted(set(cfs["label"]))},
                            "editor": f"{task} editor of annotation quarter {quarters[0]}, neutral_additions "
                                      f"{ADDITIONS[note]} (SmolLM2-135M + LoRA, scripts/build_editors.py)"}
    return cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)


def reuse_key(task: str, quarters: tuple[int, ...]) -> str:
    """The ``--editor-data`` key of these counterfactuals (with the neutral additions): nli_all, nli_all_q1."""
    return f"{task}_all{quarters_tag(quarters)}"


for _quarters in ((0,), (1,)):
    reusable(reuse_key("nli", _quarters), f"the NLI editor's every-target counterfactuals, annotation quarter "
                                          f"{_quarters[0]}'s editor")


def all_target_rows(train: Any, task: str, note: str, quarters: tuple[int, ...] = (0,)) -> tuple[Any, dict]:
    """The counterfactuals with their provenance columns, and the digests of what wrote them: read from
    ``--editor-data TASK_all[_q1]=FOLDER`` where given (the GPU suite, which has no SmolLM2; with the additions
    only), else generated or restored from the archived parts."""
    subset, whole = written_by(train, task, quarters)
    given = settings.REUSE.get(reuse_key(task, quarters)) if ADDITIONS[note] else None
    if given:
        return reused_counterfactuals(given, subset, f"the {task} editor's every-target counterfactuals")
    augmenter = all_target_augmenter(task, quarters, ADDITIONS[note])
    # archived (committed) when the editor writes all its rows, so a later session or the GPU suite restores them
    archive = settings.PARTS_ARCHIVE / f"{task}_all_q{''.join(map(str, quarters))}" if whole else None
    cfs = cached_augment(augmenter, subset, "editor-all", f"{note} ({task})", part_rows=20,
                         parts_key=editor_order_key(train, task) if quarters == (0,) else None, archive=archive)
    return cfs, component_digests(augmenter)


def all_target_augmenter(task: str, quarters: tuple[int, ...], additions: int) -> Any:
    """The editor of annotation ``quarters`` toward every other label, ``additions`` neutral candidates by
    addition, the shipped checker choosing and filtering."""
    from cfaug_hf import LLMCounterfactualAugmenter

    editor = editor_of(task, quarters).configure(neutral_additions=additions)
    return LLMCounterfactualAugmenter(editor, schema_of(task), targets="all", keep_original=False)


@archive_check("nli_all")
def check_all_target_parts(rows: int = 20) -> Any:
    """the quarter-0 NLI editor's every-target rows (neutral by addition)"""
    train = CONFIGS["nli"]()["train"]
    settings.EDITOR_LIMIT = rows
    subset, _ = written_by(train, "nli", (0,))
    return record_equivalence(all_target_augmenter("nli", (0,), ADDITIONS["editor+checker (all targets)"]), subset,
                              archived_run("nli_all_q0", "editor-all", editor_order_key(train, "nli")))


def _rows(train: Any, task: str, note: str, amplify: bool = False) -> Any:
    from datasets import concatenate_datasets

    parts = [train]
    if amplify:
        parts.append(human_rows(train, task, train.select(annotated_rows(train, task)), "human (quarter)"))
    parts.append(all_target_counterfactuals(train, task, note))
    if amplify:
        settings.NOTES["amplify (all targets)"] = {**settings.NOTES.pop("human (quarter)"), **settings.NOTES[note]}
    return concatenate_datasets(parts)


@row("editor+checker (all targets)", configs=("nli",), same_rows="human (editor rows)",
     title="+ learned editor on other rows toward both other labels (neutral by addition), flip-checked")
def all_targets(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the quarter-0 editor's counterfactuals toward both other labels of each row outside the
    annotated quarter (neutral rows too), with its neutral candidates by addition."""
    return _rows(train, task, "editor+checker (all targets)")


@row("editor+checker (all targets, no additions)", configs=("nli",), same_rows="human (editor rows)",
     title="+ learned editor on other rows toward both other labels (its own candidates only), flip-checked")
def all_targets_plain(train: Any, seed: int, *, task: str) -> Any:
    """The same rows and targets with ``neutral_additions=0``: what the additions change."""
    return _rows(train, task, "editor+checker (all targets, no additions)")


@row("amplify (all targets)", configs=("nli",),
     title="+ human CAD on the quarter + learned editor toward both other labels on other rows")
def amplify_all_targets(train: Any, seed: int, *, task: str) -> Any:
    """Original + the annotated quarter's human counterfactuals + ``editor+checker (all targets)``'s."""
    return _rows(train, task, "editor+checker (all targets)", amplify=True)


@row("crossfit (all targets)", configs=("nli",), full_coverage_only=True,
     title="+ cross-fitted learned editors toward both other labels (no row by an editor that saw its human pair)")
def crossfit_all_targets(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + counterfactuals toward both other labels of every row, from an editor that never saw that
    row's human pair: the quarter-0 editor for the other quarters, the quarter-1 editor for quarter 0."""
    from datasets import concatenate_datasets

    note = "editor+checker (all targets)"
    rest = all_target_counterfactuals(train, task, note)
    rest_note = settings.NOTES.pop(note)
    first = all_target_counterfactuals(train, task, note, (1,))
    settings.NOTES["crossfit (all targets)"] = {"quarter 0 editor": rest_note,
                                                "quarter 1 editor": settings.NOTES.pop(note)}
    return concatenate_datasets([train, rest, first])
