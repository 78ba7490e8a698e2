"""NLI rows whose counterfactuals revise the premise, the hypothesis kept.

CAD-SNLI's annotators revised each original pair twice over: the hypothesis toward both other labels, and the
premise toward both other labels. Every editor row before these rewrote hypotheses only, and the revised-premise
test set did not move. Here an editor learned from the annotated quarter's revised premises
(``python -m scripts.build_editors --task nli-premise --quarter 0``, the same originals as the hypothesis editor's
quarter) writes premises for the rows outside that quarter (`LLMCounterfactualAugmenter` with
``edit_side="premise"`` and ``targets="all"``, the shipped flip checker reading (premise, hypothesis) to choose
and to filter), alone and beside the every-target hypothesis rows; the human revised premises of the same rows are
the reference.

The shipped checker's threshold (0.3, calibrated on hypotheses and premises together) keeps most near-copies of the
original premise: read whole, 6 of 20 kept edits reached their target. The ``strict`` rows keep only premises the
checker gives their target at least `premise_threshold` (chosen on CAD-SNLI dev before any test-set run). They
filter the archived run by the label-flip score each row records, which equals a run with
``checker_threshold=premise_threshold()``: candidates are tried best score first, so a row kept at the stricter
threshold is the one kept at the looser (tested in tests/test_llm_cf.py).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .. import settings
from ..augmented import (archived_run, cached_augment, component_digests, record_equivalence,
                         reused_counterfactuals)
from ..configs import CONFIGS, schema_of
from ..registry import archive_check, reusable, row
from .editor_all_targets import all_target_counterfactuals
from .editors import (annotated_rows, editor_of, editor_order_key, editor_subset, human_rows, quarters_tag,
                      written_by)

#: The premise editor's name in build_editors (its folder: nli-premise-q0).
PREMISE_EDITOR = "nli-premise"


def premise_counterfactuals(train: Any, task: str, threshold: float | None = None,
                            quarters: tuple[int, ...] = (0,), per_target: int = 1) -> Any:
    """The premise editor of annotation ``quarters``' counterfactuals toward both other labels of each row it
    rewrites (`written_by`: quarter 0's editor the other quarters, quarter 1's quarter 0), ``per_target`` a target
    (the checker's best of the 4 candidates); with ``threshold``, only those the checker gives their target at least
    that."""
    from cfaug_hf import AugmentationStats
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    subset = written_by(train, task, quarters)[0]
    cfs, components = premise_rows(train, task, quarters, per_target)
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    if threshold is not None:
        scores = [json.loads(e)["filter_scores"]["label_flip"] for e in cfs["cf_edit"]]
        stats.setdefault("filtered", {})["label_flip"] = stats.get("filtered", {}).get("label_flip", 0) + sum(
            s < threshold for s in scores)
        cfs = cfs.select([i for i, s in enumerate(scores) if s >= threshold])
    tag = _tag(quarters, per_target)
    settings.NOTES["premise editor"] = {
        "rows_edited": len(subset), "counterfactuals": len(cfs), "components": components,
        "skipped": stats.get("skipped", {}), "filtered": stats.get("filtered", {}),
        "by_target": {t: sum(1 for x in cfs["label"] if x == t) for t in sorted(set(cfs["label"]))},
        "editor": f"{task} premise editor of annotation quarter {tag} (SmolLM2-135M + LoRA, "
                  f"scripts/build_editors.py --task nli-premise --quarter {tag})", "checker_threshold": threshold}
    return cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)


def _tag(quarters: tuple[int, ...], per_target: int) -> str:
    return "".join(map(str, quarters)) + ("" if per_target == 1 else f"_x{per_target}")


def premise_reuse_key(task: str, quarters: tuple[int, ...] = (0,), per_target: int = 1) -> str:
    """The ``--editor-data`` key of these counterfactuals: nli_premise, nli_premise_q1, nli_premise_x2."""
    return f"{task}_premise{quarters_tag(quarters)}" + ("" if per_target == 1 else f"_x{per_target}")


#: The (quarters, per_target) of every premise editor set a row reads, which ``--editor-data`` may give.
PREMISE_SETS = (((0,), 1), ((1,), 1), ((0,), 2))
for _quarters, _per_target in PREMISE_SETS:
    reusable(premise_reuse_key("nli", _quarters, _per_target),
             f"the NLI premise editor's counterfactuals, annotation quarter {_quarters[0]}'s editor, {_per_target} "
             f"premise(s) a target")


def premise_rows(train: Any, task: str, quarters: tuple[int, ...] = (0,), per_target: int = 1
                 ) -> tuple[Any, dict]:
    """The premise editor's counterfactuals with their provenance columns (every one the checker kept), and the
    digests of what wrote them: read from ``--editor-data`` (`premise_reuse_key`) where given (the GPU suite, which
    has no SmolLM2), else generated or restored from the parts archived here."""
    subset, whole = written_by(train, task, quarters)
    given = settings.REUSE.get(premise_reuse_key(task, quarters, per_target))
    if given:
        return reused_counterfactuals(given, subset, f"the {task} premise editor's counterfactuals")
    augmenter = premise_augmenter(task, quarters, per_target)
    tag = _tag(quarters, per_target)
    # every limit takes a prefix of one row order (parts_key), so a shorter run's parts serve a longer one
    cfs = cached_augment(augmenter, subset, "editor-premise", f"premise editor q{tag} ({task})", part_rows=20,
                         parts_key=editor_order_key(train, task) if quarters == (0,) else None,
                         archive=settings.PARTS_ARCHIVE / f"{task}_premise_q{tag}" if whole else None)
    return cfs, component_digests(augmenter)


def premise_augmenter(task: str, quarters: tuple[int, ...] = (0,), per_target: int = 1) -> Any:
    """The premise editor of annotation ``quarters`` toward every other label, the shipped checker choosing
    ``per_target`` of its candidates and filtering."""
    from cfaug_hf import LLMCounterfactualAugmenter

    return LLMCounterfactualAugmenter(editor_of(PREMISE_EDITOR, quarters), schema_of(task), targets="all",
                                      edit_side="premise", keep_original=False, per_target=per_target)


@archive_check("nli_premise")
def check_premise_parts(rows: int = 20) -> Any:
    """the quarter-0 NLI premise editor's rows"""
    train = CONFIGS["nli"]()["train"]
    settings.EDITOR_LIMIT = rows
    return record_equivalence(premise_augmenter("nli"), editor_subset(train, "nli"),
                              archived_run("nli_premise_q0", "editor-premise", editor_order_key(train, "nli")))


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
    return amplified(train, task, "amplify (both sides)")


def amplified(train: Any, task: str, note: str, threshold: float | None = None, per_target: int = 1) -> Any:
    """The amplify rows: the originals, the quarter's human hypotheses and premises, and both editors' rows of the
    other rows (the premise editor's at ``threshold``, ``per_target`` a target)."""
    from datasets import concatenate_datasets

    quarter = train.select(annotated_rows(train, task))
    human = [human_rows(train, task, quarter, "human (quarter)"), human_premises(train, quarter)]
    hypotheses = all_target_counterfactuals(train, task, "editor+checker (all targets)")
    premise_cfs = premise_counterfactuals(train, task, threshold, per_target=per_target)
    settings.NOTES[note] = {
        "human quarter": {"rows": len(quarter), "hypotheses": settings.NOTES.pop("human (quarter)")["counterfactuals"],
                          "premises": settings.NOTES.pop("human (editor rows, premises)")["counterfactuals"]},
        "hypotheses": settings.NOTES.pop("editor+checker (all targets)"),
        "premises": settings.NOTES.pop("premise editor")}
    return concatenate_datasets([train, hypotheses, premise_cfs, *human])


#: The dev-set rule for the strict premise rows: the checker must reject this share of CAD-SNLI dev's original pairs
#: given a revised premise's label (a premise that changed nothing, claimed as flipped).
REJECT_UNCHANGED = 0.95


def premise_threshold() -> float:
    """The strict premise rows' checker threshold (`premise_calibration`)."""
    return premise_calibration()["threshold"]


@functools.lru_cache(maxsize=None)
def premise_calibration() -> dict[str, Any]:
    """The lowest threshold (0.05 grid) at which the shipped NLI checker rejects `REJECT_UNCHANGED` of CAD-SNLI
    dev's originals given the label of each of their revised premises, and how many of dev's human revised premises
    it still keeps. Dev only: the yardstick tests on CAD-SNLI test."""
    import numpy as np

    from cfaug_hf.components.checker import default_checker
    from scripts.shared_data import cad_nli

    checker = default_checker("natural-language-inference")
    originals, revised = cad_nli("original", "dev"), cad_nli("revised_premise", "dev")
    pair = {(o["hypothesis"]): o["premise"] for o in originals}  # CAD keeps each original's hypothesis
    targets = [checker.label_id(y) for y in revised["label"]]
    kept = checker.predict_proba(list(revised["premise"]), list(revised["hypothesis"]))[np.arange(len(targets)),
                                                                                         targets]
    unchanged = checker.predict_proba([pair[h] for h in revised["hypothesis"]],
                                      list(revised["hypothesis"]))[np.arange(len(targets)), targets]
    grid = [round(0.05 * i, 2) for i in range(1, 20)]
    best = next(t for t in grid if np.mean(unchanged < t) >= REJECT_UNCHANGED)
    shipped = checker.config.accept_threshold
    return {
        "threshold": best, "rule": f"lowest 0.05 step rejecting >= {REJECT_UNCHANGED:.0%} of CAD-SNLI dev originals "
                                   f"given a revised premise's label", "dev_pairs": len(targets),
        "rejected_unchanged": round(float(np.mean(unchanged < best)), 4),
        "kept_human": round(float(np.mean(kept >= best)), 4),
        "at_shipped_threshold": {"threshold": shipped,
                                 "rejected_unchanged": round(float(np.mean(unchanged < shipped)), 4),
                                 "kept_human": round(float(np.mean(kept >= shipped)), 4)}}


@row("editor+checker (premises, strict)", configs=("nli",), same_rows="human (editor rows, premises)",
     title="+ learned premise editor on other rows, only premises the checker gives their target >= the dev threshold")
def strict_premises(train: Any, seed: int, *, task: str) -> Any:
    """``editor+checker (premises)`` with `premise_threshold` instead of the checker's own 0.3."""
    from datasets import concatenate_datasets

    cfs = premise_counterfactuals(train, task, premise_threshold())
    settings.NOTES["editor+checker (premises, strict)"] = {**settings.NOTES.pop("premise editor"),
                                                           "calibration": premise_calibration()}
    return concatenate_datasets([train, cfs])


@row("amplify (both sides, strict premises)", configs=("nli",),
     title="+ human CAD of the quarter (both sides) + learned editors on other rows, premises at the dev threshold")
def amplify_strict(train: Any, seed: int, *, task: str) -> Any:
    """``amplify (both sides)`` with the premise editor's rows at `premise_threshold`."""
    threshold = premise_threshold()
    out = amplified(train, task, "amplify (both sides, strict premises)", threshold)
    settings.NOTES["amplify (both sides, strict premises)"]["calibration"] = premise_calibration()
    return out


@row("crossfit (premises)", configs=("nli",), full_coverage_only=True,
     title="+ cross-fitted learned premise editors toward both other labels (no row by an editor that saw its pair)")
def crossfit_premises(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + revised premises toward both other labels of every row, from a premise editor that never saw
    that row's human premises: the quarter-0 editor for the other quarters, the quarter-1 editor for quarter 0."""
    from datasets import concatenate_datasets

    rest = premise_counterfactuals(train, task)
    rest_note = settings.NOTES.pop("premise editor")
    first = premise_counterfactuals(train, task, quarters=(1,))
    settings.NOTES["crossfit (premises)"] = {"quarter 0 editor": rest_note,
                                             "quarter 1 editor": settings.NOTES.pop("premise editor")}
    return concatenate_datasets([train, rest, first])


#: Premises a target in the ``2 a target`` rows: the checker's two best of the editor's 4 candidates.
TWO = 2


@row("editor+checker (premises, 2 a target)", configs=("nli",), same_rows="human (editor rows, premises)",
     title="+ learned premise editor on other rows, the checker's two best premises toward each other label")
def premises_two(train: Any, seed: int, *, task: str) -> Any:
    """``editor+checker (premises)`` keeping the checker's best two candidates a target (CAD's annotators wrote one
    premise a target; the rows gained with their number so far)."""
    from datasets import concatenate_datasets

    cfs = premise_counterfactuals(train, task, per_target=TWO)
    settings.NOTES["editor+checker (premises, 2 a target)"] = settings.NOTES.pop("premise editor")
    return concatenate_datasets([train, cfs])


@row("amplify (both sides, 2 premises a target)", configs=("nli",),
     title="+ human CAD of the quarter (both sides) + learned editors on other rows, two premises a target")
def amplify_two(train: Any, seed: int, *, task: str) -> Any:
    """``amplify (both sides)`` with the premise editor's best two candidates a target."""
    return amplified(train, task, "amplify (both sides, 2 premises a target)", per_target=TWO)
