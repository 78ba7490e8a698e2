"""NLI rows whose counterfactuals revise the premise, the hypothesis kept.

CAD-SNLI's annotators revised each original pair twice over: the hypothesis toward both other labels, and the
premise toward both other labels. Every editor row before these rewrote hypotheses only, and the revised-premise
test set did not move. Here an editor learned from the annotated quarter's revised premises
(``python -m scripts.build_editors --task nli-premise --quarter 0``, the same originals as the hypothesis editor's
quarter) writes premises for the rows outside that quarter (`LLMCounterfactualAugmenter` with
``edit_side="premise"`` and ``targets="all"``, the shipped flip checker reading (premise, hypothesis) to choose
and to filter), alone and beside the every-target hypothesis rows; the human revised premises of the same rows are
the reference.
"""

from __future__ import annotations

from typing import Any

from .. import settings
from ..augmented import cached_augment, component_digests, record_equivalence
from ..configs import CONFIGS, schema_of
from ..registry import archive_check, row
from .editor_all_targets import all_target_counterfactuals
from .editors import annotated_rows, editor_of, editor_order_key, editor_subset, human_rows

#: The premise editor's name in build_editors (its folder: nli-premise-q0).
PREMISE_EDITOR = "nli-premise"


def premise_counterfactuals(train: Any, task: str) -> Any:
    """The quarter-0 premise editor's counterfactuals toward both other labels of each row it rewrites, cached and
    archived in parts like the other editor rows."""
    from cfaug_hf import AugmentationStats
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    subset = editor_subset(train, task)
    augmenter = premise_augmenter(task)
    # every limit takes a prefix of one row order (parts_key), so a shorter run's parts serve a longer one
    cfs = cached_augment(augmenter, subset, "editor-premise", f"premise editor ({task})", part_rows=20,
                         parts_key=editor_order_key(train, task), archive=settings.PARTS_ARCHIVE / f"{task}_premise_q0")
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    settings.NOTES["premise editor"] = {
        "rows_edited": len(subset), "counterfactuals": len(cfs), "components": component_digests(augmenter),
        "skipped": stats.get("skipped", {}), "filtered": stats.get("filtered", {}),
        "by_target": {t: sum(1 for x in cfs["label"] if x == t) for t in sorted(set(cfs["label"]))},
        "editor": f"{task} premise editor of annotation quarter 0 (SmolLM2-135M + LoRA, scripts/build_editors.py "
                  f"--task nli-premise)"}
    return cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)


def premise_augmenter(task: str) -> Any:
    """The quarter-0 premise editor toward every other label, the shipped checker choosing and filtering."""
    from cfaug_hf import LLMCounterfactualAugmenter

    return LLMCounterfactualAugmenter(editor_of(PREMISE_EDITOR, (0,)), schema_of(task), targets="all",
                                      edit_side="premise", keep_original=False)


@archive_check("nli_premise")
def check_premise_parts(rows: int = 20) -> Any:
    """the quarter-0 NLI premise editor's rows"""
    train = CONFIGS["nli"]()["train"]
    settings.EDITOR_LIMIT = rows
    return record_equivalence(premise_augmenter("nli"), editor_subset(train, "nli"),
                              f"nli_premise_q0_editor-premise_{editor_order_key(train, 'nli')[:12]}_*.jsonl.gz")


def human_premises(train: Any, subset: Any) -> Any:
    """CAD's revised premises of ``subset``'s rows (the hypothesis kept), in ``train``'s features."""
    from datasets import Dataset
    from scripts.shared_data import cad_nli_edit_rows

    by_pair: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in cad_nli_edit_rows("train", "premise"):
        by_pair.setdefault((r["text"], r["hypothesis"]), []).append((r["counterfactual"], r["target"]))
    rows = [{**r, "premise": text, "label": label, "id": f"{r['id']}-premise{k}"}
            for r in subset for k, (text, label) in enumerate(by_pair.get((r["premise"], r["hypothesis"]), []))]
    settings.NOTES["human (editor rows, premises)"] = {"rows": len(subset), "counterfactuals": len(rows)}
    return Dataset.from_list(rows).cast(train.features)


@row("human (editor rows, premises)", configs=("nli",),
     title="+ human revised premises of the rows the editors rewrite")
def human_editor_premises(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + CAD's revised premises of the rows the quarter-0 editors rewrite: the premise editor's
    reference."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, human_premises(train, editor_subset(train, task))])


@row("editor+checker (premises)", configs=("nli",), same_rows="human (editor rows, premises)",
     title="+ learned premise editor on other rows toward both other labels, flip-checked")
def premises(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the quarter-0 premise editor's revised premises toward both other labels of each row outside
    the annotated quarter."""
    from datasets import concatenate_datasets

    cfs = premise_counterfactuals(train, task)
    settings.NOTES["editor+checker (premises)"] = settings.NOTES.pop("premise editor")
    return concatenate_datasets([train, cfs])


@row("editor+checker (both sides)", configs=("nli",),
     title="+ learned editors on other rows: hypotheses (neutral by addition) and premises, flip-checked")
def both_sides(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + ``editor+checker (all targets)``'s revised hypotheses + ``editor+checker (premises)``'s
    revised premises, of the same rows: what CAD-SNLI's annotators wrote for each, by the editors."""
    from datasets import concatenate_datasets

    hypotheses = all_target_counterfactuals(train, task, "editor+checker (all targets)")
    premise_cfs = premise_counterfactuals(train, task)
    settings.NOTES["editor+checker (both sides)"] = {"hypotheses": settings.NOTES.pop("editor+checker (all targets)"),
                                                     "premises": settings.NOTES.pop("premise editor")}
    return concatenate_datasets([train, hypotheses, premise_cfs])


@row("amplify (both sides)", configs=("nli",),
     title="+ human CAD of the quarter (hypotheses and premises) + learned editors on other rows, both sides")
def amplify_both_sides(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the annotated quarter's human counterfactuals, hypotheses and premises (what the two editors
    learned from) + ``editor+checker (both sides)``'s counterfactuals of the other rows."""
    from datasets import concatenate_datasets

    quarter = train.select(annotated_rows(train, task))
    human = [human_rows(train, task, quarter, "human (quarter)"), human_premises(train, quarter)]
    both = both_sides(train, seed, task=task)
    settings.NOTES["amplify (both sides)"] = {"human quarter": {
        "rows": len(quarter), "hypotheses": settings.NOTES.pop("human (quarter)")["counterfactuals"],
        "premises": settings.NOTES.pop("human (editor rows, premises)")["counterfactuals"]},
        **settings.NOTES.pop("editor+checker (both sides)")}
    return concatenate_datasets([both, *human])
