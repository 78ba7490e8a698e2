"""Saved augmenters and recipes written by the 0.1.0 release load in this one and give the same rows
(`tests/fixtures/make_release_fixtures.py` wrote them with that release's code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.make_release_fixtures import CLAIMS, NER, rows

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "release_0_1_0"
EXPECTED = json.loads((FIXTURES / "expected_rows.json").read_text())


@pytest.mark.parametrize("name, data", [("crossaug", CLAIMS), ("cfgen", NER)])
def test_a_saved_augmenter_of_the_release_loads_and_gives_its_rows(name, data, tmp_path):
    import shutil

    from cfaug_hf import Augmenter

    folder = shutil.copytree(FIXTURES / name, tmp_path / name)  # loading must not need to write into it
    augmenter = Augmenter.from_pretrained(folder)
    assert augmenter.method == name
    assert json.loads(json.dumps(rows(augmenter.augment(data)), default=str)) == EXPECTED[name]


def test_a_recipe_of_the_release_runs_on_the_command_line(tmp_path, capsys):
    import shutil

    from datasets import load_from_disk

    from cfaug_hf.cli import main

    shutil.copytree(FIXTURES, tmp_path / "release")
    data = tmp_path / "claims.jsonl"
    CLAIMS.to_json(data)
    assert main(["augment", str(data), "--recipe", str(tmp_path / "release" / "crossaug_recipe.yaml"), "--out",
                 str(tmp_path / "out")]) == 0
    got = json.loads(json.dumps(rows(load_from_disk(str(tmp_path / "out" / "data"))), default=str))
    assert got == EXPECTED["crossaug_recipe"]
