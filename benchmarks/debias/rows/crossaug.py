"""CrossAug rows (fv, fever, fv-ood).

* ``crossaug``: original + CrossAug counterfactuals from the library's default negative-claim generator (the copy
  shipped in the package: the recipe on the shipped VitaminC pairs, never FEVER-Symmetric, a test set here); the
  augmented training set is cached in benchmarks/.cache/ (``--crossaug-data FOLDER`` reuses one saved elsewhere).
  The archived FEVER run (``results/editor_parts/crossaug_*``, 2026-11-27) was made with that shipped copy; the
  earlier one, made with the full-precision adapter the shipped copy was halved from (other negations for most
  claims), is in the repository's history only. With ``none`` in the same run, the flip rate of the
  generated claims is recorded: the share of c'+e rows the ``none`` model labels REFUTES. ``--augment-limit N``
  augments a seeded sample of N training rows (a CPU-sized run).
* ``crossaug+checker``: the same counterfactuals through the shipped flip checker (CrossAugAugmenter's default).
* ``crossaug+balance``: the same through ``cfaug_hf.filters.ShortcutBalanceFilter``.
* ``crossaug-shipped``: CrossAug as it ships, over the rows RACE edits (fv-ood).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from cfaug_hf import TaskSchema

from .. import settings
from ..augmented import (archived_run, augment_subset, cached_augment, component_digests, flip_pairs,
                         record_equivalence, with_counterfactuals)
from ..configs import CONFIGS
from ..registry import archive_check, row


def default_generator() -> Any:
    """The library's default negative-claim generator: the copy shipped in the package (the recipe's run of 49 steps,
    its adapter halved), which made the archived FEVER run. Training one here, as the rows once did with a 300 s
    budget, gives other weights on every machine and load (20 steps in one session), so no archive could serve
    them."""
    from cfaug_hf.methods.crossaug.recipes import default_claim_generator

    return default_claim_generator()


def crossaug_augmenter() -> Any:
    """CrossAug as the rows run it: the default generator with 5 candidates, deletions rejected, no checker."""
    from cfaug_hf import CrossAugAugmenter

    generator = default_generator()
    generator.config.num_return_sequences = 5
    return CrossAugAugmenter(generator, TaskSchema.fact_verification(id_column="id"), reject_deletions=True,
                             checker=None)


def check_crossaug_parts(config: str, rows: int = 20) -> dict[str, Any]:
    """Regenerate CrossAug's output for the first ``rows`` training rows of ``config`` with this code and compare it
    with the archived whole-set run's part 0 (`record_equivalence`)."""
    train = CONFIGS[config]()["train"]
    pattern = archived_run("crossaug", "crossaug", train._fingerprint)
    return record_equivalence(crossaug_augmenter(), train.select(range(rows)), pattern)


@archive_check("fever_crossaug")
def check_fever_crossaug() -> dict[str, Any]:
    """CrossAug over every FEVER training row"""
    return check_crossaug_parts("fever")


def crossaug_counterfactuals(train: Any) -> Any:
    """CrossAug's counterfactuals (provenance columns kept) of ``train``, or of a seeded sample of --augment-limit
    of its rows, made with the default generator and no checker (the paper's method), cached by the data's and the
    augmenter's fingerprints (the same for every seed: the classifier's seed varies, the augmented set does not).
    The checker and balancing rows filter these same counterfactuals."""
    from datasets import load_from_disk

    subset, _ = augment_subset(train)
    if settings.REUSE.get("crossaug"):
        # Carried rows (a GPU run): the generator is not loaded, and not there (`gpu_suite slim` moves its weights).
        augmented = _rows_of(load_from_disk(settings.REUSE["crossaug"]), subset)
        components: dict[str, Any] = {"reused": Path(settings.REUSE["crossaug"]).name}
    elif (superset := _cached_superset(subset, augmenter := crossaug_augmenter())) is not None:
        augmented = _rows_of(superset, subset)
    elif (superset := _archived_superset(subset, augmenter)) is not None:
        augmented = superset
    else:
        # In parts, each saved as it finishes and (for a whole training set, the only run worth keeping) archived
        # in the repository: CrossAug over FEVER's 9672 rows is about an hour on 2 cores, more than one sitting.
        # A sample of a training set whose whole run is archived is read from that run (a coverage curve's points);
        # were that archive unfinished, its missing parts would be generated first: the whole run is the one to keep.
        whole = len(subset) == len(train) or _archived_whole_run(train, augmenter)
        augmented = cached_augment(augmenter, train if whole else subset, "crossaug", "CrossAug", part_rows=250,
                                   archive=settings.PARTS_ARCHIVE / "crossaug" if whole else None)
        augmented = _rows_of(augmented, subset) if whole and len(subset) < len(train) else augmented
    cfs = augmented.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    settings.NOTES["crossaug"] = {"generator": "default (SmolLM2 + LoRA on the shipped VitaminC pairs)",
                         "rows_augmented": len(subset),
                         "components": components if settings.REUSE.get("crossaug") else component_digests(augmenter),
                         "counterfactuals": dict(Counter(cfs["cf_kind"]))}
    return cfs


def _archived_whole_run(train: Any, augmenter: Any) -> bool:
    """Whether CrossAug over every row of ``train`` is archived in the repository (under this code's fingerprint or
    one checked equivalent to it, directly or along the chain of checks)."""
    from ..augmented import equivalent_fingerprints

    now = augmenter.fingerprint()[:12]
    return any((settings.PARTS_ARCHIVE / archived_run("crossaug", "crossaug", train._fingerprint, fp)).is_file()
               for fp in (now, *equivalent_fingerprints(now)))


def _rows_of(augmented: Any, train: Any) -> Any:
    """The rows of an augmented set whose source is in ``train`` (CrossAug's output for a row depends on that row
    only, so a larger cached run serves a smaller training sample), in ``train``'s order as generating them gives:
    a sample read from a cached run, from the archive or generated anew trains on the same rows in the same order,
    so a seed's figure does not depend on what the machine had cached."""
    position = {row_id: i for i, row_id in enumerate(train["id"])}
    sources = augmented["cf_source_id"]
    kept = sorted((i for i, sid in enumerate(sources) if sid in position), key=lambda i: position[sources[i]])
    return augmented.select(kept)


def _archived_superset(train: Any, augmenter: Any) -> Any | None:
    """The rows of ``train`` in an archived CrossAug run over a larger training set (each of its rows there, with the
    same claim), under this code or one checked equivalent to it, in the order generating them would give: a capped
    run (``--max-train``) on a fresh machine reads them there instead of generating them again."""
    import gzip

    from datasets import Features

    from ..augmented import equivalent_fingerprints, rows_to_dataset

    ids, now = set(train["id"]), augmenter.fingerprint()[:12]
    for fp in (now, *equivalent_fingerprints(now)):
        for path in sorted(settings.PARTS_ARCHIVE.glob(archived_run("crossaug", "crossaug", "*", fp))):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                rows = [r for r in map(json.loads, f) if len(r) > 1]  # a part's name alone: a part with no rows
            originals = {r["id"]: r["claim"] for r in rows if not r["cf_is_counterfactual"]}
            if all(originals.get(i) == claim for i, claim in zip(train["id"], train["claim"])):
                features = json.loads(path.with_name(path.name.replace(".jsonl.gz", ".features.json")).read_text())
                print(f"Reading CrossAug's rows of this training set from the archived run {path.name}", flush=True)
                # in the order generating them for ``train`` gives (its rows in turn), as the run this one replaces
                position = {row_id: i for i, row_id in enumerate(train["id"])}
                kept = sorted((r for r in rows if r["cf_source_id"] in ids), key=lambda r: position[r["cf_source_id"]])
                return rows_to_dataset([{k: v for k, v in r.items() if k != "_part"} for r in kept],
                                       Features.from_dict(features))
    return None


def _cached_superset(train: Any, augmenter: Any) -> Any | None:
    """A cached CrossAug output of the same augmenter over a superset of ``train``'s rows, if there is one."""
    from datasets import load_from_disk

    ids = set(train["id"])
    for folder in sorted(settings.CACHE.glob(f"crossaug_*_{augmenter.fingerprint()[:12]}")):
        if (folder / "dataset_info.json").is_file():
            data = load_from_disk(str(folder))
            if ids <= set(data["cf_source_id"]):
                return data
    return None


def generated_negations(train: Any) -> Any:
    """CrossAug's c'+e rows (a generated claim with the original evidence, labelled REFUTES): a model trained on
    the original data that labels them REFUTES measures the generator's flip rate."""
    return crossaug_counterfactuals(train).filter(lambda kind: kind == "c'+e", input_columns="cf_kind")


@row("crossaug", configs=("fv", "fever"), probe=("flip rate (c'+e labelled REFUTES)", generated_negations),
     title="+ CrossAug")
def crossaug(train: Any, seed: int = 0, task: str = "fv") -> Any:
    """Original + CrossAug counterfactuals (the paper's method, no checker) from the library's default
    negative-claim generator, over all rows or a seeded ``--augment-limit`` of them."""
    return with_counterfactuals(train, crossaug_counterfactuals(train))


@row("crossaug+checker", configs=("fv", "fever"),
     title="+ CrossAug, flip-checked")
def checked_crossaug(train: Any, seed: int = 0, task: str = "fv") -> Any:
    """The same counterfactuals passed through the shipped flip checker, the default of ``CrossAugAugmenter`` (its
    LabelFlipFilter keeps a counterfactual whose label is the checker's top prediction over (claim, evidence)):
    the decisions the filter takes inside ``augment()``, without generating the claims again."""
    from cfaug_hf.components.checker import default_checker
    from cfaug_hf.filters import LabelFlipFilter
    from cfaug_hf.fingerprint import digest_object

    schema = TaskSchema.fact_verification(id_column="id")
    cfs = crossaug_counterfactuals(train)
    checker = default_checker("fact-verification")
    keep, _ = LabelFlipFilter(checker).keep(flip_pairs(cfs, schema)) if len(cfs) else ([], [])
    kept = cfs.select([i for i, k in enumerate(keep) if k])
    settings.NOTES["crossaug+checker"] = {"kept": len(kept), "of": len(cfs), "kept_by_kind": dict(Counter(kept["cf_kind"])),
                                 "checker": digest_object(checker)[:16]}
    return with_counterfactuals(train, kept)


@row("crossaug+balance", configs=("fv", "fever"),
     title="+ CrossAug, shortcut-balanced")
def balanced_crossaug(train: Any, seed: int = 0, task: str = "fv") -> Any:
    """The same counterfactuals with :class:`~cfaug_hf.filters.ShortcutBalanceFilter` applied in row order: the
    decisions the filter takes inside ``augment()`` (it is stateful and sees the counterfactuals in the same order),
    without generating the claims again. The words that caused drops are recorded in the results."""
    from cfaug_hf.filters import ShortcutBalanceFilter

    schema = TaskSchema.fact_verification(id_column="id")
    cfs = crossaug_counterfactuals(train)
    balance = ShortcutBalanceFilter(train, schema)
    keep, _ = balance.keep(flip_pairs(cfs, schema)) if len(cfs) else ([], [])
    settings.NOTES["crossaug+balance"] = {"counterfactuals_dropped": sum(not k for k in keep), "of": len(cfs),
                                 "blocked_words": dict(balance.blocked.most_common(10))}
    return with_counterfactuals(train, cfs.select([i for i, k in enumerate(keep) if k]))


def shipped_crossaug_counterfactuals(train: Any) -> Any:
    """CrossAug as it ships (``CrossAugAugmenter("default")``: the packaged negative-claim generator, decoded on
    CTranslate2 float32 when installed, and its flip checker) over the same rows as RACE."""
    from cfaug_hf import CrossAugAugmenter

    augmenter = CrossAugAugmenter("default", TaskSchema.fact_verification(id_column="id"), keep_original=False)
    augmenter.generator.use_backend("auto")
    subset, _ = augment_subset(train)
    cfs = cached_augment(augmenter, subset, "crossaug-shipped", "CrossAug (shipped)")
    cfs = cfs.filter(lambda cf: cf, input_columns="cf_is_counterfactual")
    settings.NOTES["crossaug-shipped"] = {"rows_augmented": len(subset), "components": component_digests(augmenter),
                                 "counterfactuals": dict(Counter(cfs["cf_kind"]))}
    return cfs


def shipped_crossaug_claims(train: Any) -> Any:
    return shipped_crossaug_counterfactuals(train).filter(lambda kind: kind == "c'+e", input_columns="cf_kind")


@row("crossaug-shipped", configs=("fv-ood",),
     probe=("flip rate of CrossAug's claims (c', e labelled REFUTES)", shipped_crossaug_claims),
     title="+ CrossAug as shipped (generator + flip checker)")
def shipped_crossaug_rows(train: Any, seed: int = 0, task: str = "fv") -> Any:
    """Original + CrossAug as it ships (``CrossAugAugmenter("default")``: packaged generator and flip checker) of
    the rows RACE edits."""
    return with_counterfactuals(train, shipped_crossaug_counterfactuals(train))
