"""What the augmented rows share: the rows an augmenter edits (``--augment-limit``), its counterfactuals cached in
resumable parts (and archived to a committed file), the fingerprints of the components that made them, and the
original rows plus counterfactuals as one training set."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import ROOT
from cfaug_hf import TaskSchema

from . import settings


def augment_subset(train: Any) -> tuple[Any, list[int]]:
    """The rows CORE and CrossAug edit: all, or a seeded sample of settings.AUGMENT_LIMIT of them."""
    if not settings.AUGMENT_LIMIT or settings.AUGMENT_LIMIT >= len(train):
        return train, list(range(len(train)))
    rows = sorted(random.Random(0).sample(range(len(train)), settings.AUGMENT_LIMIT))
    return train.select(rows), rows


def rows_to_dataset(rows: list[dict[str, Any]], features: Any) -> Any:
    """``Dataset.from_list(rows, features=features)``, also for no rows (``from_list`` of an empty list has no
    columns and cannot take the features)."""
    from datasets import Dataset

    if rows:
        return Dataset.from_list(rows, features=features)
    return Dataset.from_dict({name: [] for name in features}, features=features)


def with_counterfactuals(train: Any, cfs: Any) -> Any:
    """The training rows plus counterfactual rows, provenance columns dropped."""
    from datasets import concatenate_datasets

    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    return concatenate_datasets([train, cfs.remove_columns(list(PROVENANCE_COLUMNS)).cast(train.features)])


def flip_pairs(cfs: Any, schema: TaskSchema) -> list[Any]:
    from cfaug_hf.filters import Pair

    return [Pair(source={}, counterfactual=row, label=schema.label_name(row[schema.label_column]),
                 original_label=row["cf_original_label"], columns=schema.bias_columns,
                 text_columns=schema.text_columns, group=i) for i, row in enumerate(cfs)]


def component_digests(augmenter: Any) -> dict[str, str]:
    """The fingerprint of each component an augmenter used (generator, checker, editor, ...) and of its filters:
    a result names exactly what made it, so a table made with a superseded component can be found."""
    from cfaug_hf.fingerprint import digest_object

    out = {role: digest_object(c)[:16] for role, c in sorted(augmenter.components().items()) if c is not None}
    out.update({f"filter:{f.name}": f.fingerprint()[:16] for f in augmenter.filters})
    return out


#: Where the components a row can use are kept: those the package ships, and the benchmarks' cross-fitting editors.
COMPONENT_FOLDERS = (ROOT / "cfaug_hf" / "data", ROOT / "benchmarks" / "results" / "crossfit_editors")


def _without_figures(value: Any) -> Any:
    """A component config with its measured figures (``eval_*`` keys, at any depth) left out."""
    if isinstance(value, dict):
        return {k: _without_figures(v) for k, v in value.items() if not str(k).startswith("eval_")}
    if isinstance(value, list):
        return [_without_figures(v) for v in value]
    return value


def component_files() -> dict[str, str]:
    """A digest of each saved component a row may use (every folder with a manifest under `COMPONENT_FOLDERS`),
    by its path in the repository: the files its manifest lists, less what changes no counterfactual: the card
    (README.md) and the figures measured of the component (``eval_*`` keys of its ``cfaug_<kind>.json``, which
    ``scripts/build_editors.py --record`` writes after measuring it). Cheap (the manifests carry the files'
    digests; only the small config is read), so every table records it."""
    from cfaug_hf.fingerprint import digest_json

    out = {}
    for top in COMPONENT_FOLDERS:
        for manifest in sorted(top.rglob("cfaug_manifest.json")):
            listed = json.loads(manifest.read_text())
            kept = {name: d for name, d in listed.get("digests", {}).items() if name != "README.md"}
            config = manifest.parent / f"cfaug_{listed.get('kind')}.json"
            if config.name in kept and config.is_file():
                kept[config.name] = digest_json(_without_figures(json.loads(config.read_text())))
            out[manifest.parent.relative_to(ROOT).as_posix()] = digest_json(kept)[:16]
    return out


def uses_components(note: Any) -> bool:
    """Whether a row's ``augmentation`` note names a component it was made with (a ``components`` or ``checker``
    entry at any depth): the rows whose figures change when a component does."""
    if isinstance(note, dict):
        return any(k in ("components", "checker") or uses_components(v) for k, v in note.items())
    if isinstance(note, list):
        return any(uses_components(v) for v in note)
    return False


def stale_rows(earlier: dict[str, Any], now: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """The rows of an earlier table that were made with components since changed or removed, and those
    components' folders: such a row cannot be kept by a resumed or merged run. A table that predates
    ``component_files`` records no digests to compare: its rows are kept, as before (its rows name their
    components' fingerprints, which a reader can still compare by hand)."""
    then = earlier.get("component_files")
    if then is None:
        return [], []
    now = component_files() if now is None else now
    changed = sorted(k for k in then if now.get(k) != then[k])
    if not changed:
        return [], []
    rows = [row for row, r in earlier.get("rows", {}).items() if uses_components(r.get("augmentation"))]
    return rows, changed if rows else []


def archive_parts(parts_dir: Path, archive: Path) -> None:
    """Every finished part of ``parts_dir`` into one compressed JSON Lines file (rows tagged with their part) and
    its features beside it: the cache is not kept between sessions, this file is committed. A part with no rows
    (no row of it gave a counterfactual) is one line naming the part alone, so it is restored, not generated again."""
    import gzip

    from datasets import load_from_disk

    features = None
    archive.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(archive.with_suffix(".tmp"), "wt", encoding="utf-8") as f:
        for part in sorted(parts_dir.glob("*/dataset_info.json")):
            data = load_from_disk(str(part.parent))
            features = features or data.features.to_dict()
            for row in data:
                f.write(json.dumps({"_part": part.parent.name, **row}, ensure_ascii=False) + "\n")
            if len(data) == 0:
                f.write(json.dumps({"_part": part.parent.name}) + "\n")
    archive.with_suffix(".tmp").replace(archive)
    archive.with_name(archive.name.replace(".jsonl.gz", ".features.json")).write_text(json.dumps(features) + "\n")


def restore_parts(archive: Path, parts_dir: Path) -> None:
    """The parts an earlier session archived, as part folders again (those not already there)."""
    import gzip
    from collections import defaultdict

    from datasets import Features

    from cfaug_hf.sharing.folders import save_to_disk

    if not archive.is_file():
        return
    features = Features.from_dict(json.loads(archive.with_name(archive.name.replace(".jsonl.gz", ".features.json"))
                                             .read_text()))
    rows: dict[str, list] = defaultdict(list)
    with gzip.open(archive, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            part = rows[row.pop("_part")]
            if row:  # a line with the part's name alone stands for a part with no rows
                part.append(row)
    for name, part in rows.items():
        if not (parts_dir / name / "dataset_info.json").is_file():
            save_to_disk(rows_to_dataset(part, features), parts_dir / name)


def equivalent_fingerprints(fingerprint: str) -> list[str]:
    """Every older augmenter fingerprint ``fingerprint`` reproduces, nearest first: the checks chain (each code change
    is checked against the archive the previous check named), and an archive along the chain may hold fewer parts
    than an older one (a run that stopped early under that code), so a restore reads them all."""
    known = json.loads(settings.EQUIVALENT.read_text()) if settings.EQUIVALENT.is_file() else {}
    chain: list[str] = []
    while (older := known.get(chain[-1] if chain else fingerprint, {}).get("archived_as")) and older not in chain \
            and older != fingerprint:
        chain.append(older)
    return chain


def _comparable(row: dict[str, Any]) -> tuple:
    """What a counterfactual says, without the provenance that names the code (its fingerprint)."""
    return tuple((k, json.dumps(v, sort_keys=True, default=str)) for k, v in sorted(row.items())
                 if k not in ("_part", "cf_edit"))


def reused_counterfactuals(given: str, subset: Any, what: str) -> tuple[Any, dict]:
    """Counterfactuals an ``--editor-data`` folder holds (written by the editors elsewhere, e.g. here for the GPU
    suite), refused unless every one is of a row of ``subset``; with the components record a reused set gets."""
    from datasets import load_from_disk

    cfs = load_from_disk(given)
    if not set(cfs["cf_source_id"]) <= {str(i) for i in subset["id"]}:
        raise SystemExit(f"{given} does not hold counterfactuals of this run's {len(subset)} rows.")
    print(f"Reusing {what} in {given}")
    return cfs, {"reused": Path(given).name}


def archived_run(base: str, prefix: str, key: str, fingerprint: str = "*") -> str:
    """The file name under `settings.PARTS_ARCHIVE` of a `cached_augment` run archived as ``base`` with ``prefix``,
    over rows named by ``key`` (the subset's fingerprint or its ``parts_key``) and made by the augmenter whose
    fingerprint is ``fingerprint``; ``*`` (the default) makes it the pattern of every such run, which an archive
    check compares with (`record_equivalence`)."""
    return f"{base}_{prefix}_{key[:12]}_{fingerprint[:12]}.jsonl.gz"


def cached_augment(augmenter: Any, subset: Any, prefix: str, what: str, part_rows: int = 25,
                   parts_key: str | None = None, archive: Path | None = None) -> Any:
    """``augmenter.augment(subset)``, saved in settings.CACHE under the data's and the augmenter's fingerprints and loaded
    from there on later runs (generation is the slow part of every augmented row).

    The rows are augmented in parts of ``part_rows`` consecutive rows, each saved as it finishes, so a run killed
    after hours resumes from its last finished part; a row's output does not depend on its batch (the augmenter
    contract seeds per row), so the parts concatenate to what one call would have written. ``parts_key`` names the
    parts by something other than this subset (the full row order a subset is a prefix of), so subsets that are
    prefixes of one order share their parts. ``archive``: a committed file the finished parts are also written to
    after each part, and read back from when the cache is empty (a later session resumes where this one stopped)."""
    from datasets import concatenate_datasets, load_from_disk

    from cfaug_hf.sharing.folders import save_to_disk

    out_dir = settings.CACHE / f"{prefix}_{subset._fingerprint[:12]}_{augmenter.fingerprint()[:12]}"
    if (out_dir / "dataset_info.json").is_file():
        return load_from_disk(str(out_dir))
    parts_dir = settings.CACHE / f"{prefix}_{(parts_key or subset._fingerprint)[:12]}_{augmenter.fingerprint()[:12]}.parts"
    if archive is not None:
        base, key = archive, parts_key or subset._fingerprint
        archive = base.with_name(archived_run(base.name, prefix, key, augmenter.fingerprint()))
        restore_parts(archive, parts_dir)
        for older in equivalent_fingerprints(augmenter.fingerprint()[:12]):  # each adds the parts not yet restored
            restore_parts(base.with_name(archived_run(base.name, prefix, key, older)), parts_dir)
    start = time.perf_counter()
    n_parts = max(1, -(-len(subset) // part_rows))
    parts = []
    for index in range(n_parts):
        rows = range(index * part_rows, min((index + 1) * part_rows, len(subset)))
        part_dir = parts_dir / f"{index:05d}-{len(rows)}"
        if (part_dir / "dataset_info.json").is_file():
            parts.append(load_from_disk(str(part_dir)))
            continue
        part = augmenter.augment(subset.select(rows))
        save_to_disk(part, part_dir)
        parts.append(part)
        if archive is not None:
            archive_parts(parts_dir, archive)
        print(f"{what}: part {index + 1}/{n_parts} done after {time.perf_counter() - start:.0f}s", flush=True)
    cfs = concatenate_datasets(parts) if len(parts) > 1 else parts[0]
    from cfaug_hf import AugmentationStats

    print("\n".join(AugmentationStats.from_dataset(cfs).summary_lines()))
    print(f"{what} took {time.perf_counter() - start:.0f}s")
    save_to_disk(cfs, out_dir)
    return cfs


def record_equivalence(augmenter: Any, subset: Any, pattern: str) -> dict[str, Any]:
    """Augment ``subset`` (the first rows of an archived run) with this code and compare the output with part 0 of
    each archive in settings.PARTS_ARCHIVE matching ``pattern`` under another augmenter fingerprint; an equal one is
    recorded in `settings.EQUIVALENT`, so the archive serves this code (a change anywhere in the library changes
    every augmenter's fingerprint, and hours of generation are not redone for it)."""
    import gzip

    from benchmarks.harness import provenance

    now = augmenter.fingerprint()[:12]
    fresh = [_comparable(r) for r in augmenter.augment(subset)]
    report: dict[str, Any] = {"fingerprint": now, "rows": len(subset), "archives": {}}
    best: tuple[int, str] | None = None
    for path in sorted(settings.PARTS_ARCHIVE.glob(pattern)):
        older = path.name.removesuffix(".jsonl.gz").rsplit("_", 1)[1]
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows = list(map(json.loads, f))
        archived = [_comparable(r) for r in rows
                    if r.get("_part", "").startswith("00000-") and len(r) > 1]  # not an empty part's line
        same = archived[:len(fresh)] == fresh and len(archived) >= len(fresh)
        parts = len({r.get("_part") for r in rows})
        report["archives"][older] = {"equal": same, "archived_rows": len(archived), "parts": parts}
        if same and older != now and (best is None or parts > best[0]):
            best = (parts, older)
    if best is not None:  # the equal archive with the most parts, so a restore starts from the most
        known = json.loads(settings.EQUIVALENT.read_text()) if settings.EQUIVALENT.is_file() else {}
        known[now] = {"archived_as": best[1], "checked": f"part 0 ({len(fresh)} rows) regenerated at commit "
                                                         f"{str(provenance(settings.COMMIT).get('git_commit'))[:10]}: equal"}
        settings.EQUIVALENT.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    print(json.dumps(report, indent=1))
    return report
