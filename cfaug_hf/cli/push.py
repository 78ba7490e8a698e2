"""``cfaug push``: a saved component, augmenter or augmented dataset to the Hub, with its card."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .base import Command, UsageError, add_token_option


class PushCommand(Command):
    name = "push"
    summary = "Push a saved component, augmenter or augmented dataset to the Hub."
    description = ("Push a folder written by save_pretrained (generator, checker, rationale selector, augmenter) or "
                   "by Dataset.save_to_disk (augmented data) to the Hub with a model or dataset card, in one "
                   "commit.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        parser.add_argument("folder", help="a folder written by save_pretrained or Dataset.save_to_disk, or the "
                                           "data file of cfaug augment --format jsonl|csv|parquet")
        parser.add_argument("repo_id", help="namespace/name on the Hub")
        parser.add_argument("--private", action="store_true", default=None, help="create the repository as private")
        add_token_option(parser)
        parser.add_argument("--augmenter", help="datasets: folder or repo of the augmenter that made the data")
        parser.add_argument("--source", help="datasets: Hub id of the source dataset, as id or id@revision")
        parser.add_argument("--license", help="datasets: licence identifier for the card (e.g. cc-by-sa-3.0; "
                                              "default: the source dataset's where it declares one, else unknown)")
        parser.add_argument("--report", help="datasets: a folder written by `cfaug report --out` whose counts, "
                                             "quality and shortcut diagnostics go into the dataset card")

    def run(self, args: argparse.Namespace) -> None:
        from .. import registry
        from ..augmenter import AUGMENTER_CONFIG, Augmenter

        folder = Path(args.folder)
        if folder.is_file() and folder.suffix.lower() in DATA_FILES:  # cfaug augment --format jsonl|csv|parquet
            self._push_dataset(args, folder)
            return
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder (expected a folder written by save_pretrained or "
                             f"save_to_disk).")
        for kind in registry.available()["components"]:
            cls = registry.component_class(kind)
            if (folder / cls.config_name).is_file():
                sha = cls.from_pretrained(folder).push_to_hub(args.repo_id, private=args.private, token=args.token)
                print(f"Pushed {cls.__name__} to {args.repo_id} (commit {sha}).")
                return
        if (folder / AUGMENTER_CONFIG).is_file():
            sha = Augmenter.from_pretrained(folder).push_to_hub(args.repo_id, private=args.private, token=args.token)
            print(f"Pushed augmenter to {args.repo_id} (commit {sha}).")
            return
        if any((folder / f).is_file() for f in ("dataset_info.json", "dataset_dict.json", "state.json")):
            self._push_dataset(args, folder)
            return
        found = sorted(p.name for p in folder.iterdir())[:10]
        raise UsageError(f"{folder} is not a saved cfaug component (cfaug_generator.json, cfaug_checker.json), "
                         f"augmenter (cfaug_augmenter.json) or dataset (save_to_disk); it holds {json.dumps(found)}.")

    @staticmethod
    def _push_dataset(args: argparse.Namespace, folder: Path) -> None:
        from ..augmenter import AUGMENTER_CONFIG, Augmenter

        dataset = read_rows(folder)
        report = _report(args.report, dataset) if args.report else None  # checked before any model loads
        augmenter = Augmenter.from_pretrained(args.augmenter) if args.augmenter else None
        if augmenter is None and (folder / AUGMENTER_CONFIG).is_file():
            augmenter = Augmenter.from_pretrained(folder)
        _push(dataset, args.repo_id, args, augmenter=augmenter, source=args.source, report=report)


def read_rows(path: Path) -> Any:
    """Augmented rows as ``cfaug augment`` writes them: a saved dataset folder, a folder of Parquet files (Ray) or
    one data file (``--format jsonl|csv|parquet``)."""
    from datasets import load_from_disk

    if path.is_dir():
        shards = sorted(path.glob("*.parquet"))
        return _from_parquet([str(p) for p in shards]) if shards else load_from_disk(str(path))
    return DATA_FILES[path.suffix.lower()](str(path))


def push_rows(args: argparse.Namespace, path: Path, *, augmenter: Any, source: Any) -> None:
    """``cfaug augment --push-to-hub REPO``: the rows just written to ``path``, with the augmenter that made them."""
    _push(read_rows(path), args.push_to_hub, args, augmenter=augmenter, source=source, report=None)


def _push(dataset: Any, repo_id: str, args: argparse.Namespace, **card: Any) -> None:
    from huggingface_hub import constants

    from ..sharing import push_augmented

    sha = push_augmented(dataset, repo_id, private=args.private, token=args.token, license=args.license, **card)
    splits = dataset.values() if hasattr(dataset, "values") else [dataset]  # a DatasetDict: all its splits
    rows = sum(len(split) for split in splits)
    made = sum(sum(split["cf_is_counterfactual"]) for split in splits)  # push_augmented checked the column
    counts = f"{rows} rows, {made} counterfactual"
    print(f"Pushed the augmented dataset ({counts}) to {constants.ENDPOINT}/datasets/{repo_id} (card commit {sha}).")


def _read(path: str) -> Any:
    """A data file of ``cfaug augment --format``, read back with its types (`cfaug_hf.sharing.row_files`)."""
    from ..sharing.row_files import read_rows

    return read_rows(path)


#: Data files `cfaug push` takes besides a saved dataset folder, by suffix, and how each is read.
DATA_FILES: dict[str, Any] = {".jsonl": _read, ".json": _read, ".parquet": _read, ".csv": _read}


def _report(path: str, dataset: Any) -> Any:
    """The report of ``cfaug report --out PATH``, checked to describe ``dataset``."""
    from ..report import AugmentationReport
    from ..sharing.push import check_report_matches

    try:
        report = AugmentationReport.load(path)
    except (FileNotFoundError, ValueError) as err:
        raise UsageError(f"--report: {err}") from None
    try:
        check_report_matches(report, dataset)
    except ValueError as err:
        raise UsageError(f"--report {path}: {err}") from None
    return report
