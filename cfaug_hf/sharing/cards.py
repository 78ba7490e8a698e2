"""Model and dataset cards that say exactly what a component or an augmented dataset is and how it was made.

Cards are rendered from the Jinja templates in ``hub_cards/templates/`` with ``huggingface_hub.ModelCard`` /
``DatasetCard``. The generated text sits between ``<!-- cfaug:begin ... -->`` and ``<!-- cfaug:end -->``; when a
card already exists on the Hub, `merge_card` replaces only that block and updates the metadata keys this
library owns, so whatever a user wrote elsewhere in the card, or added to its metadata, survives a new push.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .markdown import cell, code, fenced, inline

__all__ = ["TEMPLATES", "BEGIN", "END", "merge_card", "component_card", "dataset_card", "split_provenance",
           "is_hub_id", "source_info"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
BEGIN = "<!-- cfaug:begin"
END = "<!-- cfaug:end -->"
_SECTION = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_HF_PATH = re.compile(r"hf://datasets/([^@]+?)@([0-9a-f]{40}|[^/]+)/")
# datasets caches a Hub dataset under <namespace>___<name>/<config>/<version>/<commit sha>/
_CACHE_PATH = re.compile(r"([^/]+)___([^/]+)/[^/]+/[^/]+/([0-9a-f]{40})/[^/]+$")


def is_hub_id(name: str | None) -> bool:
    """True for ``namespace/name`` references that are not local paths."""
    return bool(name) and bool(_HUB_ID.match(name)) and not os.path.exists(name)  # type: ignore[arg-type]


def merge_card(existing: Any, new: Any) -> Any:
    """``new``'s generated block and metadata, merged into ``existing`` without losing the user's text or keys.

    Metadata: keys set in ``new`` win; other keys of ``existing`` are kept; list-valued ``tags`` are united.
    Body: the block between the cfaug markers is replaced; if the user removed the markers, the new block is
    appended after their text.
    """
    if existing is None:
        return new
    block = _SECTION.search(new.text)
    assert block is not None, "a generated card must contain the cfaug markers"
    old_text = existing.text
    if _SECTION.search(old_text):
        body = _SECTION.sub(lambda _: block.group(0), old_text, count=1)
    else:
        body = old_text.rstrip() + "\n\n" + block.group(0) + "\n"
    data = existing.data.to_dict()
    new_data = new.data.to_dict()
    tags = list(dict.fromkeys((data.get("tags") or []) + (new_data.get("tags") or [])))
    data.update(new_data)
    if tags:
        data["tags"] = tags
    card_cls = type(new)
    data_cls = type(new.data)
    merged_data = data_cls(**data)
    return card_cls(f"---\n{merged_data.to_yaml()}\n---\n{body if body.startswith(chr(10)) else chr(10) + body}")


def _rows(mapping: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in mapping.items():
        if value is None or value == {} or value == []:
            continue
        if isinstance(value, (dict, list)):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        out.append((cell(key), cell(value)))
    return out


def component_card(component: Any, repo_id: str) -> Any:
    """The model card of a component (generator, checker, ...) about to be pushed to ``repo_id``, rendered from its
    `card_data` (`cfaug_hf.components.base.ComponentCardData`)."""
    from huggingface_hub import ModelCard, ModelCardData

    card = component.card_data()
    config = component.get_config_dict()
    training = dict(card.training)
    evaluation = {k: training.pop(k) for k in list(training) if k.startswith("eval_")}
    dataset = training.get("train_dataset") or {}
    base = card.base_model
    bases = [b for b in (base.split("+") if base else []) if is_hub_id(b)]
    datasets = [dataset["id"]] if is_hub_id(dataset.get("id")) else None
    if base and bases:
        base_text = ", ".join(f"[{b}](https://huggingface.co/{b})" for b in bases)
    elif base:
        base_text = f"{code(base)} (a local model, not on the Hub)."
    else:
        base_text = "Not recorded."
    if dataset:
        training["training data"] = (f"{dataset.get('id', 'a local dataset')} ({dataset.get('num_rows', '?')} rows"
                                     + (f", revision {dataset['revision']}" if dataset.get("revision") else "")
                                     + (f", fingerprint {dataset['fingerprint']}" if dataset.get("fingerprint")
                                        else "") + ")")
        training.pop("train_dataset", None)
    card_data = ModelCardData(
        library_name="cfaug-hf", base_model=bases or None, datasets=datasets, license=card.license,
        language=card.language, pipeline_tag=card.pipeline_tag,
        tags=["cfaug-hf", "counterfactual-data-augmentation", component.component_type, *card.tags],
    )
    return _scrubbed(ModelCard.from_template(
        card_data, template_path=str(TEMPLATES / "component_card.md"),
        title=inline(f"{repo_id.split('/')[-1]}: a cfaug-hf {component.component_type}"),
        summary=card.summary, class_name=type(component).__name__, import_from=card.import_from,
        variable=component.component_type, repo_id=repo_id, usage=card.usage,
        base_model_text=base_text, training=_rows(training), evaluation=_rows(evaluation),
        config_json=fenced(json.dumps(config, indent=2, ensure_ascii=False, sort_keys=True, default=str), "json"),
        citation=card.citation, citation_block=fenced(card.citation or "", "bibtex"),
    ))


def _scrubbed(card: Any) -> Any:
    """The card with every key the scrubber recognises removed (a key pasted into any setting shows in its config
    block)."""
    from .credentials import scrub_text

    text = str(card)
    clean = scrub_text(text)
    return card if clean == text else type(card)(clean)


# --------------------------------------------------------------------------------------------- datasets
def source_info(source: Any) -> dict[str, Any]:
    """Id and revision of a source dataset: given as a string, or recovered from a ``datasets.Dataset``.

    A dataset loaded from the Hub records ``hf://datasets/<id>@<revision>/...`` paths in its download checksums (with
    verification on) and is cached under ``<namespace>___<name>/<config>/<version>/<commit sha>/``; datasets built
    locally have no id.
    """
    if source is None:
        return {}
    if isinstance(source, str):
        repo, _, rev = source.partition("@")
        return {"id": repo, "revision": rev or None}
    info: dict[str, Any] = {}
    ds_info = getattr(source, "info", None)
    paths = list((getattr(ds_info, "download_checksums", None) or {}).keys())
    for split in getattr(source, "values", lambda: [])():  # a DatasetDict
        paths += list((getattr(split.info, "download_checksums", None) or {}).keys())
    for cache in getattr(source, "cache_files", []) or []:
        paths.append(str(cache.get("filename", "")))
    for p in paths:
        m = _HF_PATH.search(p)
        if m:
            info = {"id": m.group(1), "revision": m.group(2)}
            break
        m = _CACHE_PATH.search(p.replace(os.sep, "/"))
        if m:
            info = {"id": f"{m.group(1)}/{m.group(2)}", "revision": m.group(3)}
            break
    builder = getattr(ds_info, "builder_name", None)
    if not info and builder:
        info = {"builder": builder}
    return info


def split_provenance(dataset: Any, label_column: str, label_names: list[str] | None = None,
                     source: Any = None) -> dict[str, Any]:
    """Counts of one augmented split: rows, label before/after, kinds of rows, skip and filter reasons."""
    from ..provenance import AugmentationStats

    stats = AugmentationStats.from_dataset(dataset, rows_in=len(source) if source is not None else None)

    def label_names_of(values: list[Any], features: Any) -> list[str]:
        names = getattr(features, "names", None) or label_names
        return [names[v] if isinstance(v, int) and names else str(v) for v in values]

    after = Counter(label_names_of(list(dataset[label_column]), dataset.features.get(label_column)))
    if source is not None and label_column in source.column_names:
        before = Counter(label_names_of(list(source[label_column]), source.features.get(label_column)))
    else:
        originals = dataset.filter(lambda cf: not cf, input_columns="cf_is_counterfactual")
        before = Counter(originals["cf_original_label"])
    labels = sorted(set(before) | set(after))
    reasons = sorted((k, v) for k, v in stats.events.items() if not k.startswith("produced:"))
    return {"stats": stats.to_dict(), "name": None,
            "labels": [(cell(lab), before.get(lab, 0), after.get(lab, 0)) for lab in labels],
            "kinds": sorted((cell(k), n) for k, n in Counter(dataset["cf_kind"]).items()),
            "reasons": [(cell(k), n) for k, n in reasons]}


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def uploaded_plots(report: Any) -> list[str]:
    """The report's PNG plots that exist on disk, which a push uploads under ``report/``."""
    return [name for name, path in report.files.items() if str(path).endswith(".png") and Path(path).is_file()]


def source_license(source: Any) -> str | None:
    """The licence a source ``Dataset`` (or the first split of a ``DatasetDict``) declares in its info, if any."""
    splits = list(source.values()) if hasattr(source, "values") and not isinstance(source, dict) else [source]
    info = getattr(splits[0], "info", None) if splits else None
    text = getattr(info, "license", None)
    return text.strip() if isinstance(text, str) and text.strip() else None


def dataset_card(dataset: Any, repo_id: str, *, augmenter: Any = None, source: Any = None,
                 pretty_name: str | None = None, license: str | None = None, language: str | list[str] | None = "en",
                 component_lines: list[str] | None = None, report: Any = None) -> Any:
    """The dataset card of an augmented ``Dataset`` or ``DatasetDict`` about to be pushed to ``repo_id``.

    ``report`` (an `AugmentationReport`) adds its Markdown: counterfactual quality and the
    shortcut diagnostics before and after augmentation."""
    from datasets import Dataset
    from huggingface_hub import DatasetCard, DatasetCardData

    from .._version import __version__

    splits = {"train": dataset} if isinstance(dataset, Dataset) else dict(dataset)
    sources = ({"train": source} if source is not None and not isinstance(source, (str, dict)) and
               not hasattr(source, "keys") else (dict(source) if hasattr(source, "keys") else {}))
    src = source_info(source)
    schema = augmenter.schema if augmenter is not None else None
    label_column = schema.label_column if schema else "label"
    names = list(schema.label_names) if schema else None
    split_rows = [{**split_provenance(ds, label_column, names, sources.get(name)), "name": cell(name)}
                  for name, ds in splits.items()]
    methods = sorted({m for ds in splits.values() for m in set(ds["cf_method"]) if m})
    method = augmenter.method if augmenter is not None else (methods[0] if methods else "unknown")
    total = sum(len(ds) for ds in splits.values())
    if src.get("id"):
        rev = f" at revision {code(src['revision'])}" if src.get("revision") else ""
        source_text = (f"[{inline(src['id'])}](https://huggingface.co/datasets/{src['id']}){rev}."
                       if is_hub_id(src["id"]) else f"{cell(src['id'])}{rev} (not a Hub dataset id).")
    elif src.get("builder"):
        source_text = f"A local dataset (built with the {code(src['builder'])} builder); it is not on the Hub."
    else:
        source_text = "A local dataset; it is not on the Hub."
    task = {"fact-verification": "text-classification", "natural-language-inference": "text-classification",
            "sentiment-analysis": "text-classification"}.get(schema.task if schema else "", "text-classification")
    card_data = DatasetCardData(
        pretty_name=pretty_name or f"{repo_id.split('/')[-1]} ({method} counterfactuals)",
        source_datasets=[src["id"]] if src.get("id") else ["original"],
        task_categories=[task], language_creators=["found", "machine-generated"],
        annotations_creators=["found", "machine-generated"], language=[language] if isinstance(language, str)
        else language, license=license or source_license(source) or "unknown", size_categories=[_size_category(total)],
        tags=["cfaug-hf", "counterfactual-data-augmentation", method],
    )
    config = augmenter.get_config_dict() if augmenter is not None else {"method": method}
    reproducible = augmenter is not None and all(
        getattr(c, "hub_origin", None) for c in augmenter.components().values() if c is not None)
    return _scrubbed(DatasetCard.from_template(
        card_data, template_path=str(TEMPLATES / "dataset_card.md"),
        title=inline(pretty_name or repo_id.split("/")[-1]), method=cell(method),
        method_name=type(augmenter).__name__.replace("Augmenter", "") if augmenter is not None else method,
        augmenter_class=type(augmenter).__name__ if augmenter is not None else "Augmenter",
        cfaug_version=__version__, source_text=source_text, repo_id=repo_id, reproducible=reproducible,
        config_json=fenced(json.dumps(config, indent=2, ensure_ascii=False, sort_keys=True, default=str), "json"),
        component_lines=component_lines or ["none recorded"], splits=split_rows,
        citation=getattr(augmenter, "citation", "") if augmenter is not None else "",
        citation_block=fenced(getattr(augmenter, "citation", "") or "", "bibtex"),
        report=report.to_markdown(plot_dir="report/", plots=uploaded_plots(report)).replace(
            "## Augmentation report", "## Augmentation report (train split)", 1)
        if report is not None else "",
    ))
