import pytest
from datasets import ClassLabel, Dataset, Features, List, Value

from cfaug_hf import SchemaError, TaskSchema


def test_presets():
    fv = TaskSchema.fact_verification()
    assert fv.text_columns == ("claim", "evidence") and fv.label_names == ("SUPPORTS", "REFUTES")
    assert TaskSchema.fact_verification(nei=True).label_names[-1] == "NOT ENOUGH INFO"
    assert TaskSchema.nli().text_columns == ("premise", "hypothesis")
    assert TaskSchema.sentiment().edit_columns == ("text",)


def test_labels_by_name_id_and_case():
    s = TaskSchema.fact_verification()
    assert s.label_id("supports") == 0 and s.label_id(1) == 1 and s.label_name("REFUTES") == "REFUTES"
    assert s.encode_label_like("REFUTES", 0) == 1
    assert s.encode_label_like("REFUTES", "SUPPORTS") == "REFUTES"
    with pytest.raises(SchemaError, match=r"Column 'label' at row 7: unknown label 'MAYBE'"):
        s.label_id("MAYBE", row=7)
    with pytest.raises(SchemaError, match="id in 0..1"):
        s.label_id(2)
    with pytest.raises(SchemaError):
        s.label_id(True)


def test_invalid_schema_definitions():
    with pytest.raises(SchemaError, match="two or more distinct"):
        TaskSchema(("t",), ("t",), "label", ("a", "a"))
    with pytest.raises(SchemaError, match="not one of text_columns"):
        TaskSchema(("t",), ("x",), "label", ("a", "b"))
    with pytest.raises(SchemaError, match="also a text column"):
        TaskSchema(("t", "label"), ("t",), "label", ("a", "b"))


def test_validate_features_names_the_problem():
    s = TaskSchema.fact_verification()
    feats = Features({"claim": Value("string"), "evidences": Value("string"), "label": Value("string")})
    with pytest.raises(SchemaError, match=r"Column 'evidence' is missing.*Did you mean 'evidences'"):
        s.validate_features(feats)
    with pytest.raises(SchemaError, match=r"Column 'claim' has type .*expected string"):
        s.validate_features(Features({"claim": Value("int64"), "evidence": Value("string"), "label": Value("string")}))
    with pytest.raises(SchemaError, match="ClassLabel with names"):
        s.validate_features(Features({"claim": Value("string"), "evidence": Value("string"),
                                      "label": ClassLabel(names=["REFUTES", "SUPPORTS"])}))
    # list evidence is accepted, a list claim is not
    s.validate_features(Features({"claim": Value("string"), "evidence": List(Value("string")),
                                  "label": ClassLabel(names=["supports", "refutes"])}))
    with pytest.raises(SchemaError, match="holds lists of strings"):
        s.validate_features(Features({"claim": List(Value("string")), "evidence": Value("string"),
                                      "label": Value("string")}))
    with pytest.raises(SchemaError, match="expected label names"):
        s.validate_features(Features({"claim": Value("string"), "evidence": Value("string"),
                                      "label": Value("float32")}))


@pytest.mark.parametrize("column,value,expected", [
    ("claim", None, r"Column 'claim' at row 11: got None; expected a non-empty string"),
    ("claim", "   ", r"Column 'claim' at row 11: got '   '"),
    ("evidence", ["ok", ""], r"Column 'evidence' at row 11: got \['ok', ''\]; expected a non-empty string or"),
    ("evidence", 3, r"Column 'evidence' at row 11: got 3"),
    ("label", "MAYBE", r"Column 'label' at row 11: unknown label 'MAYBE'"),
])
def test_validate_batch_names_column_and_row(column, value, expected):
    s = TaskSchema.fact_verification()
    batch = {"claim": ["a", "b"], "evidence": ["e", ["e1", "e2"]], "label": ["SUPPORTS", 1]}
    s.validate_batch(batch, [10, 11])
    batch[column] = [batch[column][0], value]
    with pytest.raises(SchemaError, match=expected):
        s.validate_batch(batch, [10, 11])


def test_validate_batch_without_indices_gives_batch_position():
    s = TaskSchema.sentiment()
    with pytest.raises(SchemaError, match="row 1 of the batch"):
        s.validate_batch({"text": ["fine", ""], "label": ["positive", "negative"]})


def test_round_trip_dict():
    s = TaskSchema.nli(label_names=("entailment", "contradiction"))
    assert TaskSchema.from_dict(s.to_dict()) == s
    with pytest.raises(SchemaError, match="Unknown TaskSchema fields"):
        TaskSchema.from_dict({**s.to_dict(), "colour": "red"})


def test_validate_real_dataset_features():
    ds = Dataset.from_dict({"text": ["a"], "label": [1]},
                           features=Features({"text": Value("string"),
                                              "label": ClassLabel(names=["negative", "positive"])}))
    TaskSchema.sentiment().validate_features(ds.features)


# A JSON file whose rows give one column values of different types is read by `datasets` as a `Json` column; each
# cell is then checked on its own instead of the column being refused for its type.
MIXED = {
    "evidence": (["Ada was in Paris in 1900."], "Bo was in Rome in 1900."),  # a list in one row, a string in another
    "label": (0, "SUPPORTS"),  # an id in one row, a name in another
    "id": (1, "x"),
}


def _json_rows(tmp_path, rows):
    import json

    from datasets import load_dataset

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return load_dataset("json", data_files=str(path), split="train")


@pytest.mark.parametrize("column", sorted(MIXED))
def test_a_column_whose_rows_mix_valid_forms_is_accepted_and_kept(tmp_path, column):
    from cfaug_hf.testing import NegateAugmenter

    rows = [{"id": "a", "claim": "Ada was in Paris.", "evidence": ["Ada was in Paris in 1900."], "label": "SUPPORTS"},
            {"id": "b", "claim": "Bo was in Rome.", "evidence": ["Bo was in Rome in 1900."], "label": "SUPPORTS"}]
    for row, value in zip(rows, MIXED[column]):
        row[column] = value
    data = _json_rows(tmp_path, rows)
    assert type(data.features[column]).__name__ == "Json"
    schema = TaskSchema.fact_verification(id_column="id")
    schema.validate_features(data.features)
    out = data.map(NegateAugmenter(schema), batched=True, remove_columns=data.column_names)
    assert out["claim"] == ["Ada was in Paris.", "Ada was not in Paris.", "Bo was in Rome.", "Bo was not in Rome."]
    assert out[column][0] == MIXED[column][0] and out[column][2] == MIXED[column][1]
    assert [schema.label_name(v) for v in out["label"]] == ["SUPPORTS", "REFUTES"] * 2


@pytest.mark.parametrize("column, bad, message", [
    ("evidence", 5, r"Column 'evidence' at row 1: got 5; expected a non-empty string or a non-empty list"),
    ("evidence", [""], r"Column 'evidence' at row 1: got \[''\]"),
    ("claim", ["Bo was in Rome."], r"Column 'claim' at row 1: got \['Bo was in Rome.'\]; expected a non-empty string\."),
    ("label", "MAYBE", r"Column 'label' at row 1: unknown label 'MAYBE'"),
    ("label", 7, r"Column 'label' at row 1: unknown label 7"),
])
def test_a_mixed_column_names_the_row_whose_cell_is_wrong(tmp_path, column, bad, message):
    from cfaug_hf.testing import NegateAugmenter

    rows = [{"claim": "Ada was in Paris.", "evidence": "Ada was in Paris in 1900.", "label": 0},
            {"claim": "Bo was in Rome.", "evidence": ["Bo was in Rome in 1900."], "label": "SUPPORTS"}]
    rows[1][column] = bad
    data = _json_rows(tmp_path, rows)
    with pytest.raises(SchemaError, match=message):
        data.map(NegateAugmenter(TaskSchema.fact_verification()), batched=True, with_indices=True,
                 remove_columns=data.column_names)
