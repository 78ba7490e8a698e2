"""The edit-until-the-whole-input-flips loop on the yardstick: the quarter-0 editor (the one behind
``editor+checker``) rewriting the same rows, but through ``COREAugmenter(until_flipped=True)``: the sentences that
carry the label are edited, strongest first, until the shipped flip checker reads the whole review as the target,
or the edit budget runs out (then no counterfactual). Same rows, same editor, same checker as ``editor+checker``;
only the choice of what to edit differs (a fixed 3 most polar sentences there)."""

from __future__ import annotations

from typing import Any

from .. import settings
from ..augmented import (archived_run, cached_augment, component_digests, record_equivalence,
                         reused_counterfactuals)
from ..configs import CONFIGS, schema_of
from ..registry import archive_check, reusable, row
from .editors import editor_of, editor_order_key, editor_subset, written_by


def until_flipped_augmenter(task: str) -> Any:
    """COREAugmenter(mode="editor_only", until_flipped=True) around the quarter-0 editor, the shipped checker."""
    from cfaug_hf import COREAugmenter

    return COREAugmenter(editor_of(task, (0,)), schema_of(task), mode="editor_only", keep_original=False,
                         until_flipped=True)


def reuse_key(task: str) -> str:
    """The ``--editor-data`` key of these counterfactuals: sentiment_until_flipped."""
    return f"{task}_until_flipped"


reusable(reuse_key("sentiment"), "the sentiment editor's counterfactuals (annotation quarter 0's editor), each "
                                 "review edited until the whole of it flips")


def until_flipped_counterfactuals(train: Any, task: str) -> tuple[Any, dict, int]:
    """The loop's counterfactuals (provenance columns kept) of the rows ``editor+checker`` rewrites, the digests of
    what wrote them and how many rows it rewrote: read from ``--editor-data TASK_until_flipped=FOLDER`` where given
    (the GPU suite, which has no SmolLM2), else generated or restored from the archived parts (cached and archived
    in parts, like the editor's)."""
    subset, _ = written_by(train, task, (0,))
    given = settings.REUSE.get(reuse_key(task))
    if given:
        cfs, components = reused_counterfactuals(given, subset, f"the {task} editor's counterfactuals edited until "
                                                 "flipped")
        return cfs, components, len(subset)
    augmenter = until_flipped_augmenter(task)
    cfs = cached_augment(augmenter, subset, "editor", f"editor until flipped ({task})", part_rows=20,
                         parts_key=editor_order_key(train, task),
                         archive=settings.PARTS_ARCHIVE / f"{task}_until_flipped")
    return cfs, component_digests(augmenter), len(subset)


@row("editor (until flipped)", configs=("sentiment",),
     title="+ learned editor (trained on that quarter) on other rows, edited until the whole review flips",
     same_rows="human (editor rows)")
def until_flipped_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the loop's counterfactuals of the rows ``editor+checker`` rewrites."""
    from datasets import concatenate_datasets

    from cfaug_hf import AugmentationStats
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    cfs, components, edited = until_flipped_counterfactuals(train, task)
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    settings.NOTES["editor (until flipped)"] = {
        "rows_edited": edited, "counterfactuals": len(cfs), "components": components,
        "skipped": stats.get("skipped", {}), "filtered": stats.get("filtered", {}),
        "editor": f"{task} editor of annotation quarter 0 (SmolLM2-135M + LoRA, scripts/build_editors.py), "
                  "COREAugmenter(until_flipped=True)"}
    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


@archive_check("sentiment_until_flipped")
def check_until_flipped_parts(rows: int = 20) -> dict[str, Any]:
    """the quarter-0 editor's sentiment coverage rows, edited until the whole review flips"""
    train = CONFIGS["sentiment"]()["train"]
    settings.EDITOR_LIMIT = rows
    pattern = archived_run("sentiment_until_flipped", "editor", editor_order_key(train, "sentiment"))
    return record_equivalence(until_flipped_augmenter("sentiment"), editor_subset(train, "sentiment"), pattern)
