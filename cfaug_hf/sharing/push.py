"""Pushing components, augmenters and augmented datasets to the Hub, and pulling them back.

Every push is one commit made with ``HfApi.upload_folder`` (or ``create_commit``): the weights, configs and card
arrive together or not at all. Errors from the Hub are turned into `HubError` messages that say what failed
and what to do, and never contain the token.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .hub import HubError, download_folder, hub_errors
from .folders import refresh_digest, write_folder

from .markdown import cell, code, fenced
from .cards import component_card, dataset_card, merge_card, uploaded_plots

__all__ = ["HubError", "hub_errors", "push_component", "push_augmenter", "push_augmented", "pull", "component_lines",
           "download_folder"]


def _existing_card(api: Any, repo_id: str, repo_type: str, revision: str | None, card_cls: Any) -> Any:
    from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError

    try:
        path = api.hf_hub_download(repo_id, "README.md", repo_type=repo_type, revision=revision)
    except (EntryNotFoundError, RemoteEntryNotFoundError):
        return None
    return card_cls.load(path, repo_type=repo_type)


def _upload(folder: Path, repo_id: str, *, repo_type: str, card: Any, card_cls: Any, private: bool | None,
            token: Any, commit_message: str, revision: str | None, what: str) -> str:
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    with hub_errors(f"Pushing {what}", repo_id, token):
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
        merged = merge_card(_existing_card(api, repo_id, repo_type, revision, card_cls), card)
        (folder / "README.md").write_text(str(merged), encoding="utf-8")
        refresh_digest(folder, "README.md")  # the manifest describes the card that is pushed, not the one saved
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type,
                                 commit_message=commit_message, revision=revision)
    return info.oid if hasattr(info, "oid") else str(info)


def push_component(component: Any, repo_id: str, *, private: bool | None = None, token: str | None = None,
                   commit_message: str | None = None, revision: str | None = None) -> str:
    """Save ``component`` and push it with its model card in one commit; returns the commit id."""
    from huggingface_hub import ModelCard

    with tempfile.TemporaryDirectory(prefix="cfaug-push-") as tmp:
        folder = Path(tmp) / "component"
        component.save_pretrained(folder)
        card = component_card(component, repo_id)
        sha = _upload(folder, repo_id, repo_type="model", card=card, card_cls=ModelCard, private=private,
                      token=token, commit_message=commit_message or f"Upload cfaug-hf {component.component_type}",
                      revision=revision, what=f"the {component.component_type}")
    component.hub_origin = {"repo_id": repo_id, "revision": sha}
    return sha


def component_lines(augmenter: Any) -> list[str]:
    """One line per component role for cards: a Hub link with revision, or what the local object is."""
    lines = []
    for role, comp in sorted(augmenter.components().items()):
        if comp is None:
            continue
        origin = getattr(comp, "hub_origin", None)
        if origin and "shipped" in origin:
            lines.append(f"{cell(role)}: shipped with cfaug-hf {code(origin.get('cfaug_hf_version', ''))} "
                         f"({code(origin['shipped'])})")
        elif origin:
            lines.append(f"{cell(role)}: [{cell(origin['repo_id'])}](https://huggingface.co/{origin['repo_id']}) at "
                         f"revision {code(origin['revision'])}")
        elif hasattr(comp, "save_pretrained"):
            base = getattr(comp, "base_model", None)
            lines.append(f"{cell(role)}: a local {code(type(comp).__name__)}" + (f" on {code(base)}" if base else "")
                         + ", not shared on the Hub")
        else:
            lines.append(f"{cell(role)}: a Python callable ({code(getattr(comp, '__qualname__', type(comp).__name__))}"
                         f"), not shareable")
    return lines


def push_augmenter(augmenter: Any, repo_id: str, *, private: bool | None = None, token: str | None = None,
                   commit_message: str | None = None, revision: str | None = None,
                   copy_components: bool = False) -> str:
    """Push an augmenter (config plus component references, or copies) as a model repository."""
    from huggingface_hub import ModelCard, ModelCardData

    from .cards import TEMPLATES

    with tempfile.TemporaryDirectory(prefix="cfaug-push-") as tmp:
        folder = Path(tmp) / "augmenter"
        augmenter.save_pretrained(folder, copy_components=copy_components)
        card = ModelCard.from_template(
            ModelCardData(library_name="cfaug-hf", tags=["cfaug-hf", "counterfactual-data-augmentation",
                                                         "augmenter", augmenter.method]),
            template_path=str(TEMPLATES / "augmenter_card.md"), repo_id=repo_id,
            class_name=type(augmenter).__name__, method=augmenter.method, components=component_lines(augmenter),
            config_json=fenced((folder / "cfaug_augmenter.json").read_text().rstrip(), "json"),
            citation=augmenter.citation, citation_block=fenced(augmenter.citation or "", "bibtex"))
        return _upload(folder, repo_id, repo_type="model", card=card, card_cls=ModelCard, private=private,
                       token=token, commit_message=commit_message or f"Upload cfaug-hf {augmenter.method} augmenter",
                       revision=revision, what="the augmenter")


def push_augmented(dataset: Any, repo_id: str, *, augmenter: Any = None, source: Any = None,
                   private: bool | None = None, token: str | None = None, pretty_name: str | None = None,
                   license: str | None = None, language: str | list[str] | None = "en",
                   commit_message: str | None = None, report: Any = None) -> str:
    """Push an augmented ``Dataset``/``DatasetDict`` and a dataset card that tells how it was made.

    The data goes up with ``push_to_hub`` (so ``load_dataset(repo_id)`` works and keeps the provenance columns),
    then one more commit writes the card, merged with the card ``datasets`` wrote (its ``dataset_info`` and
    ``configs`` stay) and with any text a user added, plus ``augmenter/cfaug_augmenter.json`` so the augmenter can
    be rebuilt from the repository.

    Args:
        augmenter: the augmenter that made the data (for its config, components and citation).
        source: the input dataset (for counts before augmentation and, when it came from the Hub, its id and
            revision) or its Hub id as ``"id"`` / ``"id@revision"``.
        report: an `AugmentationReport` of the data (``augmentation_report``); its
            quality metrics and before/after shortcut diagnostics go into the card.
    Returns the commit id of the card commit.
    """
    from datasets import Dataset, DatasetDict
    from huggingface_hub import CommitOperationAdd, DatasetCard, HfApi

    from ..provenance import PROVENANCE_COLUMNS

    if not isinstance(dataset, (Dataset, DatasetDict)):
        raise TypeError(f"push_augmented takes a Dataset or DatasetDict, got {type(dataset).__name__}.")
    for name, split in ({"train": dataset} if isinstance(dataset, Dataset) else dataset).items():
        missing = [c for c in PROVENANCE_COLUMNS if c not in split.column_names]
        if missing:
            raise ValueError(f"Split {name!r} lacks the provenance columns {missing}: push the output of a cfaug "
                             f"augmenter (dataset.map(augmenter, batched=True)).")
    if report is not None:
        check_report_matches(report, dataset)
    api = HfApi(token=token)
    card = dataset_card(dataset, repo_id, augmenter=augmenter, source=source, pretty_name=pretty_name,
                        license=license, language=language,
                        component_lines=component_lines(augmenter) if augmenter is not None else None,
                        report=report)
    with hub_errors("Pushing the augmented dataset", repo_id, token), _no_single_shard_notice():
        dataset.push_to_hub(repo_id, private=private, token=token,
                            commit_message=commit_message or "Upload augmented data")
        merged = merge_card(_existing_card(api, repo_id, "dataset", None, DatasetCard), card)
        ops = [CommitOperationAdd("README.md", str(merged).encode("utf-8"))]
        for name in (uploaded_plots(report) if report is not None else ()):  # the card links them under report/
            path = Path(report.files[name])
            ops.append(CommitOperationAdd(f"report/{path.name}", str(path)))
        if augmenter is not None:
            with tempfile.TemporaryDirectory(prefix="cfaug-push-") as tmp:
                augmenter.save_pretrained(Path(tmp) / "augmenter", copy_components=False, references_only=True)
                ops.append(CommitOperationAdd("augmenter/cfaug_augmenter.json",
                                              (Path(tmp) / "augmenter" / "cfaug_augmenter.json").read_bytes()))
        info = api.create_commit(repo_id, ops, repo_type="dataset", commit_message="Dataset card (cfaug-hf)")
    return info.oid


@contextlib.contextmanager
def _no_single_shard_notice() -> Iterator[None]:
    """``Dataset.push_to_hub`` warns "Setting num_proc from 1 back to 1" for every one-shard split even when no
    num_proc was asked for (datasets 4-5): that one message is hidden, only during the push."""
    from ..verbosity import hiding_records

    with hiding_records("datasets.arrow_dataset",
                        lambda record: not str(record.msg).startswith("Setting num_proc from 1 back to 1")):
        yield


def check_report_matches(report: Any, dataset: Any) -> None:
    """Refuse a report that describes other data than the ``train`` split being pushed (its row and
    counterfactual counts), so a card never contradicts itself."""
    from datasets import Dataset

    train = dataset if isinstance(dataset, Dataset) else dataset.get("train")
    want = report.counts
    if train is None:
        raise ValueError("The report describes a train split and the dataset pushed has none; leave the report out "
                         "or push the split it describes.")
    rows, counterfactuals = len(train), sum(bool(x) for x in train["cf_is_counterfactual"])
    if (want["rows_out"], want["counterfactuals"]) != (rows, counterfactuals):
        raise ValueError(f"The report describes other data: {want['rows_in']} rows in, {want['rows_out']} out "
                         f"({want['counterfactuals']} counterfactual), while the train split pushed has {rows} rows "
                         f"({counterfactuals} counterfactual). Make the report from the data you push (cfaug report "
                         f"ORIGINAL AUGMENTED --out DIR) or leave it out.")


def pull(repo_id: str, local_dir: str | os.PathLike, *, repo_type: str = "model", revision: str | None = None,
         token: Any = None, overwrite: bool = False) -> Path:
    """Download a repository into ``local_dir``, which appears only once the download is complete.

    ``local_dir`` may be new, empty, or an earlier pull of the same kind of object (then it is updated; files you
    added are kept). A non-empty folder holding anything else is refused unless ``overwrite=True``; no file of
    yours is deleted either way.
    """
    from .folders import read_manifest

    folder, _ = download_folder(repo_id, repo_type=repo_type, revision=revision, token=token)
    manifest = read_manifest(folder)
    kind = manifest.get("kind") if manifest else f"{repo_type} repository"
    with write_folder(local_dir, kind, overwrite=overwrite) as tmp:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
    return Path(local_dir)
