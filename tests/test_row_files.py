"""Output files read back as written (issue 80, item 5): every ``--format`` through the readers people use.

`--format csv` wrote a text holding a lone carriage return unquoted, and Python's csv, pandas and ``load_dataset``
all read 14 rows back from the 12 written; ``cfaug report`` on that CSV iterated the characters of its JSON-text
``cf_outcome`` cells. The family: every format, texts with CR, LF, CRLF, tabs, quotes, commas, NUL, 1 MB lines,
non-Latin scripts, and strings that readers like to guess ("", "NaN", "1", "True", "#"); every reader; and every
command that reads data, on each format the library writes.
"""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest
from datasets import Dataset, Features, List, Value, load_dataset
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cfaug_hf.sharing.row_files import FORMATS, features_path, read_rows, write_rows

NASTY = ["\r", "\n", "\r\n", "\t", '"', ",", "\x00", "ü", "中文", "עברית", "😀", " ", "#", "'", ";", "\\", "\u2028"]
GUESSED = ["", "NaN", "null", "NA", "1", "1.5", "True", "  "]
texts = st.one_of(st.sampled_from(GUESSED),
                  st.lists(st.one_of(st.sampled_from(NASTY), st.text(st.characters(exclude_categories=("Cs",)),
                                                                     max_size=8)), max_size=8).map("".join))


def _dataset(values: list[str]) -> Dataset:
    features = Features({"text": Value("string"), "label": Value("string"), "cf_is_counterfactual": Value("bool"),
                         "n": Value("int64"), "cf_outcome": List(Value("string")), "evidence": List(Value("string"))})
    return Dataset.from_dict({"text": values, "label": [v[:3] for v in values],
                              "cf_is_counterfactual": [i % 2 == 0 for i in range(len(values))],
                              "n": list(range(len(values))), "cf_outcome": [[v, "produced:x"] for v in values],
                              "evidence": [[v] * (i % 3) for i, v in enumerate(values)]}, features=features)


def _third_party(path, fmt: str) -> list[list]:
    """The text column as each reader of the file alone gives it back."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return [pq.read_table(path).column("text").to_pylist(), pd.read_parquet(path)["text"].tolist(),
                Dataset.from_parquet(str(path))["text"]]
    if fmt == "jsonl":
        return [load_dataset("json", data_files=str(path), split="train")["text"],
                pd.read_json(path, lines=True, dtype=False)["text"].tolist()]
    csv.field_size_limit(1 << 30)
    with open(path, newline="", encoding="utf-8") as f:
        by_csv = [row["text"] for row in csv.DictReader(f)]
    return [by_csv, pd.read_csv(path, keep_default_na=False, dtype=str)["text"].tolist(),
            load_dataset("csv", data_files=str(path), split="train", keep_default_na=False,
                         features=Features({"text": Value("string"), "label": Value("string"),
                                            "cf_is_counterfactual": Value("bool"), "n": Value("int64"),
                                            "cf_outcome": Value("string"), "evidence": Value("string")}))["text"]]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=st.lists(texts, min_size=1, max_size=12))
@example(values=["Paris is\rin France.", "a" * (1 << 20), "", "NaN"])
def test_every_format_reads_back_row_for_row(values, tmp_path_factory):
    rows = _dataset(values)
    for fmt in FORMATS[1:]:
        folder = tmp_path_factory.mktemp(fmt)
        path = write_rows(rows, folder, fmt)
        back = read_rows(path)
        assert back.features == rows.features, fmt
        assert back.to_list() == rows.to_list(), fmt
        for got in _third_party(path, fmt):
            assert list(got) == values, fmt


def test_a_csv_without_its_features_file_still_reads_provenance_lists(tmp_path):
    rows = _dataset(["a\rb", "c"])
    path = write_rows(rows, tmp_path, "csv")
    features_path(path).unlink()
    back = read_rows(path)
    assert back["cf_outcome"] == rows["cf_outcome"] and back["text"] == rows["text"]


def test_a_damaged_features_file_is_named(tmp_path):
    path = write_rows(_dataset(["a"]), tmp_path, "csv")
    features_path(path).write_text("{not json")
    with pytest.raises(ValueError, match=r"data.features.json does not hold the features of data.csv"):
        read_rows(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_cfaug_report_reads_each_format_as_the_saved_dataset(fmt, tmp_path):
    """``cfaug report`` on the file ``--format`` wrote gives the report it gives on the saved dataset (it counted
    the characters of JSON-text cells: "Most common skips: e (175)")."""
    from cfaug_hf import TaskSchema
    from cfaug_hf.cli import main
    from cfaug_hf.testing import NegateAugmenter

    original = Dataset.from_dict({"text": ["the film was good", "a film", "it is bad\rreally"] * 2,
                                  "label": ["positive", "positive", "negative"] * 2})
    original.to_json(tmp_path / "orig.jsonl")
    augmented = original.map(NegateAugmenter(TaskSchema.sentiment()), batched=True)
    saved = write_rows(augmented, tmp_path / "saved", "dataset") if (tmp_path / "saved").mkdir() is None else None
    written = write_rows(augmented, tmp_path / fmt, fmt) if (tmp_path / fmt).mkdir() is None else None
    reports = {}
    for name, data in (("saved", saved), (fmt, written)):
        assert main(["report", str(tmp_path / "orig.jsonl"), str(data), "--task", "sentiment", "--no-models", "--out",
                     str(tmp_path / f"r-{name}")]) == 0
        reports[name] = json.loads((tmp_path / f"r-{name}" / "report.json").read_text())
        reports[name].pop("files")  # where each was written
    assert reports["saved"] == reports[fmt]
    assert "skipped:no_verb" in json.dumps(reports[fmt]) and "e (" not in json.dumps(reports[fmt]["counts"])


def test_a_lone_surrogate_is_refused_at_the_edge_naming_the_column():
    """The one-string call handed a lone surrogate to pyarrow, which raised UnicodeEncodeError."""
    from cfaug_hf import SchemaError, TaskSchema
    from cfaug_hf.testing import NegateAugmenter

    with pytest.raises(SchemaError, match=r"Column 'text' at row 0: .*lone surrogate"):
        NegateAugmenter(TaskSchema.sentiment()).counterfactuals("the film was \ud800 good", "positive")
