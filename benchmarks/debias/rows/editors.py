"""The rows of the editors learned from human counterfactuals (sentiment, nli).

The quarter-0 editor was trained on the CAD pairs of a seeded annotated quarter of the training rows
(``python -m scripts.build_editors --quarter 0``; committed in ``benchmarks/results/crossfit_editors/``; the editor
the package ships learned from every pair, so no row here is written by it). ``editor+checker`` is original + its counterfactuals of rows outside that
quarter (a seeded sample of ``--editor-limit``/``--augment-limit`` of them), through
COREAugmenter(mode="editor_only") with its defaults (the shipped flip checker picks among 4 candidates and
filters); ``amplify`` adds the quarter's human counterfactuals too (the amplification protocol); ``human (quarter)``
is original + the quarter's human counterfactuals only; ``human (editor rows)`` is original + the human
counterfactuals of the rows the editor rewrote; ``crossfit`` gives every row a machine counterfactual from an
editor that never saw its human pair (the quarter-0 editor for rows outside the quarter, an editor trained on a
second quarter, ``python -m scripts.build_editors --quarter 1``, for the quarter's rows; with a limit N, N and N/3
of them); ``crossfit (halves)`` does the same with two half editors (``--quarter 0 1`` and ``--quarter 2 3``), each
writing the rows of the other half (`written_by`); ``core+editor`` is CORE proper with the quarter-0 editor on the editor+checker row's rows (CF-DPR excerpts
retrieved for each row, their keywords in the editor's input; benchmarks/core_retrieval.py builds the encoder and
index). ``--editor-data sentiment=FOLDER`` (or nli=) reuses counterfactuals the editor wrote before (sentiment_q1 /
nli_q1: the cross-fitting editor's; ``--core-editor-data`` the same for core+editor).
"""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any


from .. import settings
from ..augmented import archived_run, cached_augment, component_digests, record_equivalence
from ..configs import CAD_TASKS, CONFIGS, schema_of
from ..registry import archive_check, reusable, row
from .core import retrieval_parts

#: Committed copies of the cross-fitting editors (the cache is not kept between sessions).
CROSSFIT_EDITORS = settings.RESULTS / "crossfit_editors"


def _human_by_row(task: str) -> dict[Any, list[tuple[str, str]]]:
    """Human counterfactuals of CAD train by original row key: [(edited text, its label)]."""
    from scripts.shared_data import cad_nli_edit_rows, cad_sentiment_edit_rows

    out: dict[Any, list[tuple[str, str]]] = {}
    if task == "sentiment":
        for r in cad_sentiment_edit_rows("train"):
            out.setdefault(r["text"], []).append((r["counterfactual"], r["target"]))
    else:
        for r in cad_nli_edit_rows("train"):
            out.setdefault((r["premise"], r["text"]), []).append((r["counterfactual"], r["target"]))
    return out


def _row_key(task: str, row: dict[str, Any]) -> Any:
    return row["text"] if task == "sentiment" else (row["premise"], row["hypothesis"])


def quarter_rows(train: Any, task: str, quarters: tuple[int, ...]) -> list[int]:
    """The training rows of these annotation quarters (scripts/build_editors.py trains an editor on a quarter's, or
    several quarters', human pairs; quarter 0 is the amplification protocol's annotated quarter)."""
    from scripts.shared_data import annotation_quarters, cad_nli_edit_rows, cad_sentiment_edit_rows

    if task == "sentiment":
        rows = cad_sentiment_edit_rows("train")
        dealt = annotation_quarters(len(rows))
        keys = {rows[i]["text"] for q in quarters for i in dealt[q]}
    else:
        rows = cad_nli_edit_rows("train")
        dealt = annotation_quarters(max(rows["original"]) + 1)
        chosen = set().union(*(dealt[q] for q in quarters))
        keys = {(r["premise"], r["text"]) for r in rows if r["original"] in chosen}
    return [i for i, r in enumerate(train) if _row_key(task, r) in keys]


def annotated_rows(train: Any, task: str) -> list[int]:
    """The training rows of the annotated quarter the quarter-0 editor learned from (scripts/build_editors.py)."""
    return quarter_rows(train, task, (0,))


def editor_subset(train: Any, task: str) -> Any:
    """The rows the quarter-0 editor rewrites: the rows outside the annotated quarter (so it never rewrites a row whose
    human counterfactual it learned from) in one seeded order, the first settings.EDITOR_LIMIT (else settings.AUGMENT_LIMIT) of them,
    or all. Every limit takes a prefix of the same order, so the coverage curve's points (25%, 50%, 100% of the
    rows) share their counterfactuals: a larger limit only writes the rows the smaller one had not."""
    seen, limit = set(annotated_rows(train, task)), settings.EDITOR_LIMIT or settings.AUGMENT_LIMIT
    rest = [i for i in range(len(train)) if i not in seen]
    random.Random(0).shuffle(rest)
    return train.select(rest[:limit] if limit else rest)


def editor_order_key(train: Any, task: str) -> str:
    """A name for the full row order of `editor_subset` (the data and the rows left out), shared by every limit."""
    from cfaug_hf.fingerprint import digest_json

    return digest_json({"data": train._fingerprint, "left_out": annotated_rows(train, task), "order_seed": 0})


def human_rows(train: Any, task: str, subset: Any, note: str) -> Any:
    """The human counterfactuals (CAD) of ``subset``'s rows, in ``train``'s features."""
    from datasets import Dataset

    human, column = _human_by_row(task), ("text" if task == "sentiment" else "hypothesis")
    rows = [{**r, column: text, "label": label, "id": f"{r['id']}-human{k}"}
            for r in subset for k, (text, label) in enumerate(human.get(_row_key(task, r), []))]
    settings.NOTES[note] = {"rows": len(subset), "counterfactuals": len(rows)}
    return Dataset.from_list(rows).cast(train.features)


def quarter_subset(train: Any, task: str) -> Any:
    """The annotated quarter's rows, which the cross-fitting editor (trained on quarter 1) rewrites: all of them, or
    a seeded third of settings.EDITOR_LIMIT/AUGMENT_LIMIT (the same share of the quarter as editor_subset takes of the
    rest)."""
    rows, limit = annotated_rows(train, task), settings.EDITOR_LIMIT or settings.AUGMENT_LIMIT
    if limit:
        rows = sorted(random.Random(0).sample(rows, min(len(rows), limit // 3)))
    return train.select(rows)


#: The half editors' cross-fitting (``crossfit (halves)``): the editor trained on two quarters writes the other two.
HALVES = ((0, 1), (2, 3))


def written_by(train: Any, task: str, quarters: tuple[int, ...]) -> tuple[Any, bool]:
    """The rows the editor trained on annotation ``quarters`` rewrites, and whether they are all it would write with
    no limit: quarter 0's editor `editor_subset`, quarter 1's `quarter_subset` (quarter 0), a half editor the two
    quarters it did not learn from (with a limit of N of the rows outside quarter 0, the same share of its rows,
    seeded)."""
    if quarters == (0,):
        return editor_subset(train, task), True
    if quarters == (1,):
        subset = quarter_subset(train, task)
        return subset, len(subset) == len(annotated_rows(train, task))
    if quarters == HALVES[0]:  # also the few training rows with no CAD pair (in no quarter), so none is written twice
        seen = set(quarter_rows(train, task, quarters))
        rows = [i for i in range(len(train)) if i not in seen]
    else:
        rows = quarter_rows(train, task, tuple(q for q in range(4) if q not in quarters))
    # A limit counts rows outside quarter 0 (the coverage curve's unit), so a half editor writes the same share of
    # its own rows: all of them at the curve's 100%.
    limit = settings.EDITOR_LIMIT or settings.AUGMENT_LIMIT
    share = limit / (len(train) - len(annotated_rows(train, task))) if limit else 1.0
    if share < 1:
        return train.select(sorted(random.Random(0).sample(rows, max(1, round(share * len(rows)))))), False
    return train.select(rows), True


def quarters_tag(quarters: tuple[int, ...]) -> str:
    """How an editor's quarters name its cached editor, archive and ``--editor-data`` key: "" for quarter 0's (the
    default editor of these rows), "_q1", "_q01", ..."""
    return "" if quarters == (0,) else "_q" + "".join(map(str, quarters))


for _task in CAD_TASKS:
    for _quarters in ((0,), (1,), *HALVES):
        reusable(_task + quarters_tag(_quarters), f"the {_task} editor trained on annotation quarters {_quarters}")


def editor_of(task: str, quarters: tuple[int, ...]) -> Any:
    """The editor trained on annotation ``quarters`` ((0,): the amplification protocol's annotated quarter; (1,): the
    cross-fitting editor of quarter 0; HALVES: the half editors): built into the cache by ``python -m
    scripts.build_editors --quarter N [M]``, or its committed copy (`CROSSFIT_EDITORS`), which keeps the archived
    generation parts valid in a later session (their key is the editor's fingerprint). Never the shipped editor:
    that one learned from every human pair, so it has seen the pair of every row it would rewrite here."""
    from cfaug_hf import Editor
    from scripts.build_editors import crossfit_name

    name = crossfit_name(task, quarters)
    for folder in (settings.CACHE / "editors" / name, CROSSFIT_EDITORS / name):
        if (folder / "cfaug_editor.json").is_file():
            return Editor.from_pretrained(folder)
    raise SystemExit(f"No editor {name} in {settings.CACHE / 'editors'} or {CROSSFIT_EDITORS}: run python -m "
                     f"scripts.build_editors --task {task} --quarter {' '.join(map(str, quarters))}.")


def editor_augmenter(task: str, quarters: tuple[int, ...], *, retrieval: bool = False) -> Any:
    """COREAugmenter(mode="editor_only") around the editor of ``quarters`` with its defaults (the shipped flip
    checker picks among 4 candidates and filters); sentiment rewrites the 3 sentences of each review the checker
    finds most polar. ``retrieval``: CORE proper (mode="core")."""
    from cfaug_hf import COREAugmenter

    parts = retrieval_parts(task) if retrieval else {}
    return COREAugmenter(editor_of(task, quarters), schema_of(task), mode="core" if retrieval else "editor_only",
                         keep_original=False, edit_sentences=3 if task == "sentiment" else 0, **parts)


def editor_counterfactuals(train: Any, task: str, quarters: tuple[int, ...] = (0,), *,
                           retrieval: bool = False) -> Any:
    """Counterfactuals written by the editor trained on annotation ``quarters`` for the rows of `written_by`, through
    `editor_augmenter`. ``retrieval``: CORE proper, the editor reading the keywords of the CF-DPR excerpts retrieved
    for each row. Cached by data and augmenter fingerprints."""
    from datasets import load_from_disk

    from cfaug_hf import AugmentationStats

    subset, whole = written_by(train, task, quarters)
    tag = quarters_tag(quarters)
    given = settings.REUSE.get(("core_" if retrieval else "") + task + tag)
    note = "core+editor" if retrieval else "editor+checker" if not tag else f"editor {tag[1:]}"
    if given:  # counterfactuals this editor wrote earlier (a code change since then moves the cache key)
        cfs = load_from_disk(given)
        wanted = {str(i) for i in subset["id"]}
        if not set(cfs["cf_source_id"]) <= wanted or len(set(cfs["cf_source_id"])) < 0.3 * len(wanted):
            raise SystemExit(f"{given} does not hold counterfactuals of this run's {len(wanted)} rows.")
        print(f"Reusing the {task} editor's counterfactuals in {given}")
        components = {"reused": Path(given).name}  # no editor is loaded (a machine without its base model runs this)
    else:
        augmenter = editor_augmenter(task, quarters, retrieval=retrieval)
        # Only the quarter-0 editor's rows follow one order every limit takes a prefix of; the other editors' parts
        # are named by their subset, so only their whole set of rows is worth archiving.
        order = editor_order_key(train, task) if not tag else None
        cfs = cached_augment(augmenter, subset, "editor", f"{note} ({task})", part_rows=20, parts_key=order,
                             archive=None if retrieval or not whole else settings.PARTS_ARCHIVE / (task + tag))
        components = component_digests(augmenter)
    stats = AugmentationStats.from_dataset(cfs).to_dict()
    settings.NOTES[note] = {
                               "rows_edited": len(subset), "counterfactuals": len(cfs),
                               "components": components, "skipped": stats.get("skipped", {}),
                               "filtered": stats.get("filtered", {}),
                               "editor": f"{task} editor of annotation {'quarter' if len(quarters) == 1 else 'quarters'} "
                                         f"{' and '.join(map(str, quarters))} (SmolLM2-135M + LoRA, scripts/build_editors.py)"}
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    return cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)


@row("human (quarter)", configs=CAD_TASKS,
     title="+ human CAD on a quarter of the rows")
def human_quarter(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the human counterfactuals of the annotated quarter (what the amplification protocol buys)."""
    from datasets import concatenate_datasets

    quarter = train.select(annotated_rows(train, task))
    return concatenate_datasets([train, human_rows(train, task, quarter, "human (quarter)")])


@row("editor+checker", configs=CAD_TASKS,
     title="+ learned editor (trained on that quarter) on other rows, flip-checked", same_rows="human (editor rows)")
def editor_rows(train: Any, seed: int, *, task: str, amplify: bool = False) -> Any:
    """Original rows + the quarter-0 editor's counterfactuals; ``amplify``: + the annotated quarter's human ones too
    (the amplification protocol: annotate a quarter, let the editor write for the rest)."""
    from datasets import concatenate_datasets

    parts = [train]
    if amplify:
        parts.append(human_rows(train, task, train.select(annotated_rows(train, task)), "human (quarter)"))
    parts.append(editor_counterfactuals(train, task))
    if amplify:
        settings.NOTES["amplify"] = {**settings.NOTES.pop("human (quarter)"), **settings.NOTES["editor+checker"]}
    return concatenate_datasets(parts)


@row("amplify", configs=CAD_TASKS,
     title="+ human CAD on the quarter + learned editor on other rows (amplification)")
def amplify(train: Any, seed: int, task: str) -> Any:
    """Original + the annotated quarter's human counterfactuals + the quarter-0 editor's of the rows outside it
    (the amplification protocol: annotate a quarter, let the editor write for the rest)."""
    return editor_rows(train, seed, task=task, amplify=True)


@row("core+editor", configs=CAD_TASKS,
     title="+ CORE (CF-DPR + learned editor) on the editor's rows, flip-checked", same_rows="human (editor rows)")
def core_editor_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + CORE's counterfactuals with the quarter-0 editor (CF-DPR retrieval, keywords in the editor's
    input, the shipped checker choosing and filtering) of the same rows the editor+checker row rewrites."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, editor_counterfactuals(train, task, retrieval=True)])


@row("crossfit", configs=CAD_TASKS, full_coverage_only=True,
     title="+ cross-fitted learned editors (no row by an editor that saw its human pair; no human CAD)")
def crossfit_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + a machine counterfactual for every row from an editor that never saw that row's human pair:
    the quarter-0 editor writes for the other quarters, the quarter-1 editor for quarter 0."""
    from datasets import concatenate_datasets

    rest, first = editor_counterfactuals(train, task), editor_counterfactuals(train, task, (1,))
    settings.NOTES["crossfit"] = {"quarter 0 editor": settings.NOTES.pop("editor+checker"),
                                  "quarter 1 editor": settings.NOTES.pop("editor q1")}
    return concatenate_datasets([train, rest, first])


@row("crossfit (halves)", configs=CAD_TASKS, full_coverage_only=True,
     title=("+ cross-fitted learned editors, two halves (each learned from half the human "
            "pairs, never the row's own; no human CAD)"))
def crossfit_halves_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + a machine counterfactual for every row from an editor trained on half the human pairs, never
    its own: the editor of quarters 0 and 1 writes quarters 2 and 3, and the other way round (two folds; each editor
    learned from twice the pairs of the quarter editors behind ``crossfit``)."""
    from datasets import concatenate_datasets

    parts = [editor_counterfactuals(train, task, half) for half in HALVES]
    settings.NOTES["crossfit (halves)"] = {f"quarters {' and '.join(map(str, h))} editor":
                                           settings.NOTES.pop(f"editor {quarters_tag(h)[1:]}") for h in HALVES}
    return concatenate_datasets([train, *parts])


@row("human (editor rows)", configs=CAD_TASKS,
     title="+ human CAD, same rows as the learned editor")
def human_editor_rows(train: Any, seed: int, *, task: str) -> Any:
    """Original rows + the human counterfactuals of the rows the editor rewrites (its ceiling)."""
    from datasets import concatenate_datasets

    return concatenate_datasets([train, human_rows(train, task, editor_subset(train, task), "human (editor rows)")])


def check_parts(task: str, rows: int = 20, quarters: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """Regenerate the first ``rows`` rows the editor of ``quarters`` writes (quarter 0: its coverage order; another:
    the rows of `written_by`) with this code and compare them with each archived part 0 of the same rows
    (`record_equivalence`)."""
    train = CONFIGS[task]()["train"]
    augmenter = editor_augmenter(task, quarters)
    if quarters == (0,):
        settings.EDITOR_LIMIT = rows
        subset = editor_subset(train, task)
        pattern = archived_run(task, "editor", editor_order_key(train, task))
    else:
        settings.EDITOR_LIMIT = None
        subset, _ = written_by(train, task, quarters)
        pattern = archived_run(task + quarters_tag(quarters), "editor", subset._fingerprint)
        subset = subset.select(range(min(rows, len(subset))))
    return record_equivalence(augmenter, subset, pattern)


for _task in CAD_TASKS:  # --check-parts TASK, TASK_q1, TASK_q01, TASK_q23
    for _quarters, _what in (((0,), "the quarter-0 editor's {} coverage rows"),
                             ((1,), "the cross-fitting (quarter-1) editor's {} rows"),
                             *((h, f"the half editor of quarters {h[0]} and {h[1]}: its {{}} rows") for h in HALVES)):
        _check = functools.partial(check_parts, _task, quarters=_quarters)
        _check.__doc__ = _what.format(_task)
        archive_check(_task + quarters_tag(_quarters))(_check)
