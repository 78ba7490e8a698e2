"""Reading the dataset a command names: a saved folder, a JSON/JSONL/CSV/TSV/Parquet file or a Hub dataset id, with
one-line errors naming the file."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from ..sharing.row_files import COMPRESSED, RowsFileError, file_format, read_rows
from .base import UsageError

__all__ = ["load_input", "load_local", "parquet_rows", "file_format", "DATA_FILES"]

#: The data files a command reads, as its help text names them.
DATA_FILES = "a .json/.jsonl/.csv/.tsv/.parquet file (the text formats may be .gz/.bz2/.xz/.zst-compressed)"


def load_input(args: argparse.Namespace, attr: str = "data") -> Any:
    """The dataset named by ``args.<attr>``, with the command's ``--split`` and ``--limit``."""
    return load_local(getattr(args, attr), split=getattr(args, "split", None), limit=getattr(args, "limit", None),
                      subset=getattr(args, "subset", None), revision=getattr(args, "revision", None))


#: A Hub dataset id: "name" or "owner/name" (a path that does not exist locally and has no file suffix).
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def load_local(path: str, *, split: str | None = None, limit: int | None = None, subset: str | None = None,
               revision: str | None = None) -> Any:
    """A local dataset file or saved folder, or a Hub dataset id, with one-line errors naming the file: no such
    file, an unknown suffix, a file that does not parse, or one with no rows (caught here for every format, before
    any output is written; ``datasets`` itself answers an empty JSONL file with a bare ``StopIteration``).
    ``split`` picks a split of a saved DatasetDict or a Hub dataset; ``limit`` keeps the first rows (of a Hub
    dataset, streamed: only those rows are read); ``subset`` and ``revision`` apply to Hub datasets only."""
    p = Path(path)
    hub = not p.exists() and bool(_HUB_ID.match(str(path))) and not (p.suffix.lower().lstrip(".") in _SUFFIXES
                                                                      or file_format(p))
    if not hub and (subset or revision):
        flag = "--subset" if subset else "--revision"
        raise UsageError(f"{flag}: {path} is a local file or folder; {flag} applies to a Hub dataset id.")
    if hub:
        return _from_hub(str(path), split, subset=subset, revision=revision, limit=limit)
    data = _read_dataset(path, split)
    if limit is not None and limit < data.num_rows:
        data = data.select(range(limit))
    return data


def _read_dataset(path: str, split: str | None) -> Any:
    from datasets import DatasetDict, load_dataset, load_from_disk

    p = Path(path)
    if split is not None and not p.is_dir():
        raise UsageError(f"--split {split}: {path} is a single file; --split applies to a saved DatasetDict folder "
                         f"or a Hub dataset.")
    if p.is_dir():
        try:
            state = json.loads((p / "state.json").read_text(encoding="utf-8")) if (p / "state.json").is_file() else {}
        except (ValueError, UnicodeDecodeError) as err:
            raise UsageError(f"{p / 'state.json'} is not valid JSON ({err}); the saved dataset is damaged.") from None
        if isinstance(state, dict) and state.get("_data_files") == []:  # datasets writes no file for 0 rows
            raise UsageError(f"{path}: no rows (a saved dataset with no data files).")
        try:
            data = load_from_disk(str(p))
            if isinstance(data, DatasetDict):
                data = _pick_split(data, split, path)
            elif split is not None:
                raise UsageError(f"--split {split}: {path} holds one dataset, not a DatasetDict with splits.")
        except UsageError:
            raise
        except FileNotFoundError:
            raise UsageError(f"{path}: not a dataset saved with save_to_disk (no dataset_info.json or state.json); "
                             f"expected a saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file.") from None
        except Exception as err:  # noqa: BLE001 - a damaged Arrow file or state: name the folder
            raise UsageError(f"{path}: the saved dataset cannot be read ({type(err).__name__}: "
                             f"{str(err).splitlines()[0][:200] if str(err) else ''}); save it again.") from None
        return _has_rows(data, path)
    suffix = file_format(p)
    builder = {"jsonl": "json", "json": "json", "csv": "csv", "tsv": "csv", "parquet": "parquet"}.get(suffix or "")
    if not p.exists():
        raise UsageError(f"{path}: no such file or folder.")
    if builder is None or not p.is_file():
        raise UsageError(f"{path}: expected a saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file "
                         f"(the text formats may be compressed: .gz, .bz2, .xz, .zst).")
    if builder == "parquet":
        if parquet_rows(p) == 0:
            raise UsageError(f"{path}: no rows (the Parquet file holds only its columns).")
    elif _is_blank(p, line_limit=None if suffix == "json" else max_line_bytes()):
        raise UsageError(f"{path}: no rows (the file is empty).")
    try:
        data = read_rows(p)
    except UsageError:
        raise
    except RowsFileError as err:
        raise UsageError(str(err)) from None
    except (Exception, StopIteration) as err:  # datasets wraps the parser's error (or none) in its own
        cause = err.__cause__ or err.__context__ or err
        text = str(cause).strip().splitlines()[0][:200] if str(cause).strip() else type(cause).__name__
        if "corresponds to no data" in str(err):
            raise UsageError(f"{path}: no rows (only a header line).") from None
        raise UsageError(f"{path}: cannot be read as {suffix.upper()}{' (' + p.suffix + ')' if p.suffix.lower().lstrip('.') in _COMPRESSED else ''} "
                         f"({type(cause).__name__}: {text}).") from None
    return _has_rows(data, path)


_SUFFIXES = ("json", "jsonl", "csv", "tsv", "parquet", "arrow", "txt")
_COMPRESSED = COMPRESSED


#: Longest line of a JSONL/CSV/TSV input, decompressed (``CFAUG_MAX_LINE_MB`` raises it): the parser holds a whole
#: line, several times over, in memory, so a 0.3 MB .jsonl.gz holding one 300 MB line took over 5 GB.
MAX_LINE_MB = 64


def max_line_bytes() -> int:
    import os

    value = os.environ.get("CFAUG_MAX_LINE_MB", "")
    try:
        mb = float(value) if value else MAX_LINE_MB
    except ValueError:
        raise UsageError(f"CFAUG_MAX_LINE_MB={value!r}: expected a number of megabytes.") from None
    if not mb > 0:
        raise UsageError(f"CFAUG_MAX_LINE_MB={value!r}: expected a positive number of megabytes.")
    return int(mb * 2**20)


def _is_blank(path: Path, line_limit: int | None = None) -> bool:
    """Whether a data file's content, decompressed, is empty or whitespace, refusing a line longer than
    ``line_limit`` bytes and bytes that are not UTF-8 (named by line). Streamed in chunks, so no check holds more
    than one chunk (zstd only where the zstandard package is installed, as `datasets` needs it for such a file
    anyway)."""
    import bz2
    import gzip
    import lzma

    kind = path.suffix.lower().lstrip(".")
    if kind == "zst":
        try:
            import zstandard
        except ImportError:
            raise UsageError(f"{path}: reading a .zst file needs the zstandard package (pip install zstandard), "
                             f"or decompress it first.") from None
    opener = {"gz": gzip.open, "bz2": bz2.open, "xz": lzma.open,
              "zst": lambda p, mode: zstandard.ZstdDecompressor().stream_reader(open(p, "rb"), closefd=True)
              }.get(kind, open)
    import codecs

    blank, run, lines = True, 0, 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with opener(path, "rb") as f:
            while chunk := f.read(1 << 20):
                blank = blank and not chunk.strip()
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as err:
                    line = lines + chunk.count(b"\n", 0, err.start) + 1
                    raise UsageError(f"{path}: line {line} is not valid UTF-8 (byte {chunk[err.start]:#04x}: "
                                     f"{err.reason}); save the file as UTF-8, or fix that line.") from None
                if line_limit is None:
                    lines += chunk.count(b"\n")
                    continue
                pieces = chunk.split(b"\n")
                longest = max(run + len(pieces[0]), max(map(len, pieces[1:-1]), default=0),
                              len(pieces[-1]) if len(pieces) > 1 else 0)
                if longest > line_limit:
                    raise UsageError(
                        f"{path}: a line near line {lines + len(pieces)} is longer than {line_limit // 2**20} MB "
                        f"once decompressed; rows that long would take many times that in memory. Split the file, "
                        f"or raise the limit with CFAUG_MAX_LINE_MB.")
                run = run + len(pieces[0]) if len(pieces) == 1 else len(pieces[-1])
                lines += len(pieces) - 1
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise UsageError(f"{path}: it ends inside a UTF-8 character (the last line is cut off or not UTF-8); "
                             f"save the file as UTF-8.") from None
        return blank
    except UsageError:
        raise
    except Exception as err:  # noqa: BLE001 - BadGzipFile, LZMAError, ZstdError, ...: a damaged file, named
        raise UsageError(f"{path}: not a readable .{kind} file ({type(err).__name__}: "
                         f"{str(err).splitlines()[0][:200] if str(err) else ''}).") from None


def _pick_split(splits: Any, split: str | None, path: str) -> Any:
    name = split or "train"
    if name not in splits:
        raise UsageError(f"--split {name}: {path} has the splits {sorted(splits)}; pick one with --split.")
    return splits[name]


def _from_hub(repo_id: str, split: str | None, *, subset: str | None = None, revision: str | None = None,
              limit: int | None = None) -> Any:
    """A Hub dataset through ``datasets.load_dataset`` (HF_ENDPOINT and HF_HUB_OFFLINE apply): its ``subset``
    (config name) at ``revision``; with ``limit``, streamed, so only the first rows are downloaded."""
    from datasets import Dataset, load_dataset

    try:
        if limit is None:
            data = load_dataset(repo_id, subset, split=split or "train", revision=revision)
        else:
            stream = load_dataset(repo_id, subset, split=split or "train", revision=revision, streaming=True)
            rows = list(stream.take(limit))
            data = Dataset.from_list(rows, features=stream.features) if rows else Dataset.from_list([])
    except ValueError as err:
        if "split" in str(err).lower():  # "Unknown split ..."
            raise UsageError(f"--split {split or 'train'}: {repo_id} has no such split ({str(err)[:200]}).") from None
        raise UsageError(f"{repo_id}: no such file or folder, and no Hub dataset of that name can be loaded "
                         f"({type(err).__name__}: {str(err).splitlines()[0][:200]}).") from None
    except Exception as err:  # noqa: BLE001 - offline, not found, no access: one line naming the id
        raise UsageError(f"{repo_id}: no such file or folder, and no Hub dataset of that name can be loaded "
                         f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}).") from None
    return _has_rows(data, repo_id)


def _has_rows(data: Any, path: str) -> Any:
    if hasattr(data, "num_rows") and not isinstance(data.num_rows, dict) and data.num_rows == 0:
        raise UsageError(f"{path}: no rows.")
    return data


def parquet_rows(path: str | Path) -> int:
    """Rows in a Parquet file or folder, from its metadata (nothing is read); a damaged file is a UsageError."""
    import pyarrow.dataset as pads

    try:
        return pads.dataset(str(path), format="parquet").count_rows()
    except Exception as err:  # noqa: BLE001 - pyarrow's errors have no common base beyond this
        raise UsageError(f"{path}: not a readable Parquet file or folder ({type(err).__name__}: "
                         f"{str(err).splitlines()[0][:200]}).") from None
