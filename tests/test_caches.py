"""The library's caches heal: a damaged entry is made again once, with a warning that names its folder.

The caches the library writes and reads back: the safetensors copy of a GGUF model (``pretrained.local_copy``), the
CTranslate2 conversion of a generator (tests/test_ct2_backend.py runs the same damages on a real conversion) and
the LLM response cache (tests/test_llm_http.py). The damages tried on each: a file cut short, a file gone, a stray
folder or file at the key (a conversion that died before its marker), a damaged marker.
"""

from __future__ import annotations

import json
import shutil

import pytest

from cfaug_hf import pretrained


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """A GGUF reference whose conversion writes two small files (counted), in a cache of its own."""
    monkeypatch.setenv("CFAUG_HF_CACHE", str(tmp_path / "cache"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.gguf").write_bytes(b"gguf bytes")
    calls = []

    def convert(ref, source, target):
        calls.append(target)
        tmp = target.parent / (".t" + target.name)
        tmp.mkdir(parents=True)
        (tmp / "model.safetensors").write_bytes(b"w" * 100)
        (tmp / "config.json").write_text("{}")
        (tmp / pretrained._CONVERTED_MARKER).write_text(json.dumps({"files": pretrained.file_sizes(tmp)}))
        tmp.rename(target)

    monkeypatch.setattr(pretrained, "_convert_gguf", convert)
    ref = pretrained.ResolvedModel("org/model", str(tmp_path / "src"), {"gguf_file": "m.gguf"})
    return ref, calls


@pytest.mark.parametrize("damage", ["cut", "gone", "stray-folder", "stray-file", "bad-marker"])
def test_a_damaged_gguf_copy_is_converted_again(fake_gguf, damage, caplog):
    ref, calls = fake_gguf
    target = pretrained.local_copy(ref).path
    assert len(calls) == 1 and pretrained.local_copy(ref).path == target and len(calls) == 1  # cached
    from pathlib import Path

    target = Path(target)
    if damage == "cut":
        (target / "model.safetensors").write_bytes(b"w" * 10)
    elif damage == "gone":
        (target / "config.json").unlink()
    elif damage == "stray-folder":
        shutil.rmtree(target)
        (target / "partial").mkdir(parents=True)
    elif damage == "stray-file":
        shutil.rmtree(target)
        target.write_text("x")
    else:
        (target / pretrained._CONVERTED_MARKER).write_text("{oops")
    caplog.set_level("WARNING")
    assert pretrained.local_copy(ref).path == str(target) and len(calls) == 2
    assert (target / "model.safetensors").stat().st_size == 100
    assert str(target) in caplog.text and "converting it again" in caplog.text


def test_a_marker_without_sizes_from_an_earlier_release_is_trusted(fake_gguf):
    ref, calls = fake_gguf
    from pathlib import Path

    target = Path(pretrained.local_copy(ref).path)
    (target / pretrained._CONVERTED_MARKER).write_text(json.dumps({"source": "x"}))
    assert pretrained.cache_problem(target, pretrained._CONVERTED_MARKER) is None
