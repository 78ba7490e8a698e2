"""Rows written to one file (``cfaug augment --format jsonl|csv|parquet``) and read back as they were written.

A saved dataset folder keeps every type; one file of rows does not by itself: CSV has no lists, and the readers
people use guess types (pandas reads ``""`` and ``"NaN"`` as missing, ``"1"`` as a number). So beside a JSONL or CSV
file the library writes ``NAME.features.json`` (the columns' ``datasets`` features), CSV cells that are not plain
values are written as JSON text, and every string cell is quoted (a lone carriage return inside a text is then part
of the cell, not a line break, for Python's csv, pandas and ``datasets`` alike). `read_rows`, which every ``cfaug``
command reading data goes through, gives back the same rows with the same types; so do these, with the file alone:

* Parquet: ``datasets.Dataset.from_parquet``, ``pyarrow.parquet.read_table``, ``pandas.read_parquet``;
* JSONL: ``datasets.load_dataset("json", ...)``, ``pandas.read_json(path, lines=True, dtype=False)``;
* CSV: ``pandas.read_csv(path, keep_default_na=False, dtype=str)``, ``datasets.load_dataset("csv", ...,
  keep_default_na=False)`` and Python's ``csv`` module on a file opened with ``newline=""`` (with
  ``csv.field_size_limit`` raised for cells over 128 KB); list cells stay JSON text there.

Examples:
    >>> import tempfile
    >>> from datasets import Dataset
    >>> rows = Dataset.from_dict({"text": ["Paris is\\rin France", ""], "cf_outcome": [["produced:x"], []]})
    >>> path = write_rows(rows, tempfile.mkdtemp(), "csv")
    >>> read_rows(path).to_list() == rows.to_list()
    True
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["RowsFileError", "FORMATS", "write_rows", "read_rows", "features_path", "decode_json_columns", "file_format"]

#: ``--format`` values: a saved dataset folder, or one file of rows.
FORMATS = ("dataset", "jsonl", "csv", "parquet")


class RowsFileError(ValueError):
    """A rows file the library wrote cannot be read back as written (its features file is damaged, a list cell is
    not the JSON text the library writes); the message names the file."""


def features_path(path: str | os.PathLike) -> Path:
    """Where the features of the rows file ``path`` are written: ``data.csv`` -> ``data.features.json``."""
    path = Path(path)
    return path.with_name(path.name.split(".")[0] + ".features.json")


def _json_columns(features: Any) -> list[str]:
    from datasets import Value

    return [name for name, feature in features.items() if not isinstance(feature, Value)]


def write_rows(dataset: Any, folder: str | os.PathLike, fmt: str) -> Path:
    """The rows of ``dataset`` in ``folder`` as ``data/`` (``save_to_disk``) or ``data.jsonl|csv|parquet`` (with
    ``data.features.json`` beside a JSONL or CSV file); returns the path written."""
    from datasets import Features, Value

    from .folders import save_dataset

    folder = Path(folder)
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}.")
    if fmt == "dataset":
        return save_dataset(dataset, folder / "data")
    path = folder / f"data.{fmt}"
    if fmt == "parquet":  # datasets keeps the features in the file's own schema metadata
        dataset.to_parquet(str(path))
        return path
    features_path(path).write_text(json.dumps(dataset.features.to_dict(), indent=2, ensure_ascii=False),
                                   encoding="utf-8")
    if fmt == "jsonl":
        dataset.to_json(str(path), lines=True, force_ascii=False)
        return path
    lists = _json_columns(dataset.features)
    if lists:
        features = Features({c: Value("string") if c in lists else f for c, f in dataset.features.items()})
        dataset = dataset.map(lambda b: {c: [json.dumps(v, ensure_ascii=False) for v in b[c]] for c in lists},
                              batched=True, features=features, desc="list cells as JSON text")
    # Every string quoted: a cell holding "\r" (or a leading "#", or "1") reads back as the text it is.
    dataset.to_csv(str(path), index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return path


def _written_features(path: Path) -> Any:
    """The features the library wrote beside ``path``, or None (a file the library did not write)."""
    from datasets import Features

    sidecar = features_path(path)
    if not sidecar.is_file():
        return None
    try:
        return Features.from_dict(json.loads(sidecar.read_text(encoding="utf-8")))
    except (ValueError, TypeError, KeyError) as err:
        raise RowsFileError(f"{sidecar} does not hold the features of {path.name} ({type(err).__name__}: {err}); "
                         f"delete it to read {path.name} as a plain file.") from None


def decode_json_columns(dataset: Any, columns: list[str], where: str) -> Any:
    """``dataset`` with the JSON text of ``columns`` (as a CSV written by `write_rows` holds lists) decoded."""
    if not columns:
        return dataset

    def decode(batch: dict[str, list]) -> dict[str, list]:
        out = {}
        for c in columns:
            values = []
            for i, v in enumerate(batch[c]):
                try:
                    values.append(json.loads(v) if isinstance(v, str) else v)
                except ValueError:
                    raise RowsFileError(f"{where}: column {c!r} holds {v[:60]!r}, which is not the JSON text the "
                                     f"library writes for a list cell.") from None
            out[c] = values
        return out

    return dataset.map(decode, batched=True, desc="JSON text cells as lists")


def read_rows(path: str | os.PathLike, **kwargs: Any) -> Any:
    """The rows of a JSONL, CSV or Parquet file as a ``datasets.Dataset``; a file `write_rows` wrote (its features
    file beside it) comes back with the types it was written with. ``kwargs`` go to ``load_dataset``."""
    from datasets import Features, Value, load_dataset

    from ..provenance import provenance_features

    path = Path(path)
    fmt = file_format(path)
    builder = {"jsonl": "json", "json": "json", "csv": "csv", "tsv": "csv", "parquet": "parquet"}.get(fmt or "")
    if builder is None:
        raise ValueError(f"{path}: expected a .jsonl, .json, .csv, .tsv or .parquet file.")
    features = _written_features(path) if builder != "parquet" else None
    if builder == "csv":
        if fmt == "tsv":
            kwargs.setdefault("delimiter", "\t")
        if features is not None or _holds_provenance(path, kwargs.get("delimiter", ",")):
            kwargs.setdefault("keep_default_na", False)  # the library's rows: "" and "NaN" are texts
    if features is None or builder == "json":
        data = load_dataset(builder, data_files=str(path), split="train", features=features, **kwargs)
    else:
        lists = _json_columns(features)
        as_text = Features({c: Value("string") if c in lists else f for c, f in features.items()})
        data = load_dataset(builder, data_files=str(path), split="train", features=as_text, **kwargs)
        data = decode_json_columns(data, lists, str(path)).cast(features)
    if features is None and builder == "csv":
        # A CSV of the library's rows whose features file was left behind: its provenance lists are JSON text.
        known = {c: f for c, f in provenance_features().items() if not isinstance(f, Value)}
        texts = [c for c in known if c in data.column_names and data.features[c] in (Value("string"),
                                                                                    Value("large_string"))]
        if texts:
            data = decode_json_columns(data, texts, str(path))
            data = data.cast(Features({**data.features, **{c: known[c] for c in texts}}))
    return data


def _holds_provenance(path: Path, delimiter: str) -> bool:
    """Whether an uncompressed CSV's header names the provenance columns (rows the library wrote)."""
    if path.suffix.lower() not in (".csv", ".tsv"):
        return False
    try:
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f, delimiter=delimiter), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return "cf_is_counterfactual" in header


#: Compressions `datasets` reads a JSON/CSV file through (by the file's last suffix).
COMPRESSED = ("gz", "bz2", "xz", "zst")


def file_format(path: str | os.PathLike) -> str | None:
    """A data file's format by its name: json, jsonl, csv, tsv or parquet (a text format may carry a compression
    suffix: ``claims.jsonl.gz``), or None for any other name."""
    suffixes = [s.lower().lstrip(".") for s in Path(path).suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in COMPRESSED and suffixes[-2] in ("json", "jsonl", "csv", "tsv"):
        return suffixes[-2]
    last = suffixes[-1] if suffixes else ""
    return last if last in ("json", "jsonl", "csv", "tsv", "parquet") else None
