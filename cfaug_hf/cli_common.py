"""Helpers every ``cfaug`` command shares: the user-error type, reading a local dataset, checking an output folder,
and the task presets that name a dataset's columns."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["UsageError"]


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def _load_local(path: str) -> Any:
    from datasets import load_dataset, load_from_disk

    p = Path(path)
    if p.is_dir():
        return load_from_disk(str(p))
    suffix = p.suffix.lower().lstrip(".")
    builder = {"jsonl": "json", "json": "json", "csv": "csv", "tsv": "csv", "parquet": "parquet"}.get(suffix)
    if not p.exists():
        raise UsageError(f"{path}: no such file or folder.")
    if builder is None or not p.is_file():
        raise UsageError(f"{path}: expected a saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file.")
    kwargs = {"delimiter": "\t"} if suffix == "tsv" else {}
    return load_dataset(builder, data_files=str(p), split="train", **kwargs)


def _check_out(out: str, *inputs: str, kind: str | None = "dataset", overwrite: bool = False) -> None:
    """Refuse an output folder that is, contains or lies inside an input, or that holds files the library did not
    write (see :func:`cfaug_hf.hub.check_writable`), before anything is read or written."""
    from .hub import FolderNotEmptyError, check_writable

    o = Path(out).resolve()
    for given in inputs:
        i = Path(given).resolve()
        if o == i or i in o.parents or o in i.parents:
            raise UsageError(f"--out {out} would overwrite the input {given}; choose another folder.")
    if o.is_file():
        raise UsageError(f"--out {out} is a file; expected a folder.")
    if kind is None:
        if o.is_dir() and any(o.iterdir()) and not overwrite:
            raise UsageError(f"--out {out} is not empty; choose a new or empty folder so none of your files is "
                             f"replaced, or pass --overwrite.")
        return
    try:
        check_writable(o, kind, overwrite=overwrite)
    except FolderNotEmptyError as err:
        raise UsageError(f"--out {err}") from None


#: Task presets of ``cfaug augment``: the factory's column parameters in order, and its label parameter.
_AUGMENT_PRESETS = {"fact-verification": (("claim", "evidence"), "label"), "nli": (("premise", "hypothesis"), "label"),
                    "sentiment": (("text",), "label"), "token-classification": (("tokens",), "tags"),
                    "relation-extraction": (("text",), "label")}


def _augment_schema(args: argparse.Namespace) -> dict[str, Any] | None:
    """The schema a recipe or method gets from the column options; None leaves it to the recipe or the method."""
    if args.task is None:
        if args.columns or args.label_column or args.id_column or args.nei:
            raise UsageError("--columns, --label-column, --id-column and --nei need --task (the preset they "
                             f"modify): one of {sorted(_AUGMENT_PRESETS)}.")
        return None
    names, label = _AUGMENT_PRESETS[args.task]
    columns = args.columns.split(",") if args.columns else list(names)
    if len(columns) != len(names):
        raise UsageError(f"--columns for {args.task} names {len(names)} column(s) ({','.join(names)}), got "
                         f"{args.columns!r}.")
    schema: dict[str, Any] = {"preset": args.task, **dict(zip(names, columns)), "id_column": args.id_column}
    if args.label_column:
        schema[label] = args.label_column
    if args.nei:
        if args.task != "fact-verification":
            raise UsageError("--nei is for --task fact-verification.")
        schema["nei"] = True
    return schema
